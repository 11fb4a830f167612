/* A sandbox's egress policy: immutable once built, shared by reference, so
 * a live change swaps the pointer and connections in flight keep the one
 * they were decided with. The rule order is documented in
 * protos/egress.proto (message Policy). */
#ifndef AIRLOCK_EGRESS_POLICY_H
#define AIRLOCK_EGRESS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cidr.h"
#include "egress.pb-c.h"

struct egress_policy;

/* Validates and copies a Policy message. NULL with err naming the field
 * ("policy.allow_cidrs[1]: not a CIDR: ...") when invalid. Holds one
 * reference. */
struct egress_policy *egress_policy_from_proto(const Airlock__Egress__V1__Policy *msg, char *err,
                                               size_t errlen);
struct egress_policy *egress_policy_get(struct egress_policy *p);
void egress_policy_put(struct egress_policy *p);

enum egress_verdict {
    EGRESS_ALLOW,
    EGRESS_DENY,
    EGRESS_NEED_NAME, /* only the name the connection claims can decide */
};

struct egress_decision {
    enum egress_verdict verdict;
    const char *reason; /* the rule that decided; static string */
};

/* What egress knows about a TCP connection when it asks. */
struct egress_target {
    uint32_t addr;
    uint16_t port;
    /* Why no policy may open addr (egress_address_protection): NULL, or
     * "host_address" / "protected_range". */
    const char *protected_reason;
    bool name_known;    /* the first bytes were read (name may still be NULL) */
    const char *name;   /* normalized SNI or Host; NULL when none */
    bool name_pinned;   /* egress's DNS answered name with addr for this sandbox */
};

/* Whether TLS ClientHellos with Encrypted Client Hello (or ESNI) may go:
 * their real name is hidden from egress (sniff.h SNIFF_NAME_HIDDEN). */
bool egress_policy_allows_ech(const struct egress_policy *p);

/* Whether TLS to every allowed host is terminated so the requests inside
 * are checked too (egress.proto Policy.inspect_tls; intercept.h). */
bool egress_policy_inspects_tls(const struct egress_policy *p);

struct egress_decision egress_policy_check_connection(const struct egress_policy *p,
                                                      const struct egress_target *t);

/* May the sandbox resolve name? */
struct egress_decision egress_policy_check_name(const struct egress_policy *p, const char *name);

/* May a DNS answer for an allowed name hand out addr? Applies the address
 * rules only (protection, deny_cidrs, allow_cidrs, reserved ranges), so an
 * allowed name re-resolving to a private address gets nothing.
 * protected_reason as in egress_target. */
struct egress_decision egress_policy_check_answer(const struct egress_policy *p, uint32_t addr,
                                                  const char *protected_reason);

#endif
