/* DNS for a sandbox: answers A queries for allowed names with the
 * upstream's addresses minus those in denied ranges, pins every address it
 * hands out to the name, and refuses everything else. Only A answers
 * leave egress: other record types (TXT, MX, ...) would be a channel a
 * denied domain could answer through. */
#include "egress_dns.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cidr.h"
#include "clock.h"
#include "dns_wire.h"
#include "log.h"

#define DNS_MAX_ADDRS 16
#define DNS_MAX_TTL 300

struct upstream_answer {
    uint32_t addrs[DNS_MAX_ADDRS];
    size_t n;
    uint32_t ttl;
    int rcode;
};

/* Asks the upstream resolver for name's A records from the calling
 * thread's namespace (the uplink one: see sandbox_loop). */
static int upstream_resolve(const struct egress *eg, const char *name,
                            struct upstream_answer *ans)
{
    uint8_t query[DNS_MAX_UDP], reply[DNS_MAX_UDP * 8];
    uint16_t id;
    if (getrandom(&id, sizeof(id), 0) != sizeof(id))
        return -1;
    size_t qlen = dns_build_query(id, name, DNS_TYPE_A, query, sizeof(query));
    if (qlen == 0)
        return -1;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int rc = -1;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(eg->cfg.upstream_dns_port),
                              .sin_addr.s_addr = htonl(eg->cfg.upstream_dns_addr) };
    /* connect() makes the kernel drop datagrams from anyone else. */
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || send(fd, query, qlen, 0) < 0)
        goto out;
    int64_t deadline = clock_monotonic_ms() + eg->cfg.dns_timeout_ms;
    for (;;) {
        int64_t left = deadline - clock_monotonic_ms();
        if (left <= 0)
            goto out;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int pr = poll(&pfd, 1, (int)left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            goto out;
        ssize_t n = recv(fd, reply, sizeof(reply), 0);
        if (n < 0)
            goto out;
        /* A reply with another id is not ours (spoofed or late): wait on. */
        if (dns_parse_reply_a(reply, (size_t)n, id, ans->addrs, DNS_MAX_ADDRS, &ans->n, &ans->ttl,
                              &ans->rcode) == 0)
            break;
    }
    rc = 0;
out:
    close(fd);
    return rc;
}

static void dns_log(struct egress_sandbox *sb, const char *name, uint32_t addr, bool allowed,
                    const char *reason)
{
    struct conn_entry e = { .protocol = "dns", .addr = addr, .port = 53, .allowed = allowed,
                            .reason = reason };
    snprintf(e.name, sizeof(e.name), "%s", name);
    egress_log(sb, &e);
    char a[16];
    log_info(allowed ? "dns allowed" : "dns denied", "sandbox=%s name=%s addr=%s reason=%s",
             sb->id, name[0] ? name : "-", addr ? addr_format(addr, a) : "-", reason);
}

/* The A question of an allowed name: resolve, filter, pin. */
static size_t answer_a(struct egress_sandbox *sb, const struct egress_policy *p,
                       const uint8_t *query, const struct dns_question *q, uint8_t *out,
                       size_t outlen)
{
    struct upstream_answer ans = { 0 };
    if (upstream_resolve(sb->eg, q->name, &ans) < 0) {
        dns_log(sb, q->name, 0, false, "upstream_failed");
        return dns_build_answer(query, q, DNS_RCODE_SERVFAIL, NULL, 0, 0, out, outlen);
    }
    if (ans.rcode != DNS_RCODE_NOERROR || ans.n == 0) {
        dns_log(sb, q->name, 0, true, "no_address");
        enum dns_rcode rcode = ans.rcode == DNS_RCODE_NXDOMAIN ? DNS_RCODE_NXDOMAIN
                                                                : DNS_RCODE_NOERROR;
        return dns_build_answer(query, q, rcode, NULL, 0, 0, out, outlen);
    }
    uint32_t keep[DNS_MAX_ADDRS];
    size_t n_keep = 0;
    const char *dropped_reason = NULL;
    for (size_t i = 0; i < ans.n; i++) {
        struct egress_decision d =
            egress_policy_check_answer(p, ans.addrs[i], egress_address_protection(sb->eg, ans.addrs[i]));
        if (d.verdict == EGRESS_ALLOW)
            keep[n_keep++] = ans.addrs[i];
        else
            dropped_reason = d.reason;
    }
    if (n_keep == 0) {
        /* Every address in a denied range: DNS rebinding onto something
         * internal. */
        dns_log(sb, q->name, ans.addrs[0], false, dropped_reason);
        return dns_build_answer(query, q, DNS_RCODE_REFUSED, NULL, 0, 0, out, outlen);
    }
    uint32_t ttl = ans.ttl < DNS_MAX_TTL ? ans.ttl : DNS_MAX_TTL;
    int64_t now = clock_monotonic_ms();
    for (size_t i = 0; i < n_keep; i++)
        pins_add(sb->pins, q->name, keep[i], ttl, now);
    dns_log(sb, q->name, keep[0], true, "allowed_name");
    return dns_build_answer(query, q, DNS_RCODE_NOERROR, keep, n_keep, ttl, out, outlen);
}

size_t egress_dns_answer(struct egress_sandbox *sb, const uint8_t *query, size_t len,
                         uint8_t *out, size_t outlen)
{
    struct dns_question q;
    if (dns_parse_query(query, len, &q) < 0) {
        dns_log(sb, "", 0, false, "malformed_query");
        return dns_build_formerr(query, len, out, outlen);
    }
    if (!q.name_valid || q.qclass != DNS_CLASS_IN) {
        dns_log(sb, "", 0, false, "invalid_name");
        return dns_build_answer(query, &q, DNS_RCODE_REFUSED, NULL, 0, 0, out, outlen);
    }
    struct egress_policy *p = egress_sandbox_policy(sb);
    size_t reply_len;
    struct egress_decision d = egress_policy_check_name(p, q.name);
    if (d.verdict != EGRESS_ALLOW) {
        dns_log(sb, q.name, 0, false, d.reason);
        reply_len = dns_build_answer(query, &q, DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, outlen);
    } else if (q.qtype == DNS_TYPE_A) {
        reply_len = answer_a(sb, p, query, &q, out, outlen);
    } else if (q.qtype == DNS_TYPE_AAAA) {
        /* No IPv6 out of a sandbox: an empty answer makes clients use A. */
        dns_log(sb, q.name, 0, true, "no_ipv6");
        reply_len = dns_build_answer(query, &q, DNS_RCODE_NOERROR, NULL, 0, 0, out, outlen);
    } else {
        dns_log(sb, q.name, 0, false, "qtype_not_supported");
        reply_len = dns_build_answer(query, &q, DNS_RCODE_REFUSED, NULL, 0, 0, out, outlen);
    }
    egress_policy_put(p);
    return reply_len;
}
