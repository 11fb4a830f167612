/* The node's btrfs store: where templates and sandboxes live, so a sandbox
 * disk can be a reflink (FICLONE) of its template's disk, O(metadata).
 *
 * If the data directory is itself on btrfs, the store is the data directory.
 * Otherwise vmhost keeps a sparse image DATA_DIR/store.btrfs (made with
 * mkfs.btrfs once), attaches it to a loop device with autoclear and mounts
 * it on DATA_DIR/store; store_close() unmounts it, which frees the loop
 * device. A store left mounted by a vmhost that died is reused as it is.
 * templates/ and sandboxes/ are btrfs subvolumes.
 *
 * A store is one vmhost's: store_open locks DATA_DIR/vmhost.lock (flock,
 * so a vmhost killed with -9 leaves it free) until store_close, and a
 * second vmhost on the same data directory stops at start. */
#ifndef AIRLOCK_STORE_H
#define AIRLOCK_STORE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* Layout under root: templates/ (template snapshots and imported image
 * disks) and sandboxes/ (one directory per sandbox). */
struct store {
    char root[PATH_MAX];          /* btrfs directory holding everything */
    char templates_dir[PATH_MAX]; /* root/templates */
    char sandboxes_dir[PATH_MAX]; /* root/sandboxes */
    char image[PATH_MAX];         /* DATA_DIR/store.btrfs, or "" when data_dir is btrfs */
    bool mounted_by_us;           /* root is our loop mount: unmount it on close */
    int lock_fd;                  /* DATA_DIR/vmhost.lock, flocked while open */
};

#define STORE_DEFAULT_SIZE_GB 32

/* Finds or makes the store for data_dir (size_gb sizes a new image). On
 * error returns -1 with the reason and what to do about it in err; a data
 * directory another vmhost holds is an error naming it. */
int store_open(struct store *s, const char *data_dir, unsigned size_gb, char *err, size_t errlen);

/* Unmounts a loop-mounted store (its loop device detaches with it). One
 * that a running VM still uses stays mounted for the next vmhost. Then
 * lets the data directory go. */
void store_close(struct store *s);

/* dst becomes a reflink of src (FICLONE): O(metadata) inside the store.
 * Where the file system cannot (src elsewhere), a copy that keeps holes. */
int store_clone_file(const char *src, const char *dst, char *err, size_t errlen);

/* Brings a file from outside the store in once, as templates/<name>, so
 * later clones of it are reflinks: out gets its path. Copied under a
 * temporary name, fsynced and renamed, so a present file is complete. */
int store_import_file(const struct store *s, const char *src, const char *name, char *out,
                      size_t outlen, char *err, size_t errlen);

/* Before a snapshot of up to need bytes is written (suspend, FULL
 * checkpoint): -1, errno ENOSPC and a message naming the store and what
 * wanted the space when less is free. A snapshot that filled the store
 * would also stop every VM whose disk lives there. */
int store_require_free(const struct store *s, unsigned long long need, const char *what,
                       char *err, size_t errlen);

/* After a write into the store failed with err: true when the store is
 * (nearly) full, the likely cause; err then starts by naming the store. */
bool store_full(const struct store *s, char *err, size_t errlen);

/* True when path lies on btrfs. */
bool store_is_btrfs(const char *path);

#endif
