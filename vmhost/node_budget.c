#include "node_budget.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node_budget {
    struct node_budget_config cfg; /* defaults filled */
    unsigned vcpus_limit;
    unsigned long long memory_limit_mb;
    pthread_mutex_t lock;
    unsigned vcpus_committed;
    unsigned long long memory_committed_mb;
};

/* A /proc/meminfo field in MiB; 0 when unreadable. */
static unsigned long long meminfo_mb(const char *field)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    size_t n = strlen(field);
    unsigned long long kb = 0;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, n) == 0 && line[n] == ':' &&
            sscanf(line + n + 1, "%llu kB", &kb) == 1)
            break;
    fclose(f);
    return kb / 1024;
}

unsigned long long node_mem_available_mb(void)
{
    return meminfo_mb("MemAvailable");
}

/* The CPUs this process may run on (a container's cpuset, not the
 * machine's). */
static unsigned cpus_usable(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    return 1;
}

int node_budget_new(const struct node_budget_config *cfg, struct node_budget **out, char *err,
                    size_t errlen)
{
    struct node_budget_config c = *cfg;
    if (!c.cpus)
        c.cpus = cpus_usable();
    if (!c.memory_mb && !(c.memory_mb = meminfo_mb("MemTotal"))) {
        snprintf(err, errlen, "cannot read MemTotal from /proc/meminfo: give --node-memory-mb");
        return -1;
    }
    if (c.cpu_overcommit <= 0)
        c.cpu_overcommit = NODE_BUDGET_DEFAULT_CPU_OVERCOMMIT;
    if (c.memory_overcommit <= 0)
        c.memory_overcommit = NODE_BUDGET_DEFAULT_MEMORY_OVERCOMMIT;
    if (!c.reserve_mb)
        c.reserve_mb = NODE_BUDGET_DEFAULT_RESERVE_MB;
    if (c.reserve_mb >= c.memory_mb) {
        snprintf(err, errlen,
                 "the memory kept for the host (--memory-reserve-mb %u) leaves nothing of the "
                 "node's %llu MiB for sandboxes",
                 c.reserve_mb, c.memory_mb);
        return -1;
    }
    struct node_budget *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->cfg = c;
    b->vcpus_limit = (unsigned)(c.cpus * c.cpu_overcommit);
    b->memory_limit_mb = (unsigned long long)((double)(c.memory_mb - c.reserve_mb) *
                                              c.memory_overcommit);
    pthread_mutex_init(&b->lock, NULL);
    *out = b;
    return 0;
}

void node_budget_free(struct node_budget *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->lock);
    free(b);
}

static void take_locked(struct node_budget *b, struct node_claim *claim, unsigned vcpus,
                        unsigned memory_mb)
{
    b->vcpus_committed += vcpus;
    b->memory_committed_mb += memory_mb;
    claim->vcpus = vcpus;
    claim->memory_mb = memory_mb;
}

/* Whether vcpus and memory_mb fit, with available MiB free on the host;
 * CAPACITY in e naming the first that does not. */
static int fits_locked(const struct node_budget *b, unsigned vcpus, unsigned memory_mb,
                       unsigned long long available, struct airlock_error *e)
{
    const struct node_budget_config *c = &b->cfg;
    if ((unsigned long long)b->vcpus_committed + vcpus > b->vcpus_limit)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY,
                                 "node has no room for %u more vCPUs: %u of %u committed "
                                 "(%u CPUs x overcommit %g)",
                                 vcpus, b->vcpus_committed, b->vcpus_limit, c->cpus,
                                 c->cpu_overcommit);
    if (b->memory_committed_mb + memory_mb > b->memory_limit_mb)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY,
                                 "node has no room for %u MiB more guest memory: %llu of %llu MiB "
                                 "committed ((%llu MiB - %u reserved for the host) x overcommit %g)",
                                 memory_mb, b->memory_committed_mb, b->memory_limit_mb,
                                 c->memory_mb, c->reserve_mb, c->memory_overcommit);
    if (available < (unsigned long long)memory_mb + c->reserve_mb)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY,
                                 "node's free memory is too low: %llu MiB available, the guest's "
                                 "%u MiB and the %u MiB reserved for the host need %llu",
                                 available, memory_mb, c->reserve_mb,
                                 (unsigned long long)memory_mb + c->reserve_mb);
    return 0;
}

int node_budget_claim(struct node_budget *b, struct node_claim *claim, unsigned vcpus,
                      unsigned memory_mb, struct airlock_error *e)
{
    int rc = 0;
    /* Read before the lock: concurrent creates do not wait on the file. */
    unsigned long long available = node_mem_available_mb();
    pthread_mutex_lock(&b->lock);
    if (!claim->vcpus && !claim->memory_mb &&
        (rc = fits_locked(b, vcpus, memory_mb, available, e)) == 0)
        take_locked(b, claim, vcpus, memory_mb);
    pthread_mutex_unlock(&b->lock);
    return rc;
}

void node_budget_hold(struct node_budget *b, struct node_claim *claim, unsigned vcpus,
                      unsigned memory_mb)
{
    pthread_mutex_lock(&b->lock);
    if (!claim->vcpus && !claim->memory_mb)
        take_locked(b, claim, vcpus, memory_mb);
    pthread_mutex_unlock(&b->lock);
}

void node_budget_release(struct node_budget *b, struct node_claim *claim)
{
    pthread_mutex_lock(&b->lock);
    b->vcpus_committed -= claim->vcpus;
    b->memory_committed_mb -= claim->memory_mb;
    *claim = (struct node_claim){ 0 };
    pthread_mutex_unlock(&b->lock);
}

void node_budget_get(struct node_budget *b, struct node_budget_stats *out)
{
    pthread_mutex_lock(&b->lock);
    *out = (struct node_budget_stats){ .vcpus_limit = b->vcpus_limit,
                                       .vcpus_committed = b->vcpus_committed,
                                       .memory_limit_mb = b->memory_limit_mb,
                                       .memory_committed_mb = b->memory_committed_mb };
    pthread_mutex_unlock(&b->lock);
}
