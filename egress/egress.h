/* egress: each attached sandbox's only way out. For every sandbox it holds
 * a DNS socket and a transparent TCP listener inside the sandbox's network
 * namespace (where nftables redirects the guest's traffic to them, see
 * vmhost/sandbox_net.h), decides every query and connection with the
 * sandbox's policy, dials allowed connections from the uplink side and
 * splices them, resets denied ones, and logs both. */
#ifndef AIRLOCK_EGRESS_H
#define AIRLOCK_EGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "conn_log.h"
#include "policy.h"

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
    /* Ranges no sandbox policy can open (the cluster's pod, service and
     * node networks, say), beyond the built-in ones (cidr.h
     * addr_is_never_reachable) and egress's own addresses. Copied. */
    const struct cidr *protected_cidrs;
    size_t n_protected_cidrs;
};

struct egress;

/* NULL with err set when the uplink namespace cannot be entered. */
struct egress *egress_new(const struct egress_config *cfg, char *err, size_t errlen);
/* Detaches every sandbox, then frees. */
void egress_free(struct egress *eg);

/* This process's random instance id (new at every start: a client that
 * sees it change knows egress lost its sandboxes) and how many sandboxes
 * are attached. instance_id holds 33 bytes. */
void egress_status(struct egress *eg, char *instance_id, unsigned *sandboxes);

enum egress_error {
    EGRESS_OK = 0,
    EGRESS_ERR_INVALID,
    EGRESS_ERR_NOT_FOUND,
    EGRESS_ERR_EXISTS,
    EGRESS_ERR_INTERNAL,
};

/* Opens the listeners inside netns_path and starts serving the sandbox.
 * Takes over the caller's reference on policy, also on failure.
 * project_id ("" = none yet) says whose credentials it gets; with
 * credential injection *ca_pem (malloc'd) is the sandbox CA's certificate
 * the guest must trust, else NULL. */
enum egress_error egress_attach(struct egress *eg, const char *sandbox_id, const char *netns_path,
                                struct egress_policy *policy, const char *project_id,
                                char **ca_pem, char *err, size_t errlen);

/* New connections and queries use policy at once. Takes over the
 * reference, also on failure. project_id "" leaves the project as it is;
 * it is set once (another one is EGRESS_ERR_INVALID). *ca_pem (ca_pem may
 * be NULL) gets a copy of the sandbox's CA certificate when it has one,
 * else NULL. */
enum egress_error egress_set_policy(struct egress *eg, const char *sandbox_id,
                                    struct egress_policy *policy, const char *project_id,
                                    char **ca_pem, char *err, size_t errlen);

/* Closes the listeners, ends the sandbox's connections and forgets it. */
enum egress_error egress_detach(struct egress *eg, const char *sandbox_id, char *err,
                                size_t errlen);

/* Log entries with seq > after_seq (see conn_log_read). */
enum egress_error egress_connections(struct egress *eg, const char *sandbox_id,
                                     uint64_t after_seq, struct conn_entry **out, size_t *n,
                                     char *err, size_t errlen);

#endif
