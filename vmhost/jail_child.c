/* The jail's child, between clone3 and execve: it is PID 1 of a new PID
 * namespace with new mount, IPC and UTS namespaces, a copy of a
 * multithreaded vmhost made without glibc's fork, so only system calls
 * here (no malloc, no stdio, no wrapper that involves other threads): every
 * path was built by the parent (jail.c). Order matters: join the
 * cgroup and the network namespace and build the root while still root,
 * then drop to the jail's uid, and exec last. A failure is written to the
 * log (QEMU's qemu.log, which vmhost reads when the start fails) and ends
 * the child with 126. */
#include "jail_internal.h"
#include "qemu_child.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define JAIL_CHILD_TAP_FD 3
#define JAIL_CHILD_LOCK_FD 4
#define JAIL_NOFILE 1024

static void put(int fd, const char *s)
{
    ssize_t ignored = write(fd, s, strlen(s));
    (void)ignored;
}

static void __attribute__((noreturn)) fail(int log_fd, const char *step, const char *what)
{
    int e = errno;
    char num[16];
    size_t n = sizeof(num);
    num[--n] = '\0';
    do {
        num[--n] = (char)('0' + e % 10);
        e /= 10;
    } while (e && n);
    put(log_fd, "vmhost jail: ");
    put(log_fd, step);
    put(log_fd, " ");
    put(log_fd, what ? what : "");
    put(log_fd, ": errno ");
    put(log_fd, num + n);
    put(log_fd, "\n");
    _exit(126);
}

/* A bind mount made read-only (or kept writable), never with devices or
 * set-uid programs: the remount is what applies the flags to a bind. */
static void bind(int log_fd, const struct jail_mount *m)
{
    if (m->kind == JAIL_BIND_DIR ? mkdir(m->target, 0755) < 0 && errno != EEXIST
                                 : mknod(m->target, S_IFREG | 0600, 0) < 0 && errno != EEXIST)
        fail(log_fd, "make mount point", m->target);
    if (mount(m->source, m->target, NULL, MS_BIND | MS_REC, NULL) < 0)
        fail(log_fd, "bind", m->source);
    unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV;
    if (!m->writable)
        flags |= MS_RDONLY;
    if (m->writable)
        flags |= MS_NOEXEC; /* what QEMU may write it may not run */
    if (mount(NULL, m->target, NULL, flags, NULL) < 0)
        fail(log_fd, "remount", m->target);
}

static void place(int log_fd, const struct jail_mount *m, uid_t uid)
{
    switch (m->kind) {
    case JAIL_BIND_DIR:
    case JAIL_BIND_FILE:
        bind(log_fd, m);
        break;
    case JAIL_SYMLINK:
        if (symlink(m->source, m->target) < 0)
            fail(log_fd, "symlink", m->target);
        break;
    case JAIL_DEV_NODE:
        if (mknod(m->target, S_IFCHR | m->mode, m->dev) < 0 || chmod(m->target, m->mode) < 0)
            fail(log_fd, "mknod", m->target);
        /* kvm (0600) is the jail's own; null, zero, urandom are 0666. */
        if (m->mode == 0600 && chown(m->target, uid, uid) < 0)
            fail(log_fd, "chown", m->target);
        break;
    }
}

static void build_root(int log_fd, const struct jail *jl)
{
    const struct jailer *j = jl->jailer;
    /* Nothing mounted here reaches vmhost's namespace, and nothing of the
     * host mounted later reaches the jail. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        fail(log_fd, "make mounts private", "/");
    if (mount("tmpfs", j->scratch_dir, "tmpfs", MS_NOSUID | MS_NOEXEC,
              "mode=0755,size=64k,nr_inodes=64") < 0)
        fail(log_fd, "mount root tmpfs", j->scratch_dir);
    if (chdir(j->scratch_dir) < 0)
        fail(log_fd, "chdir", j->scratch_dir);
    if (mkdir("dev", 0755) < 0 || mkdir("proc", 0555) < 0 || mkdir("etc", 0755) < 0)
        fail(log_fd, "mkdir", "dev, proc, etc");
    for (size_t i = 0; i < j->n_system; i++)
        place(log_fd, &j->system[i], jl->uid);
    for (size_t i = 0; i < jl->n_mounts; i++)
        place(log_fd, &jl->mounts[i], jl->uid);
    /* pivot_root(".", "."): the old root ends up on top of the new one and
     * is detached at once, so no path leads back to the host's tree. */
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        fail(log_fd, "pivot_root", j->scratch_dir);
    if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
        fail(log_fd, "detach the old root", "/");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        fail(log_fd, "mount", "/proc");
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) < 0)
        fail(log_fd, "remount read-only", "/");
    if (chdir("/vm") < 0)
        fail(log_fd, "chdir", "/vm");
}

static void limit(int log_fd, int resource, rlim_t value, const char *name)
{
    struct rlimit r = { value, value };
    if (setrlimit(resource, &r) < 0)
        fail(log_fd, "setrlimit", name);
}

/* Every capability goes: the bounding set while we still may drop it,
 * then the uid change clears permitted and effective, and capset the
 * inheritable set; no_new_privs keeps it so across exec. */
static void drop_privileges(int log_fd, const struct jail *jl)
{
    gid_t gid = (gid_t)jl->uid;
    for (int cap = 0; cap <= jl->jailer->cap_last; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            fail(log_fd, "drop capability", "bounding set");
    /* The raw system calls: glibc's wrappers would have every thread of
     * vmhost change its ids too, and this copy has none of them, so it
     * waited forever for a thread that was starting when it was cloned. */
    if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, gid, gid, gid) < 0)
        fail(log_fd, "setresgid", "jail gid");
    if (syscall(SYS_setresuid, jl->uid, jl->uid, jl->uid) < 0)
        fail(log_fd, "setresuid", "jail uid");
    struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capset, &hdr, data) < 0)
        fail(log_fd, "capset", "empty");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        fail(log_fd, "prctl", "no_new_privs");
}

void jail_child_main(const struct jail *jl, char *const argv[], char *const envp[], int log_fd,
                     int tap_fd, int nice)
{
    if (qemu_child_begin(nice) < 0)
        fail(log_fd, "setsid, nice", "");
    umask(0);
    for (size_t i = 0; i < jl->n_procs_fds; i++)
        if (write(jl->procs_fds[i], "0", 1) != 1)
            fail(log_fd, "join cgroup", jl->leaf);
    if (jl->netns_fd >= 0 && setns(jl->netns_fd, CLONE_NEWNET) < 0)
        fail(log_fd, "setns", "the sandbox's network namespace");
    if (jl->netns_fd < 0 && unshare(CLONE_NEWNET) < 0)
        fail(log_fd, "unshare", "a network namespace");
    if (sethostname("airlock-vm", strlen("airlock-vm")) < 0)
        fail(log_fd, "sethostname", "airlock-vm");
    build_root(log_fd, jl);

    limit(log_fd, RLIMIT_CORE, 0, "core");
    limit(log_fd, RLIMIT_NOFILE, JAIL_NOFILE, "nofile");
    limit(log_fd, RLIMIT_FSIZE, jl->max_file_bytes, "fsize");

    if (qemu_child_stdio(log_fd) < 0)
        fail(log_fd, "stdio", "/dev/null");
    /* fd 3: the TAP (QEMU's -netdev fd=3); fd 4: the uid's claim, held
     * for as long as QEMU lives. Both go high first, so neither can land
     * on the other's number. */
    int tap_high = tap_fd >= 0 ? fcntl(tap_fd, F_DUPFD, 64) : -1;
    int lock_high = fcntl(jl->lock_fd, F_DUPFD, 64);
    if ((tap_fd >= 0 && tap_high < 0) || lock_high < 0 ||
        (tap_high >= 0 && dup2(tap_high, JAIL_CHILD_TAP_FD) < 0) ||
        dup2(lock_high, JAIL_CHILD_LOCK_FD) < 0)
        fail(2, "dup2", "tap and uid claim");
    if (tap_high < 0)
        close(JAIL_CHILD_TAP_FD);
    close_range(JAIL_CHILD_LOCK_FD + 1, ~0u, 0);

    drop_privileges(2, jl);
    if (jail_filter_install(&jl->jailer->filter) < 0)
        fail(2, "install", "the system call filter");
    execve(argv[0], argv, envp);
    fail(2, "execve", argv[0]);
}
