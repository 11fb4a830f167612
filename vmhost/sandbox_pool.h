/* The two steps that make a warm pool's VMs fast to hand out and usable
 * for any create (warm_pool.h, docs/snapshots.md "Warm pool"):
 *
 * - sandbox_pool_warm(): after a pooled VM's guest answered, run the
 *   per-sandbox guest init once with throwaway values, pause, continue and
 *   run it again, then pause. Under TCG every guest code path costs its
 *   translation the first time a QEMU process runs it (~5000 translation
 *   blocks for guestd's first answer after a restore, ~1500 more for the
 *   init); warmed here, the hand-out translates a few hundred.
 * - sandbox_rename_from(): a pooled VM lives as sandboxes/<pool id>/ in
 *   namespace airlock-<pool id>; handed out under the id a create asked
 *   for, both are renamed and the VM's paths follow. QEMU keeps its open
 *   disk, sockets and console; its working directory, by which a
 *   restarted vmhost recognizes it (vm_adopt.c), moves with the
 *   directory. */
#ifndef AIRLOCK_SANDBOX_POOL_H
#define AIRLOCK_SANDBOX_POOL_H

#include <stddef.h>

struct sandbox;

/* The guest answered its Hello: warm it up and leave it paused. */
int sandbox_pool_warm(struct sandbox *sb, char *err, size_t errlen);

/* A pooled VM being handed out, its sb->id just changed by the caller
 * (under the registry lock): renames old_id's directory and namespace to
 * sb->id's and updates sb->dir, sb->disk and the VM's paths. All or
 * nothing: on failure everything keeps old_id's names (and the caller
 * gives sb its old id back). */
int sandbox_rename_from(struct sandbox *sb, const char *old_id, char *err, size_t errlen);

#endif
