/* The bound on the guest image cache (image.h describes its layout).
 *
 * Every guest_image_ensure adds or reuses one image entry, CACHE/<hash>/; a
 * new guestd makes a new one. So that the cache does not grow without end,
 * each use sets the entry's manifest.json mtime to now (its "last used"
 * time), and after every ensure the cache keeps only the `keep` most
 * recently used image entries, plus the base-<hash> entries those name.
 *
 * Locking (all flock, so a process that dies releases everything):
 *   CACHE/.lock, exclusive  builders and the pruner (image.c lock_cache):
 *                           one at a time, so nobody looks an entry up or
 *                           reads a base while it is deleted.
 *   CACHE/<hash>/, shared   held by whoever uses the entry's files after
 *                           guest_image_ensure returned: vmhost boots every
 *                           VM from its vmlinuz and initrd.img and imports
 *                           rootfs.ext4 into its store, so it holds its
 *                           image for as long as it runs. Taken while the
 *                           cache lock is held, so never after a deletion
 *                           began.
 *   CACHE/<hash>/, exclusive the pruner, non-blocking: an entry someone
 *                           holds is busy and stays.
 * base-<hash> entries are read only by builds, under the cache lock.
 * Never deleted: kernel-* (hard-linked into every image), apt, .lock,
 * accel-probe-*, and anything not shaped like an entry. */
#ifndef AIRLOCK_IMAGE_CACHE_H
#define AIRLOCK_IMAGE_CACHE_H

#include <stddef.h>

#define IMAGE_CACHE_DEFAULT_KEEP 8u

/* Parses the value of --image-cache-keep: a whole number, 0 = never prune.
 * -1 with a message naming the flag in err otherwise. */
int image_cache_parse_keep(const char *text, unsigned *keep, char *err, size_t errlen);

/* Marks entry_dir as in use: takes a shared flock on the directory and sets
 * its manifest.json's mtime to now. Call with the cache lock held. Returns
 * the descriptor that holds the lock (image_cache_release drops it), or -1
 * with a message in err. */
int image_cache_hold(const char *entry_dir, char *err, size_t errlen);
void image_cache_release(int hold_fd);

struct image_cache_pruned {
    unsigned images;          /* image entries deleted */
    unsigned bases;           /* base-<hash> entries deleted */
    unsigned busy;            /* old image entries kept because someone holds them */
    unsigned long long bytes; /* disk space they took (the shared kernel counted in) */
};

/* With the cache lock held: keeps the `keep` most recently used image
 * entries and the one named current (the entry just used), deletes the
 * other image entries nobody holds, then every base-<hash> no remaining
 * image's manifest names (all bases stay if a manifest does not say).
 * keep == 0 deletes nothing. Deletion renames an entry to <name>.tmp.pruned
 * first, so a crash leaves nothing that looks like an entry (image.c
 * removes *.tmp.* leftovers). Logs one info line when it deleted something;
 * problems are warnings, never failures. out may be NULL. */
void image_cache_prune(const char *cache_dir, unsigned keep, const char *current,
                       struct image_cache_pruned *out);

#endif
