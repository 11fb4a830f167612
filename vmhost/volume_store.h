/* The node's volumes (docs/volumes.md): STORE/volumes/<id>/disk.img, a
 * sparse ext4 image the node formats when it makes it, and
 * STORE/volumes/<id>/snapshots/<snapshot>.img, reflinks of it. Volumes
 * outlive every sandbox; the store also knows which sandbox holds each one
 * read-write (one writer at a time), which the sandboxes tell it when they
 * attach, are adopted after a restart, and detach.
 *
 * The host only ever formats a file it just made: it never mounts, checks
 * or resizes a file system a guest wrote (that would parse untrusted data
 * on the host); the guest grows its own file system (guestd, VolumeRequest
 * GROW). Every file appears complete or not at all: written under a
 * temporary name, then renamed. Ids are checked (a-z, 0-9, '_', '-', at
 * most 64: a UUID fits) before any path is made of them. */
#ifndef AIRLOCK_VOLUME_STORE_H
#define AIRLOCK_VOLUME_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"

struct store;
struct volume_store;

#define VOLUME_ID_SIZE 65
/* A volume no bigger than this (1 TiB): sizes are MiB counts from an API. */
#define VOLUME_MAX_SIZE_MB (1024ull * 1024)

/* Opens (making it when missing) STORE/volumes of the node's store s,
 * which must outlive it. 0, or -1 with err. */
int volume_store_open(const struct store *s, struct volume_store **out, char *err, size_t errlen);
void volume_store_free(struct volume_store *vs);

struct volume_info {
    char id[VOLUME_ID_SIZE];
    uint64_t size_bytes;
    uint64_t used_bytes;           /* the image's blocks on the store */
    char holder[VOLUME_ID_SIZE];   /* the sandbox holding it read-write; "" = none */
    char (*snapshots)[VOLUME_ID_SIZE];
    size_t n_snapshots;
};

void volume_info_free(struct volume_info *vi);

/* The volume (and its snapshots): NOT_FOUND naming it. */
int volume_get(struct volume_store *vs, const char *id, struct volume_info *out,
               struct airlock_error *e);

/* The path of a volume's image, or of its snapshot's when snapshot is not
 * NULL or "": NOT_FOUND naming the one missing, INVALID for a bad id. */
int volume_image(struct volume_store *vs, const char *id, const char *snapshot, char *path,
                 size_t len, struct airlock_error *e);

/* Makes volume id of size_mb and formats it (ext4): EXISTS when it is
 * there, CAPACITY when the store has less free than size_mb. */
int volume_make(struct volume_store *vs, const char *id, uint64_t size_mb, struct airlock_error *e);

/* snapshot becomes a reflink of id's image as it is on the store now (the
 * caller freezes a guest that has it mounted): EXISTS when taken. */
int volume_snapshot(struct volume_store *vs, const char *id, const char *snapshot,
                    struct airlock_error *e);

/* new_id becomes a volume, a reflink of id's snapshot. */
int volume_clone(struct volume_store *vs, const char *id, const char *snapshot,
                 const char *new_id, struct airlock_error *e);

/* new_id becomes a volume, a reflink of src (a checkpoint's copy of a
 * volume: a fork's clone). */
int volume_clone_file(struct volume_store *vs, const char *src, const char *new_id,
                      struct airlock_error *e);

/* id's image becomes a reflink of src (a checkpoint's copy of it, at a
 * restore; no VM has the image open): all or nothing. */
int volume_replace(struct volume_store *vs, const char *id, const char *src,
                   struct airlock_error *e);

/* The image grows (ftruncate) to size_mb: INVALID unless larger, CAPACITY
 * when the store has less free than the growth. *size_bytes gets the new
 * size. The guest grows its file system (VolumeRequest GROW). */
int volume_grow(struct volume_store *vs, const char *id, uint64_t size_mb, uint64_t *size_bytes,
                struct airlock_error *e);

/* id's image becomes a reflink of src (on the node's store): a volume
 * that came with a sandbox from the shared snapshot store. Made when the
 * node lacks it; an older copy of its own is replaced (its snapshots here
 * stay). STATE when a sandbox here holds it. */
int volume_install(struct volume_store *vs, const char *id, const char *src,
                   struct airlock_error *e);

/* The volume lives on another node now: this node's image of it goes, its
 * snapshots here stay (they are still this node's). STATE when a sandbox
 * here holds it; a missing image is fine. */
int volume_drop_image(struct volume_store *vs, const char *id, struct airlock_error *e);

/* Deletes the volume and its snapshots (also when only its snapshots are
 * here): STATE naming the sandbox holding it. */
int volume_delete(struct volume_store *vs, const char *id, struct airlock_error *e);
int volume_snapshot_delete(struct volume_store *vs, const char *id, const char *snapshot,
                           struct airlock_error *e);

/* Sandbox sandbox_id holds id read-write from now on: STATE naming the
 * holder when another one does (holding it again is fine), NOT_FOUND when
 * the volume is missing. */
int volume_hold(struct volume_store *vs, const char *id, const char *sandbox_id,
                struct airlock_error *e);
/* Lets go of id if sandbox_id holds it. */
void volume_release(struct volume_store *vs, const char *id, const char *sandbox_id);
/* The sandbox holding id read-write into holder ("" = none). */
void volume_holder(struct volume_store *vs, const char *id, char holder[VOLUME_ID_SIZE]);

/* A private read-write reflink of id's snapshot at dst (a read-only attach:
 * the snapshot itself never changes). */
int volume_private_copy(struct volume_store *vs, const char *id, const char *snapshot,
                        const char *dst, struct airlock_error *e);

#endif
