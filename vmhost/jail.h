/* The jail every QEMU runs in (docs/jail.md): a uid of its own from a
 * configured range, no capabilities, no_new_privs, new mount, PID, IPC and
 * UTS namespaces, pivot_root into a root holding only its own files, the
 * sandbox's network namespace, a cgroup leaf with memory, CPU and pids
 * limits, bounded rlimits, and QEMU's own seccomp filter (vm.c adds
 * -sandbox). Firecracker's jailer is the model.
 *
 * A jailer is the node's: it owns the uid range and the cgroup parent. A
 * jail is one QEMU's: jail_open claims a uid (a lock file the QEMU itself
 * holds, so the claim outlives a vmhost that is killed and is seen by every
 * vmhost on the machine), makes the cgroup leaf and hands the files QEMU
 * writes to that uid; jail_spawn starts QEMU in it; jail_close undoes it
 * once QEMU is gone. */
#ifndef AIRLOCK_JAIL_H
#define AIRLOCK_JAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct jailer_config {
    uid_t uid_base;            /* uids (and gids) base .. base+count-1 are the jails' */
    unsigned uid_count;
    const char *lock_dir;      /* the uid claims; shared by every vmhost of the machine */
    const char *preload;       /* airlock-qemu-preload.so (jail_preload.c) */
    const char *scratch_dir;   /* an empty directory each jail mounts its root on,
                                  inside its own mount namespace */
    unsigned mem_overhead_mb;  /* QEMU's own memory above guest RAM (memory limit) */
};

struct jailer;
struct jail;

/* Checks the range (no user or group of the system has a uid in it), the
 * preload library and the cgroup hierarchy; -1 with a message naming what
 * is missing. */
int jailer_create(const struct jailer_config *cfg, struct jailer **out, char *err, size_t errlen);
void jailer_free(struct jailer *j);

/* What one QEMU needs, as paths on the host. The jail shows each at a fixed
 * place inside (jail_inside_path): dir at /vm (QEMU's working directory, its
 * sockets: QMP, the guest channel, the console), disk at /disk, mem at
 * /mem, kernel and initrd at /kernel and /initrd. Read-only: kernel, initrd, and mem unless
 * mem_writable (a template being built writes its memory file). */
#define JAIL_VOLUMES 4

struct jail_spec {
    const char *qemu_binary; /* absolute; must lie under /usr */
    const char *dir;
    const char *disk;        /* NULL: none */
    const char *mem;         /* NULL: none */
    bool mem_writable;
    const char *kernel;      /* NULL: none (an incoming VM) */
    const char *initrd;
    const char *netns;       /* the sandbox's network namespace (a /run/netns path);
                                NULL: a new empty one */
    bool kvm;                /* /dev/kvm inside */
    unsigned vcpus;
    unsigned memory_mb;
    unsigned long long max_file_bytes; /* RLIMIT_FSIZE: the largest file QEMU may write */
    /* Volume images (docs/volumes.md) bound read-write at /vol<N> and
     * handed to the uid; NULL: that slot has none. */
    const char *volumes[JAIL_VOLUMES];
};

/* Claims a uid, makes the cgroup leaf, hands spec's writable files to the
 * uid. -1 with a message (the range exhausted, no cgroup, ...), nothing
 * left behind. */
int jail_open(struct jailer *j, const struct jail_spec *spec, struct jail **out, char *err,
              size_t errlen);

/* The path QEMU sees for one of spec's host paths (as given to jail_open). */
const char *jail_inside_path(const struct jail *jl, const char *host_path);

/* Starts argv[0] (spec's qemu_binary) in the jail with stdout/stderr on
 * log_fd and tap_fd (if >= 0) as fd 3; nicer by nice. Returns QEMU's pid (a
 * child of the caller), or -1 with a message. A failure inside the jail
 * before exec is written to log_fd and ends the child with status 126. */
pid_t jail_spawn(struct jail *jl, char *const argv[], int log_fd, int tap_fd, int nice, char *err,
                 size_t errlen);

/* The jail of a QEMU an earlier vmhost started (its uid and cgroup leaf
 * from /proc), for jail_close when it ends. */
int jail_adopt(struct jailer *j, pid_t pid, const char *dir, struct jail **out, char *err,
               size_t errlen);

/* After QEMU is gone: why the kernel ended it, if a limit did ("memory
 * limit of 640 MiB reached"); "" otherwise. */
void jail_limit_reason(const struct jail *jl, char *buf, size_t buflen);

/* After QEMU is gone: removes the cgroup leaf, gives the files back to
 * root, releases the uid. NULL is fine. */
void jail_close(struct jail *jl);

#endif
