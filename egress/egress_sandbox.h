/* One attached sandbox's serving (egress_sandbox.c): its listeners inside
 * the sandbox namespace and the loop thread that accepts connections
 * (egress_tcp.h) and answers DNS (egress_dns.h). The registry (egress.c)
 * starts, rechecks and stops it. */
#ifndef AIRLOCK_EGRESS_SANDBOX_H
#define AIRLOCK_EGRESS_SANDBOX_H

#include <stddef.h>

#include "egress_state.h"
#include "sandbox_ca.h"

/* Opens the listeners inside netns_path and starts the loop thread. Takes
 * over policy and ca (NULL without credential injection), also on
 * failure. */
struct egress_sandbox *egress_sandbox_start(struct egress *eg, const char *id,
                                            const char *netns_path, struct egress_policy *policy,
                                            struct sandbox_ca *ca, const char *project_id,
                                            char *err, size_t errlen);

/* Decides every allowed connection again under policy (a policy change):
 * those it no longer allows are shut down. Returns how many. */
unsigned egress_sandbox_recheck(struct egress_sandbox *sb, const struct egress_policy *policy);

/* Stops the loop, closes the listeners, ends every connection, frees. */
void egress_sandbox_stop(struct egress_sandbox *sb);

#endif
