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
 * AIRLOCK_ERR_INVALID with egress's message naming the field — also
 * without --egress, where the policy is checked and kept but enforces
 * nothing; an egress that cannot be reached is AIRLOCK_ERR_UNAVAILABLE. */
int sandbox_network_up(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                       struct airlock_error *e);

/* A pooled VM's network: the namespace only. Egress hears of it when it
 * is handed out, under its final id: sandbox_set_policy() attaches a
 * sandbox that is not attached yet. */
int sandbox_network_prepare(struct sandbox *sb, struct airlock_error *e);

/* The attach half of sandbox_network_up for a namespace made by
 * sandbox_network_prepare, on a thread of its own, so a restore overlaps
 * egress's round trip (2-4 ms: it issues the sandbox CA) with QEMU's
 * start and state load. policy must live until the finish, which waits
 * for it and must come before the guest runs (its first packet needs
 * egress listening) and before any teardown. NULL with e set when no thread
 * could start. A failed attach undoes nothing: the namespace goes with
 * the sandbox (sandbox_network_down). */
struct sandbox_attach;
struct sandbox_attach *sandbox_network_attach_start(struct sandbox *sb,
                                                    const Airlock__Egress__V1__Policy *policy,
                                                    struct airlock_error *e);
int sandbox_network_attach_finish(struct sandbox_attach *a, struct airlock_error *e);

/* Detaches from egress, then deletes the namespace (egress's sockets would
 * keep it alive otherwise). QEMU must be gone. Failures are logged. */
void sandbox_network_down(struct sandbox *sb);

/* Replaces the policy in egress (attaching a sandbox that is not attached
 * yet); new connections use it at once. Without
 * --egress, or while the sandbox has no network (vmhost's stop took it),
 * it is checked and kept (see sandbox_network_up). Either way it is saved
 * beside the sandbox's record. */
int sandbox_set_policy(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                       struct airlock_error *e);

/* After a vmhost restart (sandbox_adopt.c) or an egress restart
 * (egress_watch.c), for a sandbox whose namespace still exists: attaches
 * it to egress again with its saved policy (egress may still know it: then
 * the policy is set again). Nothing for a sandbox without a namespace. */
int sandbox_network_reattach(struct sandbox *sb, struct airlock_error *e);

/* For a sandbox whose network vmhost's stop took away: builds it again
 * with the saved policy before its VM starts. Nothing when it has one. */
int sandbox_network_restore(struct sandbox *sb, struct airlock_error *e);

#endif
