/* The builders: a sandbox's VM made from a source — the template
 * version's snapshot, a cold boot (no version, --cold-boot), or a
 * checkpoint (a fork) — knowing nothing of warm pools or of who asked.
 * sandbox_create() (a pooled VM, else a build), warm_pool.c (detached
 * builds) and sandbox_fork.c (from a checkpoint) call them. */
#ifndef AIRLOCK_SANDBOX_BUILD_H
#define AIRLOCK_SANDBOX_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox.h"

struct template_version;

struct sandbox_build {
    const struct sandbox_create_params *params; /* id, project, policy; the size of a cold boot */
    /* Restored from its snapshot, whose size it takes; the build owns this
     * reference (the sandbox keeps it, a failure drops it). NULL: boots
     * the kernel (--cold-boot). */
    struct template_version *tmpl;
    /* From a checkpoint: its disk instead of the template's and, when not
     * NULL, its full state instead of the snapshot's. */
    const char *from_disk;
    const char *from_state;
    /* Out of the registry under an id of its own, its network namespace up
     * but not attached to egress, its guest answering; not initialized and
     * not running: the caller finishes it (a warm pool warms it and hands
     * it out, sandbox_pool.h). */
    bool detached;
    int nice;                    /* QEMU's CPU niceness; 0 = vmhost's */
    /* A spare of tmpl (sandbox_spare_start, sandbox_spare_claim) to
     * restore into instead of starting a QEMU; the build takes it (a
     * failure discards it). */
    struct sandbox *spare;
};

/* A running sandbox (detached: see above) with a reference in *out. On
 * failure nothing is left behind. */
int sandbox_build(struct vmhost *vh, const struct sandbox_build *b, struct sandbox **out,
                  struct airlock_error *e);

/* A spare: a detached sandbox of t's size whose QEMU was started ahead
 * (niceness nice) with -incoming defer and given t's device state, left
 * paused — disk reflinked, namespace made, nothing of the node's budget
 * held — so a build that takes it (sandbox_build.spare) only continues
 * it: QEMU's start and the state load leave that build. No volumes: its
 * slots are empty. Takes the reference to t. */
int sandbox_spare_start(struct vmhost *vh, struct template_version *t, int nice,
                        struct sandbox **out, struct airlock_error *e);

/* Claims the node's room for a spare about to be given to a build
 * (CAPACITY, naming what ran out, leaves it as it was). */
int sandbox_spare_claim(struct sandbox *spare, struct airlock_error *e);

/* Stops and removes a detached sandbox never registered and drops both of
 * its references (sandbox_delete.c). */
void sandbox_discard(struct sandbox *sb);

#endif
