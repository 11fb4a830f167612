/* What a node holds that a sandbox could leave behind, and what a
 * sandbox's QEMU is allowed on it, read from the host for the guest half
 * of the escape suite. */
#ifndef AIRLOCK_ESCAPE_NODE_H
#define AIRLOCK_ESCAPE_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "itest.h"

/* What of the node's state a program's own vmhost and sandboxes can
 * change, as sorted lines: the QEMU processes of vh's data directory and
 * every child of vmhost; the mounts under the data directory and the
 * network namespaces (entries and mounts) of the sandboxes named ids; the
 * jails' cgroup leaves (found from the cgroups of witness_qemu, a jailed
 * QEMU of vh) and held uid claims of the suite's uid range; the sandboxes
 * in the data directory and the directory's own entries. Other sessions'
 * VMs on the machine are left out. malloc'd. */
struct escape_node_scope {
    const struct itest_vmhost *vh;
    pid_t witness_qemu;
    const char *const *ids; /* every sandbox id the program used */
    size_t n_ids;
};
char *escape_node_state(const struct escape_node_scope *scope);

/* Prints the lines of one state missing from the other; true when equal. */
bool escape_node_same(const char *before, const char *after);

/* A file of qemu's cgroup in the v1 hierarchy of controller (or the
 * unified one), as a number; -1 when there is none. */
long long escape_qemu_cgroup_value(pid_t qemu, const char *controller, const char *file);

/* The number after "key " in a file of qemu's cgroup holding "key value"
 * lines (memory.oom_control, memory.events); -1 when there is none. */
long long escape_qemu_cgroup_field(pid_t qemu, const char *controller, const char *file,
                                   const char *key);

/* A "Key: N kB" (or plain number) field of /proc/<pid>/status; -1 when the
 * process or the field is gone. */
long long escape_proc_status_value(pid_t pid, const char *key);

/* QEMU's memory limit: its leaf's memory.limit_in_bytes (v1) or
 * memory.max (v2), in bytes; -1 when there is none. */
long long escape_qemu_memory_limit(pid_t qemu);

#endif
