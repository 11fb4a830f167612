#include "policy.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

struct egress_policy {
    atomic_int refs;
    bool default_allow;
    char (*allow_domains)[NAME_MAX_LEN + 1];
    size_t n_allow_domains;
    char (*deny_domains)[NAME_MAX_LEN + 1];
    size_t n_deny_domains;
    struct cidr *allow_cidrs;
    size_t n_allow_cidrs;
    struct cidr *deny_cidrs;
    size_t n_deny_cidrs;
    uint16_t *allow_ports;
    size_t n_allow_ports;
    uint16_t *deny_ports;
    size_t n_deny_ports;
    bool allow_ech;
    bool inspect_tls;
};

static void policy_free(struct egress_policy *p)
{
    free(p->allow_domains);
    free(p->deny_domains);
    free(p->allow_cidrs);
    free(p->deny_cidrs);
    free(p->allow_ports);
    free(p->deny_ports);
    free(p);
}

/* An array for n rules; none is needed for n == 0. */
static int rules_alloc(size_t n, size_t size, void **out, char *err, size_t errlen)
{
    if (n == 0)
        return 0;
    *out = calloc(n, size);
    if (!*out) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int copy_domains(char *const *in, size_t n, const char *field,
                        char (**out)[NAME_MAX_LEN + 1], char *err, size_t errlen)
{
    if (rules_alloc(n, sizeof(**out), (void **)out, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (name_pattern_normalize(in[i], (*out)[i]) < 0) {
            snprintf(err, errlen, "policy.%s[%zu]: not a domain or *.domain: \"%.300s\"", field, i,
                     in[i]);
            return -1;
        }
    }
    return 0;
}

static int copy_cidrs(char *const *in, size_t n, const char *field, struct cidr **out, char *err,
                      size_t errlen)
{
    if (rules_alloc(n, sizeof(**out), (void **)out, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (cidr_parse(in[i], &(*out)[i]) < 0) {
            snprintf(err, errlen,
                     "policy.%s[%zu]: not an IPv4 CIDR (a.b.c.d/n, no host bits): \"%.300s\"",
                     field, i, in[i]);
            return -1;
        }
    }
    return 0;
}

static int copy_ports(const uint32_t *in, size_t n, const char *field, uint16_t **out, char *err,
                      size_t errlen)
{
    if (rules_alloc(n, sizeof(**out), (void **)out, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == 0 || in[i] > 65535) {
            snprintf(err, errlen, "policy.%s[%zu]: port %u is not in 1..65535", field, i, in[i]);
            return -1;
        }
        (*out)[i] = (uint16_t)in[i];
    }
    return 0;
}

struct egress_policy *egress_policy_from_proto(const Airlock__Egress__V1__Policy *msg, char *err,
                                               size_t errlen)
{
    if (!msg) {
        snprintf(err, errlen, "policy: missing");
        return NULL;
    }
    struct egress_policy *p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    atomic_init(&p->refs, 1);
    switch (msg->default_action) {
    case AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_UNSPECIFIED:
    case AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_DENY: p->default_allow = false; break;
    case AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_ALLOW: p->default_allow = true; break;
    default:
        snprintf(err, errlen, "policy.default_action: unknown value %d", msg->default_action);
        goto fail;
    }
    if (copy_domains(msg->allow_domains, msg->n_allow_domains, "allow_domains",
                     &p->allow_domains, err, errlen) < 0 ||
        copy_domains(msg->deny_domains, msg->n_deny_domains, "deny_domains", &p->deny_domains,
                     err, errlen) < 0 ||
        copy_cidrs(msg->allow_cidrs, msg->n_allow_cidrs, "allow_cidrs", &p->allow_cidrs, err,
                   errlen) < 0 ||
        copy_cidrs(msg->deny_cidrs, msg->n_deny_cidrs, "deny_cidrs", &p->deny_cidrs, err,
                   errlen) < 0 ||
        copy_ports(msg->allow_ports, msg->n_allow_ports, "allow_ports", &p->allow_ports, err,
                   errlen) < 0 ||
        copy_ports(msg->deny_ports, msg->n_deny_ports, "deny_ports", &p->deny_ports, err,
                   errlen) < 0)
        goto fail;
    p->n_allow_domains = msg->n_allow_domains;
    p->n_deny_domains = msg->n_deny_domains;
    p->n_allow_cidrs = msg->n_allow_cidrs;
    p->n_deny_cidrs = msg->n_deny_cidrs;
    p->n_allow_ports = msg->n_allow_ports;
    p->n_deny_ports = msg->n_deny_ports;
    p->allow_ech = msg->allow_ech;
    p->inspect_tls = msg->inspect_tls;
    return p;
fail:
    policy_free(p);
    return NULL;
}

struct egress_policy *egress_policy_get(struct egress_policy *p)
{
    atomic_fetch_add(&p->refs, 1);
    return p;
}

void egress_policy_put(struct egress_policy *p)
{
    if (p && atomic_fetch_sub(&p->refs, 1) == 1)
        policy_free(p);
}

static bool domains_match(char (*patterns)[NAME_MAX_LEN + 1], size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (name_matches(patterns[i], name))
            return true;
    return false;
}

static bool cidrs_match(const struct cidr *cidrs, size_t n, uint32_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (cidr_contains(&cidrs[i], addr))
            return true;
    return false;
}

static bool ports_match(const uint16_t *ports, size_t n, uint16_t port)
{
    for (size_t i = 0; i < n; i++)
        if (ports[i] == port)
            return true;
    return false;
}

#define DECIDE(v, r) ((struct egress_decision){ .verdict = (v), .reason = (r) })

static struct egress_decision decide_by_domain(const struct egress_policy *p, const char *name)
{
    if (domains_match(p->deny_domains, p->n_deny_domains, name))
        return DECIDE(EGRESS_DENY, "deny_domains");
    if (domains_match(p->allow_domains, p->n_allow_domains, name))
        return DECIDE(EGRESS_ALLOW, "allow_domains");
    return p->default_allow ? DECIDE(EGRESS_ALLOW, "default_allow")
                            : DECIDE(EGRESS_DENY, "default_deny");
}

bool egress_policy_allows_ech(const struct egress_policy *p)
{
    return p->allow_ech;
}

bool egress_policy_inspects_tls(const struct egress_policy *p)
{
    return p->inspect_tls;
}

struct egress_decision egress_policy_check_connection(const struct egress_policy *p,
                                                      const struct egress_target *t)
{
    /* Before every rule: no policy opens the node or a protected range. */
    if (t->protected_reason)
        return DECIDE(EGRESS_DENY, t->protected_reason);
    if (ports_match(p->deny_ports, p->n_deny_ports, t->port))
        return DECIDE(EGRESS_DENY, "deny_ports");
    if (p->n_allow_ports > 0 && !ports_match(p->allow_ports, p->n_allow_ports, t->port))
        return DECIDE(EGRESS_DENY, "port_not_allowed");
    if (cidrs_match(p->deny_cidrs, p->n_deny_cidrs, t->addr))
        return DECIDE(EGRESS_DENY, "deny_cidrs");
    if (p->n_deny_domains > 0) {
        if (!t->name_known)
            return DECIDE(EGRESS_NEED_NAME, "need_name");
        if (t->name && domains_match(p->deny_domains, p->n_deny_domains, t->name))
            return DECIDE(EGRESS_DENY, "deny_domains");
    }
    if (cidrs_match(p->allow_cidrs, p->n_allow_cidrs, t->addr))
        return DECIDE(EGRESS_ALLOW, "allow_cidrs");
    if (addr_is_reserved(t->addr))
        return DECIDE(EGRESS_DENY, "reserved_range");
    if (!t->name_known)
        return DECIDE(EGRESS_NEED_NAME, "need_name");
    if (!t->name)
        return DECIDE(EGRESS_DENY, "ip_literal");
    if (!t->name_pinned)
        return DECIDE(EGRESS_DENY, "name_not_resolved_to_destination");
    return decide_by_domain(p, t->name);
}

struct egress_decision egress_policy_check_name(const struct egress_policy *p, const char *name)
{
    return decide_by_domain(p, name);
}

struct egress_decision egress_policy_check_answer(const struct egress_policy *p, uint32_t addr,
                                                  const char *protected_reason)
{
    if (protected_reason)
        return DECIDE(EGRESS_DENY, protected_reason);
    if (cidrs_match(p->deny_cidrs, p->n_deny_cidrs, addr))
        return DECIDE(EGRESS_DENY, "deny_cidrs");
    if (cidrs_match(p->allow_cidrs, p->n_allow_cidrs, addr))
        return DECIDE(EGRESS_ALLOW, "allow_cidrs");
    if (addr_is_reserved(addr))
        return DECIDE(EGRESS_DENY, "reserved_range");
    return DECIDE(EGRESS_ALLOW, "public_address");
}
