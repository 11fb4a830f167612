/* What a node lets its sandboxes' VMs hold: vCPUs and guest memory, each
 * the node's own times an overcommit ratio (OpenStack's defaults: 16 for
 * CPUs, 1.5 for memory), memory after a reserve kept for the host. A VM
 * holds a claim from just before its QEMU starts until the QEMU is gone
 * (deleted, suspended, dead); a create, fork, resume or restore that does
 * not fit is refused with CAPACITY, naming what ran out, before anything
 * is made. A claim also needs the memory actually free now: MemAvailable
 * must cover the guest's RAM and the reserve (a node whose guests touched
 * all their overcommitted memory takes no more). docs/operations.md
 * "Node capacity". */
#ifndef AIRLOCK_VMHOST_NODE_BUDGET_H
#define AIRLOCK_VMHOST_NODE_BUDGET_H

#include <stddef.h>

#include "airlock_error.h"

#define NODE_BUDGET_DEFAULT_CPU_OVERCOMMIT 16.0
#define NODE_BUDGET_DEFAULT_MEMORY_OVERCOMMIT 1.5
#define NODE_BUDGET_DEFAULT_RESERVE_MB 1024u

struct node_budget_config {
    unsigned cpus;              /* 0: the CPUs online */
    unsigned long long memory_mb; /* 0: MemTotal */
    double cpu_overcommit;      /* 0: the default */
    double memory_overcommit;   /* 0: the default */
    unsigned reserve_mb;        /* kept for the host; 0: the default */
};

/* One VM's hold; zero when it holds nothing. Changed only here, under the
 * budget's lock. */
struct node_claim {
    unsigned vcpus;
    unsigned memory_mb;
};

/* The budget's figures, for heartbeats and GetNodeStats. */
struct node_budget_stats {
    unsigned vcpus_limit, vcpus_committed;
    unsigned long long memory_limit_mb, memory_committed_mb;
};

struct node_budget;

/* The budget for cfg (defaults filled from the machine); -1 with err when
 * the reserve leaves nothing or a figure cannot be read. */
int node_budget_new(const struct node_budget_config *cfg, struct node_budget **out, char *err,
                    size_t errlen);
void node_budget_free(struct node_budget *b);

/* Takes vcpus and memory_mb into *claim if they fit, else CAPACITY in e
 * naming what ran out. Nothing when *claim already holds (a restore of a
 * live sandbox keeps its hold). */
int node_budget_claim(struct node_budget *b, struct node_claim *claim, unsigned vcpus,
                      unsigned memory_mb, struct airlock_error *e);
/* Takes them without a check: a live QEMU adopted after a restart holds
 * what it holds, fitting or not. */
void node_budget_hold(struct node_budget *b, struct node_claim *claim, unsigned vcpus,
                      unsigned memory_mb);
/* Gives *claim back and zeroes it; nothing when it holds nothing. */
void node_budget_release(struct node_budget *b, struct node_claim *claim);

void node_budget_get(struct node_budget *b, struct node_budget_stats *out);

/* MemAvailable of /proc/meminfo in MiB; 0 when unreadable. */
unsigned long long node_mem_available_mb(void);

#endif
