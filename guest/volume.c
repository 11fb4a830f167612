/* VolumeRequest (protos/guest.proto, docs/volumes.md): the volume slots'
 * disks, found by their serial, mounted where the host says, synced,
 * frozen for a host-side snapshot and grown.
 *
 * The host formats every volume; guestd never makes a file system. A
 * request waits (bounded) for the disk's size the host names: after a
 * restore the host tells the guest of the image it put in the slot, and
 * the kernel's new capacity may land a moment after the request does. The
 * loop is single-threaded, so the wait is short and bounded. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "guestd_state.h"
#include "loop.h"
#include "request_handlers.h"
#include "send.h"
#include "volume_path.h"

/* linux/ext4.h is not a uapi header: the online resize's ioctl number. */
#ifndef EXT4_IOC_RESIZE_FS
#define EXT4_IOC_RESIZE_FS _IOW('f', 16, uint64_t)
#endif

#define VOLUME_SLOTS 4
#define VOLUME_SERIAL_PREFIX "airlock-vol"
#define VOLUME_SIZE_WAIT_MS 3000
#define VOLUME_SIZE_POLL_MS 10
#define VOLUME_THAW_AFTER_MS 10000
#define VOLUME_MSG_MAX 512

/* One slot's mount: its mount point (to sync, freeze and grow) and a
 * freeze's self-thaw timer. guestd's own; a restore brings the template's
 * (nothing mounted), so every VM starts with none. */
static struct volume_slot {
    char path[PATH_MAX];   /* "" = not mounted */
    char dev[64];          /* /dev/vdX */
    bool read_only;
    uint64_t thaw_timer;   /* 0 = not frozen */
} slots[VOLUME_SLOTS];

/* The disk of slot: /sys/block/<name>/serial is "airlock-vol<slot>".
 * 0, or ENODEV. */
static int find_disk(unsigned slot, char *name, size_t len)
{
    char want[32];
    snprintf(want, sizeof(want), VOLUME_SERIAL_PREFIX "%u", slot);
    DIR *d = opendir("/sys/block");
    if (!d)
        return ENODEV;
    int rc = ENODEV;
    for (struct dirent *de; rc && (de = readdir(d));) {
        if (strncmp(de->d_name, "vd", 2) != 0)
            continue;
        char path[PATH_MAX], serial[64] = "";
        snprintf(path, sizeof(path), "/sys/block/%s/serial", de->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        if (fgets(serial, sizeof(serial), f))
            serial[strcspn(serial, "\n")] = '\0';
        fclose(f);
        if (strcmp(serial, want) == 0 && strlen(de->d_name) < len) {
            snprintf(name, len, "%s", de->d_name);
            rc = 0;
        }
    }
    closedir(d);
    return rc;
}

static uint64_t disk_bytes(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/sys/block/%s/size", name);
    FILE *f = fopen(path, "re");
    unsigned long long sectors = 0;
    if (f) {
        if (fscanf(f, "%llu", &sectors) != 1)
            sectors = 0;
        fclose(f);
    }
    return (uint64_t)sectors * 512;
}

/* Waits (bounded) until the disk shows at least want bytes: 0 or EAGAIN. */
static int wait_for_size(const char *name, uint64_t want)
{
    int64_t deadline = clock_monotonic_ms() + VOLUME_SIZE_WAIT_MS;
    while (disk_bytes(name) < want) {
        if (clock_monotonic_ms() >= deadline)
            return EAGAIN;
        struct timespec ts = { 0, VOLUME_SIZE_POLL_MS * 1000000L };
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* The shared rule (volume_path.h) as an errno. */
static int check_path(const char *p, char *msg, size_t len)
{
    return volume_path_check(p, PATH_MAX, msg, len) < 0 ? EINVAL : 0;
}

static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *s = buf + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return errno;
        *s = c;
        if (!c)
            return 0;
    }
}

/* Grows the mounted file system at path to its disk when the disk is
 * larger (online; ext4 takes the new size in blocks). */
static int grow_fs(const char *path, const char *dev, char *msg, size_t len)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(msg, len, "open %.300s: %s", path, strerror(errno));
        return errno;
    }
    struct statvfs st;
    int rc = 0;
    uint64_t disk = disk_bytes(dev + 5); /* /dev/ */
    if (fstatvfs(fd, &st) < 0) {
        rc = errno;
        snprintf(msg, len, "statfs %.300s: %s", path, strerror(rc));
    } else if (st.f_frsize && disk / st.f_frsize > st.f_blocks) {
        uint64_t blocks = disk / st.f_frsize;
        if (ioctl(fd, EXT4_IOC_RESIZE_FS, &blocks) < 0) {
            rc = errno;
            snprintf(msg, len, "grow the file system at %.300s: %s", path, strerror(rc));
        }
    }
    close(fd);
    return rc;
}

static int volume_mount(unsigned slot, const char *path, bool ro, uint64_t size, char *msg,
                        size_t len)
{
    struct volume_slot *s = &slots[slot];
    int rc = check_path(path, msg, len);
    if (rc)
        return rc;
    if (s->path[0]) {
        snprintf(msg, len, "slot %u: already mounted at %.300s", slot, s->path);
        return EBUSY;
    }
    char name[32];
    if ((rc = find_disk(slot, name, sizeof(name)))) {
        snprintf(msg, len, "slot %u: no disk with serial " VOLUME_SERIAL_PREFIX "%u", slot, slot);
        return rc;
    }
    if (size == 0 || (rc = wait_for_size(name, size))) {
        snprintf(msg, len, "slot %u (%s): the disk shows %llu bytes, not %llu", slot, name,
                 (unsigned long long)disk_bytes(name), (unsigned long long)size);
        return rc ? rc : EINVAL;
    }
    if ((rc = mkdir_p(path))) {
        snprintf(msg, len, "slot %u: make %.300s: %s", slot, path, strerror(rc));
        return rc;
    }
    /* Again after the walk: a symbolic link on the way may lead elsewhere. */
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        rc = errno;
        snprintf(msg, len, "slot %u: %.300s: %s", slot, path, strerror(rc));
        return rc;
    }
    if ((rc = check_path(real, msg, len)))
        return rc;
    snprintf(s->dev, sizeof(s->dev), "/dev/%s", name);
    /* noload: a read-only mount replays no journal (it writes nothing). */
    if (mount(s->dev, real, "ext4", MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0),
              ro ? "noload" : "") < 0) {
        rc = errno;
        snprintf(msg, len, "slot %u: mount %s at %.300s: %s", slot, s->dev, real, strerror(rc));
        return rc;
    }
    snprintf(s->path, sizeof(s->path), "%s", real);
    s->read_only = ro;
    return ro ? 0 : grow_fs(real, s->dev, msg, len);
}

static void thaw_now(struct volume_slot *s)
{
    int fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ioctl(fd, FITHAW, 0);
        close(fd);
    }
}

/* A freeze the host never thawed (it died mid-snapshot) ends by itself:
 * a frozen file system stops every writer in the guest. */
static void thaw_timer_fired(void *ctx)
{
    struct volume_slot *s = ctx;
    s->thaw_timer = 0;
    thaw_now(s);
}

/* SYNC, FREEZE, THAW on a mounted slot. */
static int volume_fs_op(struct guestd *g, unsigned slot, Airlock__Guest__V1__VolumeOp op,
                        char *msg, size_t len)
{
    struct volume_slot *s = &slots[slot];
    int fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(msg, len, "slot %u: open %.300s: %s", slot, s->path, strerror(errno));
        return errno;
    }
    int rc = 0;
    const char *what = "sync";
    if (op == AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_SYNC) {
        rc = syncfs(fd) < 0 ? errno : 0;
    } else if (op == AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_FREEZE) {
        what = "freeze";
        /* A read-only mount has nothing to flush: frozen as it is. */
        if (!s->read_only && !s->thaw_timer) {
            rc = ioctl(fd, FIFREEZE, 0) < 0 ? errno : 0;
            if (!rc)
                s->thaw_timer = loop_add_timer(g->loop, VOLUME_THAW_AFTER_MS, thaw_timer_fired, s);
        }
    } else {
        what = "thaw";
        if (s->thaw_timer) {
            loop_cancel_timer(g->loop, s->thaw_timer);
            s->thaw_timer = 0;
            rc = ioctl(fd, FITHAW, 0) < 0 ? errno : 0;
        }
    }
    close(fd);
    if (rc)
        snprintf(msg, len, "slot %u: %s %.300s: %s", slot, what, s->path, strerror(rc));
    return rc;
}

static int volume_serve(struct guestd *g, const Airlock__Guest__V1__VolumeRequest *r, char *msg,
                        size_t len)
{
    if (r->slot >= VOLUME_SLOTS) {
        snprintf(msg, len, "slot %u: there are %d slots", r->slot, VOLUME_SLOTS);
        return EINVAL;
    }
    struct volume_slot *s = &slots[r->slot];
    if (r->op == AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_MOUNT) {
        char path[PATH_MAX];
        if (r->path.len == 0 || r->path.len >= sizeof(path) ||
            memchr(r->path.data, '\0', r->path.len)) {
            snprintf(msg, len, "slot %u: path: required, at most %d bytes, no NUL", r->slot,
                     PATH_MAX - 1);
            return EINVAL;
        }
        memcpy(path, r->path.data, r->path.len);
        path[r->path.len] = '\0';
        return volume_mount(r->slot, path, r->read_only, r->size_bytes, msg, len);
    }
    bool known = r->op == AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_SYNC ||
                 r->op == AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_FREEZE ||
                 r->op == AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_THAW ||
                 r->op == AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_GROW;
    if (!known) {
        snprintf(msg, len, "slot %u: unknown operation %d", r->slot, (int)r->op);
        return EINVAL;
    }
    if (!s->path[0]) {
        snprintf(msg, len, "slot %u: nothing mounted", r->slot);
        return ENOENT;
    }
    if (r->op != AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_GROW)
        return volume_fs_op(g, r->slot, r->op, msg, len);
    if (s->read_only) {
        snprintf(msg, len, "slot %u: %.300s is mounted read-only", r->slot, s->path);
        return EROFS;
    }
    if (wait_for_size(s->dev + 5, r->size_bytes)) {
        snprintf(msg, len, "slot %u (%s): the disk shows %llu bytes, not %llu", r->slot, s->dev,
                 (unsigned long long)disk_bytes(s->dev + 5), (unsigned long long)r->size_bytes);
        return EAGAIN;
    }
    return grow_fs(s->path, s->dev, msg, len);
}

void volume_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    char msg[VOLUME_MSG_MAX] = "";
    int rc = volume_serve(g, frame->volume, msg, sizeof(msg));
    guestd_send_result(g, id, rc, "%s", rc ? msg : "");
}
