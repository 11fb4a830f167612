/* How an egress runs (egress_new): the uplink, the upstream resolver,
 * timeouts, each sandbox's share, credential injection, protected ranges.
 * Apart from egress.h so the files below the registry read it without
 * depending on egress.c. */
#ifndef AIRLOCK_EGRESS_CONFIG_H
#define AIRLOCK_EGRESS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

struct cidr;
struct tls_credentials;
struct egress_metrics;

struct egress_config {
    /* Namespace that upstream DNS queries and connections leave from.
     * NULL: the namespace egress runs in (production). Tests set it to a
     * namespace whose only neighbours are their own servers. */
    const char *uplink_netns;
    uint32_t upstream_dns_addr; /* host byte order */
    uint16_t upstream_dns_port; /* 0 = 53 */
    int sniff_timeout_ms;       /* 0 = 5000: wait for SNI/Host */
    int connect_timeout_ms;     /* 0 = 10000 */
    int dns_timeout_ms;         /* 0 = 2000 */
    /* One sandbox's share, so a flood from one guest cannot take the
     * descriptors, memory and threads every other sandbox needs:
     * connections open at once (0 = 256), of them still being decided
     * (reading the first bytes, asking vault whether the host is bound;
     * 0 = 32). Over either, a new connection is reset and
     * logged (too_many_connections / too_many_pending). */
    unsigned max_conns_per_sandbox;
    unsigned max_pending_per_sandbox;
    int idle_timeout_ms;        /* 0 = 600000: a connection silent both ways this long ends */
    /* Threads the guests' TCP connections are spliced on (conn_loop.h),
     * each an event loop over many connections. 0 = one per online CPU,
     * at most 8. */
    unsigned conn_threads;
    /* Credential injection (intercept.h): vault's gRPC address, NULL =
     * none. The CA bundle upstream certificates are verified against, NULL
     * = the system's. Where sandbox CAs are saved for a restart, NULL =
     * in memory only. */
    const char *vault_addr;
    const char *upstream_ca_file;
    const char *state_dir;
    /* Presented to vault; egress's own gRPC API wants it too (main.c).
     * NULL: none (internal_token.h). */
    const char *internal_token;
    /* Mutual TLS with vault and vmhost (tls_credentials.h): egress:<node>.
     * NULL: plaintext. */
    struct tls_credentials *internal_tls;
    /* Ranges no sandbox policy can open (the cluster's pod, service and
     * node networks, say), beyond the built-in ones (cidr.h
     * addr_is_never_reachable) and egress's own addresses. Copied. */
    const struct cidr *protected_cidrs;
    size_t n_protected_cidrs;
    /* Counts what the connection logs see (egress_metrics.h); NULL: not
     * counted. Outlives egress. */
    struct egress_metrics *metrics;
};

#endif
