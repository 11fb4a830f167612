#include "pid1.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "trust_store.h"

struct pid1_mount {
    const char *source, *target, *fstype, *options;
    unsigned long flags;
};

/* In order: /dev before /dev/pts and /dev/shm. ptmxmode=0666 lets every
 * user open PTYs. */
static const struct pid1_mount pid1_mounts[] = {
    { "proc", "/proc", "proc", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC },
    { "sysfs", "/sys", "sysfs", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC },
    { "devtmpfs", "/dev", "devtmpfs", "mode=0755", MS_NOSUID },
    { "devpts", "/dev/pts", "devpts", "gid=5,mode=0620,ptmxmode=0666", MS_NOSUID | MS_NOEXEC },
    { "tmpfs", "/dev/shm", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV },
    { "tmpfs", "/run", "tmpfs", "mode=0755", MS_NOSUID | MS_NODEV },
    { "tmpfs", "/tmp", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV },
};

/* A different device than its parent (the initramfs may have moved some
 * mounts over already; mounting again would hide what is under them). */
static bool is_mountpoint(const char *path)
{
    char parent[256];
    struct stat st, pst;
    snprintf(parent, sizeof(parent), "%s/..", path);
    if (stat(path, &st) < 0 || stat(parent, &pst) < 0)
        return false;
    return st.st_dev != pst.st_dev || st.st_ino == pst.st_ino;
}

static void pid1_mount_all(void)
{
    for (size_t i = 0; i < sizeof(pid1_mounts) / sizeof(pid1_mounts[0]); i++) {
        const struct pid1_mount *m = &pid1_mounts[i];
        if (is_mountpoint(m->target))
            continue;
        if (mkdir(m->target, 0755) < 0 && errno != EEXIST)
            log_warn("mkdir failed", "path=%s errno=%d", m->target, errno);
        if (mount(m->source, m->target, m->fstype, m->flags, m->options) < 0 && errno != EBUSY)
            log_error("mount failed", "target=%s fstype=%s errno=%d error=\"%s\"", m->target,
                      m->fstype, errno, strerror(errno));
    }
}

/* devtmpfs has no /dev/fd & co; shells need them for <(...) and friends. */
static void pid1_dev_links(void)
{
    static const char *const links[][2] = {
        { "/proc/self/fd", "/dev/fd" },
        { "/proc/self/fd/0", "/dev/stdin" },
        { "/proc/self/fd/1", "/dev/stdout" },
        { "/proc/self/fd/2", "/dev/stderr" },
    };
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
        if (symlink(links[i][0], links[i][1]) < 0 && errno != EEXIST)
            log_warn("symlink failed", "path=%s errno=%d", links[i][1], errno);
}

static void pid1_console(void)
{
    int fd = open("/dev/console", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return;
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        dup2(fd, 0);
        close(fd);
    }
}

static void pid1_hostname(void)
{
    char name[256] = "";
    if (gethostname(name, sizeof(name)) == 0 && name[0] && strcmp(name, "(none)") != 0)
        return;
    if (sethostname("sandbox", 7) < 0)
        log_warn("sethostname failed", "errno=%d", errno);
}

/* Room for many streams and background processes. */
static void pid1_limits(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536) {
        rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

void pid1_setup(void)
{
    pid1_mount_all();
    pid1_console();
    pid1_dev_links();
    pid1_hostname();
    pid1_limits();
    /* Before the template snapshot, so a session's CA install only
     * overwrites the slot (trust_store.h). */
    char msg[256];
    if (trust_store_prepare(&trust_store_system, msg, sizeof(msg)) != 0)
        log_warn("sandbox CA slot not reserved", "error=\"%s\"", msg);
    char name[256] = "";
    gethostname(name, sizeof(name));
    log_info("pid 1 setup done", "hostname=%s", name);
}

void stdio_ensure_open(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int n = open("/dev/null", O_RDWR);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}
