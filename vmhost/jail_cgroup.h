/* The jails' cgroups: a leaf per QEMU under a parent of vmhost's own
 * (airlock-jails, beside or below the cgroup vmhost runs in), with memory
 * (no swap), CPU, pids and io limits. cgroup v2 when the machine is unified;
 * otherwise the v1 hierarchies of the controllers it needs (a hybrid host
 * such as the one the tests run on), so the same limits hold on both. */
#ifndef AIRLOCK_JAIL_CGROUP_H
#define AIRLOCK_JAIL_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

#define JAIL_CGROUP_MAX_DIRS 4 /* v1: memory, cpu, pids, blkio; v2: one */

struct jail_cgroups {
    int version;                                 /* 1 or 2 */
    size_t n_parents;
    char parents[JAIL_CGROUP_MAX_DIRS][256];    /* parent dir per hierarchy */
    char controllers[JAIL_CGROUP_MAX_DIRS][16]; /* v1: the hierarchy's controller */
};

struct jail_limits {
    unsigned long long memory_bytes;
    unsigned cpu_quota_us;  /* per 100 ms period */
    unsigned pids;
};

/* Finds the hierarchies and makes the parents; -1 with a message naming
 * the controller or file that is missing. */
int jail_cgroups_init(struct jail_cgroups *cg, char *err, size_t errlen);

/* Makes leaf (a name) under every parent with limits, and opens each
 * leaf's cgroup.procs for writing into procs_fds (close-on-exec off: the
 * jail's child joins by writing "0"). Returns how many fds, or -1 with a
 * message and nothing left. */
int jail_cgroups_make_leaf(const struct jail_cgroups *cg, const char *leaf,
                           const struct jail_limits *limits, int procs_fds[JAIL_CGROUP_MAX_DIRS],
                           char *err, size_t errlen);

/* How many times the kernel's OOM killer ended a process of leaf. */
unsigned long long jail_cgroups_oom_kills(const struct jail_cgroups *cg, const char *leaf);

/* Removes leaf everywhere (it must be empty: its QEMU is gone). */
void jail_cgroups_remove_leaf(const struct jail_cgroups *cg, const char *leaf);

#endif
