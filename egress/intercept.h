/* Credential injection in egress (docs/egress.md "Credential injection"):
 * a connection the policy allowed whose host has a credential binding in
 * vault for the sandbox is not spliced but intercepted — TLS terminated
 * with a certificate from the sandbox's CA, the upstream dialled and
 * verified by egress, each request given its credential (http_inject.h).
 * Connections to other hosts keep the plain splice. */
#ifndef AIRLOCK_EGRESS_INTERCEPT_H
#define AIRLOCK_EGRESS_INTERCEPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox_ca.h"

struct egress_config;
struct egress_conn;
struct egress_target;

/* Node-wide: the vault client, the TLS contexts, where sandbox CAs are
 * saved. egress has one when it runs with --vault. */
struct egress_injector;

struct egress_injector *egress_injector_new(const struct egress_config *cfg, char *err,
                                            size_t errlen);
void egress_injector_free(struct egress_injector *inj);

/* The CA of a sandbox being attached (saved under the state directory, if
 * any, so a restarted egress finds it again). */
struct sandbox_ca *egress_injector_sandbox_ca(struct egress_injector *inj, const char *sandbox_id,
                                              char *err, size_t errlen);

/* For an allowed connection: whether egress may inject for it at all
 * (--vault, a project, a name, first bytes). Cheap: no vault call. */
bool egress_intercept_wanted(struct egress_conn *c, const struct egress_target *t,
                             size_t first_len);

/* Whether vault has a binding for t's host for the sandbox (blocks on
 * vault). When vault cannot say, false: the connection goes on uninjected
 * — no credential can leak that way, and a vault outage does not cut
 * every sandbox off. */
bool egress_intercept_bound(struct egress_conn *c, const struct egress_target *t);

/* Serves a connection to the end on the calling thread (blocking
 * sockets): a bound one injecting its credentials (inject), or a TLS one
 * only inspected (the policy's inspect_tls: every request must name the
 * host, nothing is added). The byte counts, and *why, the reason it failed
 * (a static string for the connection log), or NULL. */
void egress_intercept_serve(struct egress_conn *c, const struct egress_target *t,
                            const uint8_t *first, size_t first_len, bool inject, uint64_t *sent,
                            uint64_t *received, const char **why);

#endif
