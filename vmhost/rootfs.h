/* The guest's root filesystem.
 *
 * The Debian tree (mmdebstrap) is built once per package set and kept in
 * cache_dir/base-<hash>/rootfs; each image then costs only a hard-linked
 * staging copy, the few files airlock adds, and mkfs.ext4 -d (seconds). */
#ifndef AIRLOCK_ROOTFS_H
#define AIRLOCK_ROOTFS_H

#include <stddef.h>
#include <stdio.h>

struct rootfs_base_spec {
    const char *suite;
    const char *packages; /* comma-separated, for mmdebstrap --include */
    const char *sources;  /* one-line sources.list entries */
};

/* Ensures cache_dir/base-<base_hash>/rootfs exists; its path into dir. */
int rootfs_base_ensure(const char *cache_dir, const char *base_hash,
                       const struct rootfs_base_spec *spec, FILE *progress, char *dir,
                       size_t dirlen, char *err, size_t errlen);

/* Writes a sparse ext4 image of size_mb MiB at image_path holding base_dir
 * plus the guest daemon at /usr/sbin/airlock-guestd, hostname "sandbox" and
 * an empty /etc/machine-id. work_dir is scratch space (the caller removes
 * it). */
int rootfs_make_ext4(const char *base_dir, const char *guestd, unsigned size_mb,
                     const char *work_dir, const char *image_path, FILE *progress, char *err,
                     size_t errlen);

#endif
