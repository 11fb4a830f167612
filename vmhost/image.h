/* Guest images: kernel, initramfs and root filesystem for sandbox VMs,
 * built by the project itself and cached under a content hash.
 *
 * Layout under cache_dir:
 *   kernel-<pkgver>/      vmlinuz, modules (from apt-get download + dpkg-deb -x)
 *   base-<hash>/rootfs/   mmdebstrap output (keyed by mirror, suite, package
 *                         list and their candidate versions)
 *   <hash>/               vmlinuz, initrd.img, rootfs.ext4, manifest.json; the
 *                         hash covers every input above plus the guestd binary
 *                         and the builder's own configuration.
 * Every directory is built under a temporary name and renamed into place, so
 * a crash never leaves a half-built image that looks complete. Old <hash>/
 * and base-<hash>/ entries are pruned (image_cache.h). */
#ifndef AIRLOCK_IMAGE_H
#define AIRLOCK_IMAGE_H

#include <limits.h>
#include <stdio.h>

struct image_build_options {
    const char *cache_dir;    /* e.g. /var/lib/airlock/images */
    const char *guestd_path;  /* the airlock-guestd binary to install */
    const char *suite;        /* NULL = "bookworm" */
    const char *extra_packages; /* comma-separated, or NULL */
    unsigned rootfs_size_mb;  /* 0 = 2048 (sparse) */
    unsigned cache_keep;      /* image entries the cache keeps (image_cache.h); 0 = all */
    FILE *progress;           /* progress and sizes are printed here; NULL = quiet */
};

struct guest_image {
    char hash[65];                 /* hex sha256 of all inputs */
    char dir[PATH_MAX];
    char kernel[PATH_MAX];
    char initrd[PATH_MAX];
    char rootfs[PATH_MAX];
    char kernel_version[128];      /* e.g. 6.1.0-57-cloud-amd64 */
    int hold_fd;                   /* shared lock that keeps the entry from being pruned;
                                      -1: none (a copy that borrows another's) */
};

/* Returns the cached image for these inputs, building what is missing, and
 * prunes the cache to opts->cache_keep images. The image stays in the cache
 * until guest_image_release: hold it for as long as its files are read
 * (vmhost: for as long as it boots VMs from it). On error returns -1 with a
 * message in err and out->hold_fd -1. */
int guest_image_ensure(const struct image_build_options *opts, struct guest_image *out,
                       char *err, size_t errlen);
/* Lets the cache prune the image again; hold_fd becomes -1. */
void guest_image_release(struct guest_image *img);

#endif
