/* The jail's system call filter, built with libseccomp. */
#include "jail_filter.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Refused with EPERM: nothing QEMU does once its devices are open. */
static const char *const denied[] = {
    /* namespaces and the root */
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    /* other processes */
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "process_madvise",
    /* the kernel itself */
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "syslog", "quotactl", "iopl", "ioperm", "vhangup",
    /* surfaces a VMM has no use for */
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "fanotify_init", "personality",
    /* files by handle: a handle reaches past the root */
    "open_by_handle_at", "name_to_handle_at",
};

/* Answered "not implemented", so callers fall back: glibc's thread start
 * to clone (whose flags a filter can see; clone3's are in memory), QEMU's
 * event loop to epoll. */
static const char *const absent[] = {
    "clone3", "io_uring_setup", "io_uring_enter", "io_uring_register",
};

/* clone with any of these makes a namespace. */
static const unsigned long namespace_flags[] = {
    CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
    CLONE_NEWCGROUP,
};

static int add_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    int rc = 0;
    const char *what = "";
    for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]) && rc == 0; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
                              seccomp_syscall_resolve_name(what = denied[i]), 0);
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]) && rc == 0; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
                              seccomp_syscall_resolve_name(what = absent[i]), 0);
    for (size_t i = 0; i < sizeof(namespace_flags) / sizeof(namespace_flags[0]) && rc == 0; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, namespace_flags[i], namespace_flags[i]));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                              SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socketpair), 1,
                              SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    if (rc < 0)
        snprintf(err, errlen, "jail: seccomp rule for %s: %s", what, strerror(-rc));
    return rc < 0 ? -1 : 0;
}

/* The BPF libseccomp made, read back from a memory file. */
static int export_program(scmp_filter_ctx ctx, struct jail_filter *f, char *err, size_t errlen)
{
    int fd = memfd_create("airlock-jail-filter", MFD_CLOEXEC);
    int rc = fd < 0 ? -errno : seccomp_export_bpf(ctx, fd);
    off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
        size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
        snprintf(err, errlen, "jail: seccomp filter export: %s",
                 rc < 0 ? strerror(-rc) : "not a BPF program");
        goto fail;
    }
    f->insns = malloc((size_t)size);
    if (!f->insns || pread(fd, f->insns, (size_t)size, 0) != size) {
        snprintf(err, errlen, "jail: seccomp filter read back: %s", strerror(errno));
        goto fail;
    }
    f->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
    close(fd);
    return 0;
fail:
    free(f->insns);
    f->insns = NULL;
    if (fd >= 0)
        close(fd);
    return -1;
}

int jail_filter_build(struct jail_filter *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof(*f));
    /* Everything else allowed; a call of another architecture (int 0x80,
     * x32) kills the process: libseccomp's default for a foreign arch. */
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf(err, errlen, "jail: seccomp_init failed");
        return -1;
    }
    int rc = add_rules(ctx, err, errlen) < 0 ? -1 : export_program(ctx, f, err, errlen);
    seccomp_release(ctx);
    return rc;
}

void jail_filter_free(struct jail_filter *f)
{
    free(f->insns);
    f->insns = NULL;
    f->len = 0;
}

int jail_filter_install(const struct jail_filter *f)
{
    struct sock_fprog prog = { .len = f->len, .filter = f->insns };
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}
