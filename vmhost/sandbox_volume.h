/* A sandbox's volumes (docs/volumes.md): what each VM volume slot holds,
 * attached at create, kept in the sandbox's record (sandbox_record.c) so a
 * restart, an adoption and a resume use the same slots, and let go at
 * delete. The volumes themselves are volume_store.h's. */
#ifndef AIRLOCK_SANDBOX_VOLUME_H
#define AIRLOCK_SANDBOX_VOLUME_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"
#include "guest.pb-c.h"
#include "vm.h"
#include "vmhost.pb-c.h"
#include "volume_store.h"

/* Where a volume is mounted in the guest: at most this many bytes. */
#define SANDBOX_VOLUME_PATH_MAX 1024
#define SANDBOX_VOLUME_NAME_SIZE 160

struct sandbox_volume {
    bool used;                          /* the slot has a volume */
    char volume_id[VOLUME_ID_SIZE];
    char snapshot_id[VOLUME_ID_SIZE];   /* "" = the volume itself */
    char name[SANDBOX_VOLUME_NAME_SIZE]; /* for messages */
    char path[SANDBOX_VOLUME_PATH_MAX]; /* the guest's mount point */
    bool read_only;
    /* What the slot's disk is on the host: the volume's image, or the
     * sandbox's private reflink of a snapshot (DIR/vol<N>.img). */
    char image[PATH_MAX];
};

struct sandbox;
struct vmhost;

/* The attachments among themselves: count, ids, paths, read_only with a
 * snapshot, no volume twice, no mount point twice (INVALID naming the
 * field). */
int sandbox_volumes_check(Airlock__Vmhost__V1__VolumeAttachment *const *att, size_t n,
                          struct airlock_error *e);

/* v (image left empty) from attachment a, checked by sandbox_volumes_check. */
void sandbox_volume_from(const Airlock__Vmhost__V1__VolumeAttachment *a,
                         struct sandbox_volume *v);

/* dir/vol<slot>.img: where a checkpoint keeps a read-write slot's copy and
 * a sandbox its private copy of a snapshot. -1 when it does not fit. */
int sandbox_volume_copy_path(const char *dir, unsigned slot, char *out, size_t len);

/* Checks a create's attachments against each other and the path rules
 * (INVALID naming the field), then, for each: makes a volume that does
 * not exist yet (formatted; deleted again if the create fails), holds a
 * read-write one (STATE naming its holder), or makes the private reflink
 * of a snapshot (NOT_FOUND naming a missing one) — of copies_dir/vol<N>.img
 * when copies_dir is not NULL (a fork's: its parent's copy). Fills sb's
 * slots. On failure nothing of it is left. */
int sandbox_volumes_attach(struct sandbox *sb, Airlock__Vmhost__V1__VolumeAttachment *const *att,
                           size_t n, const char *copies_dir, struct airlock_error *e);

/* The create succeeded: the volumes it made are the user's from now on. */
void sandbox_volumes_keep(struct sandbox *sb);

/* Lets every volume go: holds released, private reflinks removed, and
 * volumes made by a create that did not finish deleted. */
void sandbox_volumes_detach(struct sandbox *sb);

/* After a restore: tells the guest of each slot's disk (QMP block_resize
 * to its size: the guest probed an empty one) and has guestd mount it. */
int sandbox_volumes_mount(struct sandbox *sb, struct airlock_error *e);

/* One VolumeRequest (SYNC, FREEZE, THAW, GROW) to the guest for slot. */
int sandbox_volume_call(struct sandbox *sb, unsigned slot, Airlock__Guest__V1__VolumeOp op,
                        uint64_t size_bytes, struct airlock_error *e);

/* SYNC of every mounted volume (before a suspend). */
int sandbox_volumes_sync(struct sandbox *sb, struct airlock_error *e);
/* After a resume (paused, suspended, a full checkpoint's state): each
 * read-write volume's size told again and its file system grown to it,
 * for a grow made while the guest stood still (no change: a round trip).
 * Failures are logged: the sandbox runs on at the size it knew. */
void sandbox_volumes_refresh(struct sandbox *sb);

/* The slot holding volume_id read-write, or -1. */
int sandbox_volume_slot(struct sandbox *sb, const char *volume_id);

/* The images for vm_config.volumes (NULL = an empty slot). */
void sandbox_volume_images(struct sandbox *sb, const char *out[VM_VOLUME_SLOTS]);

/* Re-holds the read-write volumes of a sandbox found in its record
 * (a restart); a failure is logged (the volume was deleted by hand). */
void sandbox_volumes_adopt(struct sandbox *sb);

/* Checkpoints (docs/volumes.md "Lifecycle"): each read-write volume's
 * image is reflinked into a checkpoint's directory as vol<N>.img while the
 * VM is stopped (fsynced when durable); a pin links them along; a restore
 * puts them back over the images before the new VM starts. */
int sandbox_volumes_checkpoint(struct sandbox *sb, const char *dir, bool durable, char *err,
                               size_t errlen);
int sandbox_volumes_pin(const char *src_dir, const char *dst_dir, struct airlock_error *e);
int sandbox_volumes_restore(struct sandbox *sb, const char *dir, struct airlock_error *e);

/* A fork's attachments (fork i of a parent with these slots): each
 * read-write volume cloned from the checkpoint's copy in dir into the next
 * of new_ids (*used of them taken so far), each read-only snapshot attached
 * again (from the parent's private copy: sandbox_create_params.volume_copies); out[] gets the messages (their strings point into sb and new_ids,
 * holders of the strings outlive them). A read-only attach of a volume
 * itself does not fork (STATE naming it). */
int sandbox_volumes_fork(struct sandbox *sb, const char *dir, char *const *new_ids, size_t n_ids,
                         size_t *used, Airlock__Vmhost__V1__VolumeAttachment msgs[VM_VOLUME_SLOTS],
                         Airlock__Vmhost__V1__VolumeAttachment *out[VM_VOLUME_SLOTS], size_t *n,
                         struct airlock_error *e);
/* Whether sb has any volume attached. */
bool sandbox_volumes_any(struct sandbox *sb);
/* How many read-write volumes sb has. */
size_t sandbox_volumes_writable(struct sandbox *sb);

/* The volume operations that involve the sandbox holding the volume
 * (ops_volume.c). A snapshot of a volume a running sandbox has mounted
 * read-write is taken with its file system frozen (thawed on every path);
 * of one in a paused or suspended sandbox as the disk is (synced before a
 * suspend; crash-consistent while paused). A grow of an attached volume in
 * a running sandbox is told to the guest (block_resize) and grown by it. */
int sandbox_volume_snapshot(struct vmhost *vh, const char *volume_id, const char *snapshot_id,
                            struct airlock_error *e);
int sandbox_volume_grow(struct vmhost *vh, const char *volume_id, uint64_t size_mb,
                        struct airlock_error *e);

#endif
