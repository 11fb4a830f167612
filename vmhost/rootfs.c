#include "rootfs.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "image_progress.h"
#include "initramfs.h"

int rootfs_base_ensure(const char *cache_dir, const char *base_hash,
                       const struct rootfs_base_spec *spec, FILE *progress, char *dir,
                       size_t dirlen, char *err, size_t errlen)
{
    char base[PATH_MAX], tmp[PATH_MAX], target[PATH_MAX], sources[PATH_MAX], size[32];
    struct stat st;
    if (fs_path(base, sizeof(base), "%s/base-%s", cache_dir, base_hash) ||
        fs_path(dir, dirlen, "%s/rootfs", base) ||
        fs_path(tmp, sizeof(tmp), "%s.tmp.XXXXXX", base)) {
        snprintf(err, errlen, "rootfs: cache path under %s too long", cache_dir);
        return -1;
    }
    if (stat(dir, &st) == 0) {
        image_progress(progress, "rootfs: base %.12s cached (%s)", base_hash,
                       fs_human_size(fs_disk_usage(dir), size, sizeof(size)));
        return 0;
    }
    if (!mkdtemp(tmp)) {
        snprintf(err, errlen, "mkdtemp %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (fs_path(target, sizeof(target), "%s/rootfs", tmp) ||
        fs_path(sources, sizeof(sources), "%s/sources.list", tmp)) {
        snprintf(err, errlen, "rootfs: path under %s too long", tmp);
        goto fail;
    }
    /* mmdebstrap pastes an existing file given as the mirror into the
     * chroot's sources.list. */
    if (fs_write_file_atomic(sources, spec->sources, strlen(spec->sources), 0644, err, errlen) < 0)
        goto fail;

    image_progress(progress, "rootfs: mmdebstrap %s (%s)…", spec->suite, spec->packages);
    double t0 = monotonic_seconds();
    char include[4096];
    snprintf(include, sizeof(include), "--include=%s", spec->packages);
    const char *argv[] = { "mmdebstrap", "--variant=minbase", include, spec->suite, target,
                           sources, NULL };
    if (run_command(argv, NULL, NULL, err, errlen) < 0)
        goto fail;
    if (rename(tmp, base) < 0) {
        snprintf(err, errlen, "rename %s to %s: %s", tmp, base, strerror(errno));
        goto fail;
    }
    fs_fsync_dir(cache_dir, NULL, 0);
    image_progress(progress, "rootfs: mmdebstrap %.0f s, %s", monotonic_seconds() - t0,
                   fs_human_size(fs_disk_usage(dir), size, sizeof(size)));
    return 0;

fail:
    fs_remove_tree(tmp, NULL, 0);
    return -1;
}

/* Replaces staging/rel with new content. The staging tree is hard-linked
 * to the cached base: write a new inode, never through the old one. */
static int replace_file(const char *staging, const char *rel, const void *data, size_t len,
                        mode_t mode, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/%s", staging, rel) < 0) {
        snprintf(err, errlen, "rootfs: path %s/%s too long", staging, rel);
        return -1;
    }
    if (unlink(path) < 0 && errno != ENOENT) {
        snprintf(err, errlen, "unlink %s: %s", path, strerror(errno));
        return -1;
    }
    return fs_write_file_atomic(path, data, len, mode, err, errlen);
}

int rootfs_make_ext4(const char *base_dir, const char *guestd, unsigned size_mb,
                     const char *work_dir, const char *image_path, FILE *progress, char *err,
                     size_t errlen)
{
    char staging[PATH_MAX], guestd_dst[PATH_MAX], size_arg[32], used[32];
    double t0 = monotonic_seconds();
    if (fs_path(staging, sizeof(staging), "%s/rootfs", work_dir) ||
        fs_path(guestd_dst, sizeof(guestd_dst), "%s%s", staging, INITRAMFS_GUESTD_PATH)) {
        snprintf(err, errlen, "rootfs: path under %s too long", work_dir);
        return -1;
    }
    const char *link_copy[] = { "cp", "-al", base_dir, staging, NULL };
    if (run_command(link_copy, NULL, NULL, err, errlen) < 0)
        return -1;

    static const char hostname[] = "sandbox\n";
    if (replace_file(staging, "etc/hostname", hostname, strlen(hostname), 0644, err, errlen) ||
        /* Empty: no identity baked into the image is shared by all sandboxes. */
        replace_file(staging, "etc/machine-id", "", 0, 0444, err, errlen))
        return -1;
    if (unlink(guestd_dst) < 0 && errno != ENOENT) {
        snprintf(err, errlen, "unlink %s: %s", guestd_dst, strerror(errno));
        return -1;
    }
    if (fs_copy_file(guestd, guestd_dst, 0755, err, errlen) < 0)
        return -1;

    snprintf(size_arg, sizeof(size_arg), "%uM", size_mb);
    const char *mkfs[] = { "mkfs.ext4", "-q", "-F", "-L", "root", "-d", staging, image_path,
                           size_arg, NULL };
    if (run_command(mkfs, NULL, NULL, err, errlen) < 0) {
        unlink(image_path);
        return -1;
    }
    image_progress(progress, "ext4: %u MiB sparse, %s used, in %.1f s", size_mb,
                   fs_human_size(fs_disk_usage(image_path), used, sizeof(used)),
                   monotonic_seconds() - t0);
    return 0;
}
