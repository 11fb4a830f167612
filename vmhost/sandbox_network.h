/* A sandbox's network as its lifecycle sees it: the namespace with the TAP
 * and rules (sandbox_net.h), and its attachment to egress (when vmhost runs
 * with --egress) with the sandbox's policy. */
#ifndef AIRLOCK_SANDBOX_NETWORK_H
#define AIRLOCK_SANDBOX_NETWORK_H

#include <stddef.h>

#include "egress.pb-c.h"
#include "sandbox.h"

/* Builds the namespace and attaches it to egress (policy NULL = deny all).
 * On failure whatever was made is undone. An invalid policy is
 * SANDBOX_ERR_INVALID with egress's message naming the field — also
 * without --egress, where the policy is checked and kept but enforces
 * nothing. */
enum sandbox_error sandbox_network_up(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                                      char *err, size_t errlen);

/* Detaches from egress, then deletes the namespace (egress's sockets would
 * keep it alive otherwise). QEMU must be gone. Failures are logged. */
void sandbox_network_down(struct sandbox *sb);

/* Replaces the policy in egress; new connections use it at once. Without
 * --egress it is checked and kept (see sandbox_network_up). */
enum sandbox_error sandbox_set_policy(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                                      char *err, size_t errlen);

#endif
