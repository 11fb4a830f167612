/* Suspended sandboxes and full checkpoints in the shared snapshot store
 * (snapshot_store.h, docs/snapshot-store.md), so any node can resume them
 * (a checkpoint: a lost node's sandbox, restored elsewhere):
 * sandboxes/<id>/<generation>/ (a suspend), checkpoints/<id>/<name>/
 * (a checkpoint) and migrations/<id>/<generation>/ (a live migration's
 * first pass: no state) hold disk.delta (the disk against its
 * template's disk), state.delta (the migration stream against the
 * template's memory file) and, last, manifest.json: what the sandbox is
 * (template, its key and build, size, project, creation time, network
 * policy) and each delta's sha256; a suspend's and a checkpoint's also
 * carry the sandbox's volumes (sandbox_volume_sets.h). The template build
 * the deltas were made against is published first (snapshot_template.h). */
#ifndef AIRLOCK_SANDBOX_SHARED_STORE_H
#define AIRLOCK_SANDBOX_SHARED_STORE_H

#include "airlock_error.h"
#include "sandbox.h"

struct sandbox;
struct vmhost;

/* During a suspend, once its files (state, disk) are complete: uploads
 * them, and sb->store_object names the set. state NULL: a live
 * migration's first pass (sandbox_migrate.h), the disk and policy only.
 * Nothing is left in the store on failure (CAPACITY when it is full,
 * UNAVAILABLE when unreachable). */
int sandbox_shared_store_upload(struct sandbox *sb, const char *state, const char *disk,
                                struct airlock_error *e);

/* Checkpoint name of sb (its state and disk files, complete and synced;
 * the read-write volumes' copies in volumes_dir) as set checkpoints/<id>/<name>, named in set ("" on failure, when
 * nothing is left in the store). Kept until the checkpoint or the sandbox
 * is deleted; ResumeSandbox naming it brings the sandbox back from it on
 * any node (a lost node's sandbox). */
int sandbox_shared_store_put_checkpoint(struct sandbox *sb, const char *name, const char *state,
                                        const char *disk, const char *volumes_dir,
                                        char set[SANDBOX_STORE_OBJECT_SIZE],
                                        struct airlock_error *e);
/* Checkpoint name's set leaves the store: 1 when it was there, 0 when
 * not (or the node has no store), -1 with e when it could not go. */
int sandbox_shared_store_drop_checkpoint(struct sandbox *sb, const char *name,
                                         struct airlock_error *e);
/* Every checkpoint set of sb leaves the store (the sandbox is deleted); a
 * failure is only logged. */
void sandbox_shared_store_forget_checkpoints(struct sandbox *sb);

/* Resumes sandbox id, which this node does not hold, from the store's
 * object set (a suspend's, or a checkpoint's, which the store keeps): taken into the registry as a suspended sandbox of this
 * node, then resumed as its own are (*out, running, with the caller's
 * reference). Its template must be here with the same key; the build its
 * deltas need is fetched when this node has another. EXISTS when the id
 * is taken here; NOT_FOUND when the store has no such set; DATA_LOSS when
 * it is corrupt; the resume's own errors. On failure this node keeps
 * nothing and the store keeps the set. */
int sandbox_shared_store_resume(struct vmhost *vh, const char *id, const char *object,
                                struct sandbox **out, struct airlock_error *e);

/* A live migration's first pass (sandbox_migrate.h): sandbox id from the
 * set into the registry as a suspended sandbox, in memory only, its disk
 * in DIR/suspend/disk.ext4, for the migration to start it. Errors as for
 * resume. */
int sandbox_shared_store_receive(struct vmhost *vh, const char *id, const char *object,
                                 struct sandbox **out, struct airlock_error *e);

/* Its set leaves the store (the VM runs again, or it is deleted), unless
 * it is keep (NULL/"": none; the sandbox lives on from it elsewhere);
 * sb->store_object is cleared first. A failure is only logged. */
void sandbox_shared_store_forget(struct sandbox *sb, const char *keep);

/* Takes sandbox id, which this node does not hold, from the store's
 * object set and keeps it here, suspended and recorded, as this node's own
 * (*out, with the caller's reference): a draining node's sandbox moving.
 * A sandbox already here under that set (a retry) is answered as it is;
 * another of that id is EXISTS. Errors as for resume. */
int sandbox_shared_store_take(struct vmhost *vh, const char *id, const char *object,
                              struct sandbox **out, struct airlock_error *e);

#endif
