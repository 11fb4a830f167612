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
};

struct egress;

/* NULL with err set when the uplink namespace cannot be entered. */
struct egress *egress_new(const struct egress_config *cfg, char *err, size_t errlen);
/* Detaches every sandbox, then frees. */
void egress_free(struct egress *eg);

enum egress_error {
    EGRESS_OK = 0,
    EGRESS_ERR_INVALID,
    EGRESS_ERR_NOT_FOUND,
    EGRESS_ERR_EXISTS,
    EGRESS_ERR_INTERNAL,
};

/* Opens the listeners inside netns_path and starts serving the sandbox.
 * Takes over the caller's reference on policy, also on failure. */
enum egress_error egress_attach(struct egress *eg, const char *sandbox_id, const char *netns_path,
                                struct egress_policy *policy, char *err, size_t errlen);

/* New connections and queries use policy at once. Takes over the
 * reference, also on failure. */
enum egress_error egress_set_policy(struct egress *eg, const char *sandbox_id,
                                    struct egress_policy *policy, char *err, size_t errlen);

/* Closes the listeners, ends the sandbox's connections and forgets it. */
enum egress_error egress_detach(struct egress *eg, const char *sandbox_id, char *err,
                                size_t errlen);

/* Log entries with seq > after_seq (see conn_log_read). */
enum egress_error egress_connections(struct egress *eg, const char *sandbox_id,
                                     uint64_t after_seq, struct conn_entry **out, size_t *n,
                                     char *err, size_t errlen);

#endif
