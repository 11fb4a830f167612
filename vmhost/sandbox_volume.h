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

/* Checks a create's attachments against each other and the path rules
 * (INVALID naming the field), then, for each: makes a volume that does
 * not exist yet (formatted; deleted again if the create fails), holds a
 * read-write one (STATE naming its holder), or makes the private reflink
 * of a snapshot (NOT_FOUND naming a missing one). Fills sb's slots. On
 * failure nothing of it is left. */
int sandbox_volumes_attach(struct sandbox *sb, Airlock__Vmhost__V1__VolumeAttachment *const *att,
                           size_t n, struct airlock_error *e);

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

/* The slot holding volume_id read-write, or -1. */
int sandbox_volume_slot(struct sandbox *sb, const char *volume_id);

/* The images for vm_config.volumes (NULL = an empty slot). */
void sandbox_volume_images(struct sandbox *sb, const char *out[VM_VOLUME_SLOTS]);

/* Re-holds the read-write volumes of a sandbox found in its record
 * (a restart); a failure is logged (the volume was deleted by hand). */
void sandbox_volumes_adopt(struct sandbox *sb);

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
