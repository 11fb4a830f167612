/* struct jail and its mount plan, shared by jail.c (claims, cgroups,
 * files) and jail_child.c (what the child does between clone and exec).
 * Nothing else includes this. */
#ifndef AIRLOCK_JAIL_INTERNAL_H
#define AIRLOCK_JAIL_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "jail.h"
#include "jail_cgroup.h"
#include "jail_filter.h"

#define JAIL_MAX_MOUNTS (16 + JAIL_VOLUMES)
#define JAIL_MAX_OWNED (5 + JAIL_VOLUMES) /* files and the directory handed to the jail's uid */

enum jail_mount_kind {
    JAIL_BIND_DIR,
    JAIL_BIND_FILE,
    JAIL_SYMLINK,  /* source is the link's target */
    JAIL_DEV_NODE, /* source unused; dev is the device number */
};

/* One entry of the root the child builds: everything as absolute paths
 * precomputed by the parent (the child may not allocate or format). */
struct jail_mount {
    enum jail_mount_kind kind;
    char source[PATH_MAX];
    char target[PATH_MAX]; /* scratch_dir + inside */
    const char *inside;    /* "/vm", "/disk", ... */
    bool writable;
    dev_t dev;
    mode_t mode;
};

struct jailer {
    struct jailer_config cfg;
    char lock_dir[PATH_MAX];
    char preload[PATH_MAX];
    char scratch_dir[PATH_MAX];
    struct jail_cgroups cgroups;
    int cap_last;                /* /proc/sys/kernel/cap_last_cap */
    struct jail_filter filter;   /* installed by every child before exec */
    struct jail_mount system[6]; /* /usr, /etc/ld.so.cache and the /lib-style links */
    size_t n_system;
    unsigned next_slot;          /* where the next claim starts looking */
    pthread_mutex_t lock;        /* guards next_slot */
};

struct jail {
    struct jailer *jailer;
    uid_t uid;
    char leaf[32];               /* "vm-<uid>" */
    int lock_fd;                 /* the uid's claim, -1 once released */
    bool adopted;                /* QEMU alone holds the claim (jail_adopt) */
    int procs_fds[JAIL_CGROUP_MAX_DIRS];
    size_t n_procs_fds;
    struct jail_mount mounts[JAIL_MAX_MOUNTS];
    size_t n_mounts;
    char owned[JAIL_MAX_OWNED][PATH_MAX]; /* given to uid; back to root at close */
    size_t n_owned;
    int netns_fd;
    bool mem_readonly;           /* /mem is the shared template's: the preload opens it so */
    unsigned long long max_file_bytes;
};

/* The child's side: from clone3 to execve. Never returns. */
void jail_child_main(const struct jail *jl, char *const argv[], char *const envp[], int log_fd,
                     int tap_fd, int nice) __attribute__((noreturn));

#endif
