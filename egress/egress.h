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

#include "airlock_error.h"
#include "conn_log.h"
#include "egress_config.h"
#include "policy.h"

struct egress;

/* NULL with err set when the uplink namespace cannot be entered. */
struct egress *egress_new(const struct egress_config *cfg, char *err, size_t errlen);
/* Detaches every sandbox, then frees. */
void egress_free(struct egress *eg);

/* This process's random instance id (new at every start: a client that
 * sees it change knows egress lost its sandboxes) and how many sandboxes
 * are attached. instance_id holds 33 bytes. */
void egress_status(struct egress *eg, char *instance_id, unsigned *sandboxes);

/* The registry's functions below return 0, or -1 with e's class and
 * message saying why. */

/* Opens the listeners inside netns_path and starts serving the sandbox.
 * Takes over the caller's reference on policy, also on failure.
 * project_id ("" = none yet) says whose credentials it gets; with
 * credential injection *ca_pem (malloc'd) is the sandbox CA's certificate
 * the guest must trust, else NULL. */
int egress_attach(struct egress *eg, const char *sandbox_id, const char *netns_path,
                  struct egress_policy *policy, const char *project_id, char **ca_pem,
                  struct airlock_error *e);

/* New connections and queries use policy at once. Takes over the
 * reference, also on failure. project_id "" leaves the project as it is;
 * it is set once (another one is AIRLOCK_ERR_INVALID). *ca_pem (ca_pem may
 * be NULL) gets a copy of the sandbox's CA certificate when it has one,
 * else NULL. */
int egress_set_policy(struct egress *eg, const char *sandbox_id, struct egress_policy *policy,
                      const char *project_id, char **ca_pem, struct airlock_error *e);

/* Closes the listeners, ends the sandbox's connections and forgets it. */
int egress_detach(struct egress *eg, const char *sandbox_id, struct airlock_error *e);

/* Log entries with seq > after_seq (see conn_log_read). */
int egress_connections(struct egress *eg, const char *sandbox_id, uint64_t after_seq,
                       struct conn_entry **out, size_t *n, struct airlock_error *e);

#endif
