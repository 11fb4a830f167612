/* The two steps that make a warm pool's VMs fast to hand out and usable
 * for any create (warm_pool.h, docs/snapshots.md "Warm pool"):
 *
 * - sandbox_pool_warm(): after a pooled VM's guest answered, run the
 *   per-sandbox guest init once with throwaway values, pause, continue and
 *   run it again, then pause. Under TCG every guest code path costs its
 *   translation the first time a QEMU process runs it (~5000 translation
 *   blocks for guestd's first answer after a restore, ~1500 more for the
 *   init); warmed here, the hand-out translates a few hundred.
 * - sandbox_hand_out(): a pooled VM lives as sandboxes/<pool id>/ in
 *   namespace airlock-<pool id>; handed out under the id a create asked
 *   for, both are renamed and the VM's paths follow. QEMU keeps its open
 *   disk, sockets and console; its working directory, by which a
 *   restarted vmhost recognizes it (vm_adopt.c), moves with the
 *   directory. */
#ifndef AIRLOCK_SANDBOX_POOL_H
#define AIRLOCK_SANDBOX_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"

/* Where a warm-up's time went (microseconds): the init with the stand-in
 * CA, the exec, the pause and continue, the init again. */
struct pool_warm_times {
    int64_t ca_us, exec_us, cycle_us, init_us;
};

/* The guest answered its Hello: warm it up and leave it paused. */
int sandbox_pool_warm(struct sandbox *sb, struct pool_warm_times *t, char *err, size_t errlen);

/* A pooled VM (warmed, paused, detached: sandbox_build.h) handed out to
 * the create p: registered under p->id (or its own) in one step with the
 * id and capacity checks, continued, attached to egress with p's project
 * and policy, and given the per-sandbox guest init. On failure it is gone
 * (class AIRLOCK_ERR_INTERNAL: the caller may build one instead). */
int sandbox_hand_out(struct sandbox *sb, const struct sandbox_create_params *p,
                     struct airlock_error *e);

#endif
