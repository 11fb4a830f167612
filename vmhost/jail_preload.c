/* airlock-qemu-preload.so: loaded into every jailed QEMU (LD_PRELOAD) to
 * do the two things a jail cannot do from outside (docs/jail.md):
 *
 * - QEMU opens a memory-backend-file O_RDWR even when it maps it privately
 *   (share=off; QEMU 7.2 has no read-only-file, writable-RAM option), so
 *   the template memory file every sandbox restores from would have to be
 *   writable by each QEMU, and one compromised QEMU could rewrite every
 *   other sandbox's memory. The file named by AIRLOCK_JAIL_READONLY is
 *   opened read-only instead; a private mapping of it is still writable
 *   (copy-on-write), and the file itself is on a read-only mount and owned
 *   by root, so the kernel refuses any write whatever QEMU asks.
 * - A process whose uid was changed before exec is dumpable again after
 *   it: this makes QEMU undumpable (no core, no ptrace by its own uid,
 *   /proc/PID owned by root) before its main() runs.
 *
 * Nothing else: every other open goes to the kernel unchanged. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *readonly_path;

__attribute__((constructor)) static void jail_preload_init(void)
{
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    readonly_path = getenv("AIRLOCK_JAIL_READONLY");
}

static int open_flags(const char *path, int flags)
{
    if (readonly_path && path && (flags & O_ACCMODE) == O_RDWR && !(flags & O_CREAT) &&
        strcmp(path, readonly_path) == 0)
        return (flags & ~O_ACCMODE) | O_RDONLY;
    return flags;
}

static int open_at(int dirfd, const char *path, int flags, mode_t mode)
{
    return (int)syscall(SYS_openat, dirfd, path, open_flags(path, flags), mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* Every entry point glibc has for open(2), fortified ones included. */
int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return open_at(AT_FDCWD, path, flags, mode);
}


int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return open_at(dirfd, path, flags, mode);
}


int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
    return open_at(AT_FDCWD, path, flags, 0);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));
int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));
int __open64_2(const char *path, int flags) __attribute__((alias("__open_2")));
