#include "store_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include "fsutil.h"

/* Another process may take the free device between our two calls. */
#define STORE_LOOP_ATTEMPTS 16

int store_loop_create_image(const char *image, unsigned size_gb, char *err, size_t errlen)
{
    char tmp[PATH_MAX];
    if (fs_path(tmp, sizeof(tmp), "%s.tmp", image) < 0) {
        snprintf(err, errlen, "store image path too long: %s", image);
        return -1;
    }
    unlink(tmp); /* left by a crash during an earlier mkfs */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "create %s: %s", tmp, strerror(errno));
        return -1;
    }
    int rc = ftruncate(fd, (off_t)size_gb << 30);
    int saved = errno;
    close(fd);
    if (rc < 0) {
        snprintf(err, errlen, "size %s to %u GiB: %s", tmp, size_gb, strerror(saved));
        goto fail;
    }
    const char *const mkfs[] = { "mkfs.btrfs", "-q", "-f", tmp, NULL };
    if (run_command(mkfs, NULL, NULL, err, errlen) < 0)
        goto fail;
    fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) < 0 || rename(tmp, image) < 0) {
        snprintf(err, errlen, "finish %s: %s", image, strerror(errno));
        if (fd >= 0)
            close(fd);
        goto fail;
    }
    close(fd);
    return 0;
fail:
    unlink(tmp);
    return -1;
}

/* Binds backing_fd to a free loop device; returns the device's fd. */
static int loop_attach(int backing_fd, const char *image, char *dev, size_t devlen, char *err,
                       size_t errlen)
{
    int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (ctl < 0) {
        snprintf(err, errlen, "open /dev/loop-control: %s (loop devices are needed to mount "
                              "the btrfs store; or put the data directory on btrfs)",
                 strerror(errno));
        return -1;
    }
    int loop_fd = -1;
    for (int attempt = 0; attempt < STORE_LOOP_ATTEMPTS && loop_fd < 0; attempt++) {
        int n = ioctl(ctl, LOOP_CTL_GET_FREE);
        if (n < 0) {
            snprintf(err, errlen, "no free loop device: %s", strerror(errno));
            break;
        }
        snprintf(dev, devlen, "/dev/loop%d", n);
        int fd = open(dev, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            snprintf(err, errlen, "open %s: %s", dev, strerror(errno));
            break;
        }
        struct loop_config lc = { .fd = (unsigned)backing_fd };
        lc.info.lo_flags = LO_FLAGS_AUTOCLEAR;
        snprintf((char *)lc.info.lo_file_name, sizeof(lc.info.lo_file_name), "%s", image);
        if (ioctl(fd, LOOP_CONFIGURE, &lc) == 0) {
            loop_fd = fd;
        } else {
            int e = errno;
            close(fd);
            snprintf(err, errlen, "attach %s to %s: %s", image, dev, strerror(e));
            if (e != EBUSY) /* EBUSY: someone took it first; try the next one */
                break;
        }
    }
    close(ctl);
    return loop_fd;
}

int store_loop_mount(const char *image, const char *dir, char *err, size_t errlen)
{
    int backing = open(image, O_RDWR | O_CLOEXEC);
    if (backing < 0) {
        snprintf(err, errlen, "open %s: %s", image, strerror(errno));
        return -1;
    }
    char dev[32];
    int loop_fd = loop_attach(backing, image, dev, sizeof(dev), err, errlen);
    close(backing);
    if (loop_fd < 0)
        return -1;
    int rc = mount(dev, dir, "btrfs", 0, NULL);
    if (rc < 0)
        snprintf(err, errlen, "mount %s (%s) on %s: %s", dev, image, dir, strerror(errno));
    /* With autoclear, closing our fd detaches the device unless the mount
     * holds it: a failed mount leaves nothing behind. */
    close(loop_fd);
    return rc;
}
