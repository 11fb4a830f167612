#include "store.h"

#include <btrfsutil.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "store_loop.h"

bool store_is_btrfs(const char *path)
{
    struct statfs sf;
    return statfs(path, &sf) == 0 && sf.f_type == BTRFS_SUPER_MAGIC;
}

/* templates/ and sandboxes/ are subvolumes so they can later be snapshotted
 * on their own (checkpoints, backups). */
static int store_ensure_subvolume(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return 0;
    enum btrfs_util_error e = btrfs_util_create_subvolume(path, 0, NULL, NULL);
    if (e != BTRFS_UTIL_OK) {
        snprintf(err, errlen, "create subvolume %s: %s: %s", path, btrfs_util_strerror(e),
                 strerror(errno));
        return -1;
    }
    return 0;
}

/* Makes (once) and mounts DATA_DIR/store.btrfs on DATA_DIR/store. */
static int store_mount_image(struct store *s, const char *data_dir, unsigned size_gb, char *err,
                             size_t errlen)
{
    if (fs_path(s->image, sizeof(s->image), "%s/store.btrfs", data_dir) < 0) {
        snprintf(err, errlen, "data directory path too long: %s", data_dir);
        return -1;
    }
    if (fs_mkdir_p(s->root, 0700, err, errlen) < 0)
        return -1;
    if (store_is_btrfs(s->root)) {
        /* Mounted by a vmhost that died: take it over. */
        log_warn("reusing the btrfs store left mounted", "store=%s image=%s", s->root, s->image);
        s->mounted_by_us = true;
        return 0;
    }
    if (access(s->image, F_OK) < 0) {
        log_info("data directory is not on btrfs: creating a loop-mounted btrfs image",
                 "data_dir=%s image=%s size_gb=%u", data_dir, s->image, size_gb);
        if (store_loop_create_image(s->image, size_gb, err, errlen) < 0)
            return -1;
    }
    if (store_loop_mount(s->image, s->root, err, errlen) < 0)
        return -1;
    s->mounted_by_us = true;
    log_info("btrfs store mounted", "store=%s image=%s", s->root, s->image);
    return 0;
}

/* A second vmhost on the data directory would share the first's store,
 * take its socket and remove its pooled VMs (they have no record) as
 * leftovers of a crash: one vmhost per data directory. */
static int store_lock(struct store *s, const char *data_dir, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/vmhost.lock", data_dir) < 0) {
        snprintf(err, errlen, "data directory path too long: %s", data_dir);
        return -1;
    }
    s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->lock_fd < 0) {
        snprintf(err, errlen, "open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        snprintf(err, errlen, "data directory %s is in use by another vmhost (%s is locked): "
                              "each node needs a data directory of its own", data_dir, path);
        close(s->lock_fd);
        s->lock_fd = -1;
        return -1;
    }
    return 0;
}

int store_open(struct store *s, const char *data_dir, unsigned size_gb, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->lock_fd = -1;
    if (fs_mkdir_p(data_dir, 0700, err, errlen) < 0 || store_lock(s, data_dir, err, errlen) < 0)
        return -1;
    int rc;
    if (store_is_btrfs(data_dir)) {
        rc = fs_path(s->root, sizeof(s->root), "%s", data_dir);
    } else {
        rc = fs_path(s->root, sizeof(s->root), "%s/store", data_dir);
        if (rc == 0 && store_mount_image(s, data_dir, size_gb ? size_gb : STORE_DEFAULT_SIZE_GB,
                                         err, errlen) < 0) {
            char why[1024];
            snprintf(why, sizeof(why), "%s", err);
            snprintf(err, errlen,
                     "cannot set up the btrfs store (data directory %s is not on btrfs, so vmhost "
                     "loop-mounts an image there; this needs root, loop devices and mkfs.btrfs "
                     "from btrfs-progs): %s",
                     data_dir, why);
            store_close(s);
            return -1;
        }
    }
    if (rc < 0 || fs_path(s->templates_dir, sizeof(s->templates_dir), "%s/templates", s->root) ||
        fs_path(s->sandboxes_dir, sizeof(s->sandboxes_dir), "%s/sandboxes", s->root)) {
        snprintf(err, errlen, "data directory path too long: %s", data_dir);
        store_close(s);
        return -1;
    }
    if (store_ensure_subvolume(s->templates_dir, err, errlen) < 0 ||
        store_ensure_subvolume(s->sandboxes_dir, err, errlen) < 0) {
        store_close(s);
        return -1;
    }
    return 0;
}

static void store_unmount(struct store *s)
{
    if (!s->mounted_by_us)
        return;
    s->mounted_by_us = false;
    if (umount2(s->root, 0) == 0) {
        log_info("btrfs store unmounted", "store=%s", s->root);
        return;
    }
    /* A VM still holds files there (one kept running for the next vmhost
     * to adopt, or a killed vmhost's that build-image found): the store
     * stays mounted, and the next vmhost takes it over. A lazy unmount
     * would hide it, and the next one would mount the image a second time
     * under the running VMs. */
    log_warn("btrfs store busy: left mounted for the next vmhost", "store=%s error=\"%s\"",
             s->root, strerror(errno));
}

void store_close(struct store *s)
{
    store_unmount(s);
    if (s->lock_fd >= 0)
        close(s->lock_fd); /* the next vmhost may have the data directory */
    s->lock_fd = -1;
}

int store_clone_file(const char *src, const char *dst, char *err, size_t errlen)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        snprintf(err, errlen, "open %s: %s", src, strerror(errno));
        return -1;
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        snprintf(err, errlen, "create %s: %s", dst, strerror(errno));
        close(in);
        return -1;
    }
    int rc = ioctl(out, FICLONE, in);
    close(out);
    close(in);
    if (rc == 0)
        return 0;
    return fs_copy_file(src, dst, 0600, err, errlen);
}

int store_import_file(const struct store *s, const char *src, const char *name, char *out,
                      size_t outlen, char *err, size_t errlen)
{
    char tmp[PATH_MAX];
    if (fs_path(out, outlen, "%s/%s", s->templates_dir, name) < 0 ||
        fs_path(tmp, sizeof(tmp), "%s/.import-%s", s->templates_dir, name) < 0) {
        snprintf(err, errlen, "store path too long for %s", name);
        return -1;
    }
    if (access(out, F_OK) == 0)
        return 0;
    int64_t started = clock_monotonic_ms();
    unlink(tmp); /* left by a crash during an earlier import */
    if (fs_copy_file(src, tmp, 0600, err, errlen) < 0)
        goto fail;
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) < 0 || rename(tmp, out) < 0) {
        snprintf(err, errlen, "import %s as %s: %s", src, out, strerror(errno));
        if (fd >= 0)
            close(fd);
        goto fail;
    }
    close(fd);
    log_info("imported into the store", "src=%s dst=%s ms=%lld", src, out,
             (long long)(clock_monotonic_ms() - started));
    return fs_fsync_dir(s->templates_dir, err, errlen);
fail:
    unlink(tmp);
    return -1;
}

/* Below this much free space a failed write is put down to a full store. */
#define STORE_FULL_BELOW (64ull << 20)

/* btrfs counts space taken or freed only once its transaction commits
 * (a file deleted a moment ago still counts as used): with commit, the
 * store's file system is synced first, for the true figure. */
static unsigned long long store_free_bytes(const struct store *s, bool commit)
{
    if (commit) {
        int fd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
            syncfs(fd);
            close(fd);
        }
    }
    struct statvfs sv;
    if (statvfs(s->root, &sv) < 0)
        return ~0ull; /* unknown: do not claim it is full */
    return (unsigned long long)sv.f_bavail * sv.f_frsize;
}

/* "the store /d/store (image /d/store.btrfs)" or "the store /d". */
static void store_name(const struct store *s, char *out, size_t outlen)
{
    if (s->image[0])
        snprintf(out, outlen, "the store %.2000s (image %.2000s)", s->root, s->image);
    else
        snprintf(out, outlen, "the store %s", s->root);
}

int store_require_free(const struct store *s, unsigned long long need, const char *what,
                       char *err, size_t errlen)
{
    /* The sync costs only when the quick look says it is short. */
    unsigned long long avail = store_free_bytes(s, false);
    if (avail < need)
        avail = store_free_bytes(s, true);
    if (avail >= need)
        return 0;
    char name[2 * PATH_MAX], a[32], n[32];
    store_name(s, name, sizeof(name));
    snprintf(err, errlen, "%s is full: %s free, %s needs up to %s", name,
             fs_human_size(avail, a, sizeof(a)), what, fs_human_size(need, n, sizeof(n)));
    errno = ENOSPC;
    return -1;
}

bool store_full(const struct store *s, char *err, size_t errlen)
{
    /* With the failed write's partial files still there. */
    unsigned long long avail = store_free_bytes(s, true);
    if (avail >= STORE_FULL_BELOW)
        return false;
    char name[2 * PATH_MAX], a[32], cause[1024];
    store_name(s, name, sizeof(name));
    snprintf(cause, sizeof(cause), "%s", err);
    snprintf(err, errlen, "%s is full (%s free): %s", name, fs_human_size(avail, a, sizeof(a)),
             cause);
    return true;
}
