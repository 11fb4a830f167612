/* Checkpoints of a sandbox: named, durable copies of its disk (DISK) or of
 * its disk and whole VM state (FULL) in DIR/checkpoints/<name>/, written
 * under a temporary name, fsynced and renamed, so a present checkpoint is
 * complete. They go with the sandbox directory when it is deleted.
 *
 * Restore and fork first pin a checkpoint: its files, which never change
 * once written, are hard-linked into a private directory under sandboxes/,
 * so a concurrent DeleteCheckpoint (or the sandbox's deletion) cannot pull
 * them away mid-read. */
#ifndef AIRLOCK_CHECKPOINT_H
#define AIRLOCK_CHECKPOINT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "sandbox.h"

enum checkpoint_kind { CHECKPOINT_DISK, CHECKPOINT_FULL };

/* Pin directories are sandboxes/.pin-<id>-XXXXXX. */
#define CHECKPOINT_PIN_PREFIX ".pin-"

struct checkpoint_info {
    char name[65];
    enum checkpoint_kind kind;
    int64_t created_unix_ms;
    /* Its set in the shared snapshot store (a full checkpoint on a node
     * with --snapshot-store); "" when it is only here. */
    char store_object[SANDBOX_STORE_OBJECT_SIZE];
};

/* A pinned or temporary checkpoint: dir holds disk.ext4 and, when full,
 * state. Removed with checkpoint_unpin(). A temporary one keeps its state
 * in memory instead: state_fd, a memfd that state names as
 * /proc/self/fd/N (each open of it reads from the start); else -1. */
struct checkpoint_files {
    char dir[PATH_MAX];
    char disk[PATH_MAX];
    char state[PATH_MAX];
    bool full;
    int state_fd;
};

/* Only a running sandbox can be checkpointed (AIRLOCK_ERR_STATE naming its
 * state); a taken name is AIRLOCK_ERR_EXISTS. The VM continues afterwards.
 * A full one also goes into the shared snapshot store when the node has
 * one (out->store_object); a failed upload fails the checkpoint. */
int checkpoint_create(struct sandbox *sb, const char *name, enum checkpoint_kind kind,
                      struct checkpoint_info *out, struct airlock_error *e);
/* Sorted by name; *out malloc'd (NULL when none). */
int checkpoint_list(struct sandbox *sb, struct checkpoint_info **out, size_t *n,
                    struct airlock_error *e);
/* Here and in the shared store; NOT_FOUND when neither has it. */
int checkpoint_delete(struct sandbox *sb, const char *name, struct airlock_error *e);

/* Hard links of checkpoint name's files (AIRLOCK_ERR_NOT_FOUND naming it). */
int checkpoint_pin(struct sandbox *sb, const char *name, struct checkpoint_files *out,
                   struct airlock_error *e);
/* A full checkpoint of the running sandbox for a fork of the live
 * sandbox: the disk straight into a pin directory, the VM state into
 * memory; neither fsynced (nothing needs it after the fork). */
int checkpoint_take_temporary(struct sandbox *sb, struct checkpoint_files *out,
                              struct airlock_error *e);
void checkpoint_unpin(struct checkpoint_files *f);

/* running|paused|error -> restoring -> running: QEMU stops, the disk comes
 * back from the checkpoint, the VM cold-boots (DISK) or loads its state
 * (FULL), then the guest init. A failure leaves state error, the checkpoint
 * intact. */
int checkpoint_restore(struct sandbox *sb, const char *name, struct airlock_error *e);

/* count (1..16) new sandboxes from checkpoint (NULL or "": a temporary full
 * checkpoint of the running sandbox); all or none. *out: count references.
 * Fork i's clone of the parent's k-th read-write volume (by slot) is the
 * new volume volume_ids[i * rw + k], made from the checkpoint's copy
 * (exactly count * rw ids, else INVALID); a failed fork deletes them. */
int sandbox_fork(struct sandbox *sb, const char *checkpoint, unsigned count,
                 const Airlock__Egress__V1__Policy *policy, char *const *volume_ids,
                 size_t n_volume_ids, struct sandbox ***out, struct airlock_error *e);

#endif
