#include "vmhost_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "build_gate.h"
#include "rpc_server.h"
#include "sandbox.h"
#include "template_registry.h"
#include "template_version.h"
#include "vmhost.h"
#include "warm_pool.h"

struct vmhost_metrics {
    struct vmhost *vh;
    struct metrics_registry *reg;
    struct metric *calls, *creates, *sandboxes, *pool_ready, *pool_target, *pool_memory,
        *pool_demand, *pool_spares, *qemu_rss, *creates_waiting;
};

/* The resident bytes of pid, 0 when it is gone. */
static double rss_bytes(int pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/statm", pid);
    FILE *f = fopen(path, "r");
    unsigned long long size, resident = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

static void collect_sandboxes(struct vmhost_metrics *m)
{
    unsigned by_state[SB_DELETED + 1] = { 0 };
    double rss = 0;
    size_t n;
    struct sandbox **all = sandbox_list(m->vh, &n);
    struct sandbox_view *view = malloc(sizeof(*view));
    for (size_t i = 0; i < n; i++) {
        if (view) {
            sandbox_view_take(all[i], view);
            by_state[view->state <= SB_DELETED ? view->state : SB_NONE]++;
            if (view->qemu_pid > 0)
                rss += rss_bytes(view->qemu_pid);
        }
        sandbox_put(all[i]);
    }
    free(view);
    free(all);
    /* Every state, zeros too: a series that vanishes reads as "no data". */
    for (int s = SB_CREATING; s <= SB_DELETING; s++)
        metric_set(m->sandboxes, METRIC_LABELS(sb_state_name(s)), by_state[s]);
    metric_set(m->qemu_rss, NULL, rss);
    metric_set(m->creates_waiting, NULL, build_gate_waiting(m->vh->build_gate));
}

static void collect_pools(struct vmhost_metrics *m)
{
    /* Templates come and go: only the pools that exist now. */
    metric_clear(m->pool_ready);
    metric_clear(m->pool_target);
    metric_clear(m->pool_memory);
    metric_clear(m->pool_demand);
    metric_clear(m->pool_spares);
    size_t n;
    struct template_version **all = template_list(m->vh, &n);
    for (size_t i = 0; all && i < n; i++) {
        if (all[i]->pool) {
            struct warm_pool_stats ps;
            warm_pool_get_stats(all[i]->pool, &ps);
            metric_set(m->pool_ready, METRIC_LABELS(all[i]->ref), ps.ready);
            metric_set(m->pool_target, METRIC_LABELS(all[i]->ref), ps.target);
            metric_set(m->pool_memory, METRIC_LABELS(all[i]->ref), (double)ps.memory_bytes);
            metric_set(m->pool_demand, METRIC_LABELS(all[i]->ref), ps.demand_per_s);
            metric_set(m->pool_spares, METRIC_LABELS(all[i]->ref), ps.spares);
        }
        template_release(all[i]);
    }
    free(all);
}

static void collect(void *arg)
{
    collect_sandboxes(arg);
    collect_pools(arg);
}

struct vmhost_metrics *vmhost_metrics_new(struct vmhost *vh)
{
    static const double seconds[] = { 0.005, 0.01, 0.02, 0.035, 0.05, 0.1, 0.2,
                                      0.5,   1,    2,    5,     10,   30 };
    struct vmhost_metrics *m = calloc(1, sizeof(*m));
    if (!m || !(m->reg = metrics_registry_new())) {
        free(m);
        return NULL;
    }
    m->vh = vh;
    m->calls = rpc_calls_metric(m->reg, "airlock_vmhost");
    m->creates = metrics_histogram(m->reg, "airlock_vmhost_create_duration_seconds",
                                   "Creates that succeeded, by path (pool; prestarted: restored "
                                   "into a spare QEMU; restore; cold), "
                                   "from the request to the answer.",
                                   1, METRIC_LABELS("path"), seconds,
                                   sizeof(seconds) / sizeof(*seconds));
    m->sandboxes = metrics_gauge(m->reg, "airlock_vmhost_sandboxes",
                                 "Sandboxes on this node by state (pooled VMs not counted).", 1,
                                 METRIC_LABELS("state"));
    m->pool_ready = metrics_gauge(m->reg, "airlock_vmhost_pool_ready",
                                  "Warm pool VMs ready to be handed out, by template.", 1,
                                  METRIC_LABELS("template"));
    m->pool_target = metrics_gauge(m->reg, "airlock_vmhost_pool_target",
                                   "Warm pool target (demand within its floor, ceiling and "
                                   "--pool-memory-mib), by template.",
                                   1, METRIC_LABELS("template"));
    m->pool_memory = metrics_gauge(m->reg, "airlock_vmhost_pool_memory_bytes",
                                   "Guest memory of the warm pool's ready VMs, by template.", 1,
                                   METRIC_LABELS("template"));
    m->pool_demand = metrics_gauge(m->reg, "airlock_vmhost_pool_demand_per_second",
                                   "The recent peak create rate the pool follows, by template.",
                                   1, METRIC_LABELS("template"));
    m->pool_spares = metrics_gauge(m->reg, "airlock_vmhost_pool_spares",
                                   "QEMUs the warm pool started ahead, waiting for a restore "
                                   "(--warm-pool-spares), by template.",
                                   1, METRIC_LABELS("template"));
    m->qemu_rss = metrics_gauge(m->reg, "airlock_vmhost_qemu_rss_bytes",
                                "Resident memory of the QEMUs of this node's sandboxes "
                                "(pooled VMs not counted).",
                                0, NULL);
    m->creates_waiting = metrics_gauge(m->reg, "airlock_vmhost_creates_waiting",
                                       "Creates and forks waiting for a slot to restore in "
                                       "(--parallel-creates).",
                                       0, NULL);
    if (!m->creates_waiting || !m->calls || !m->creates || !m->sandboxes || !m->pool_ready || !m->pool_target ||
        !m->pool_memory || !m->pool_demand || !m->pool_spares || !m->qemu_rss ||
        metrics_on_collect(m->reg, collect, m) < 0) {
        vmhost_metrics_free(m);
        return NULL;
    }
    return m;
}

void vmhost_metrics_free(struct vmhost_metrics *m)
{
    if (!m)
        return;
    metrics_registry_free(m->reg);
    free(m);
}

struct metrics_registry *vmhost_metrics_registry(struct vmhost_metrics *m)
{
    return m ? m->reg : NULL;
}

void vmhost_metrics_created(struct vmhost_metrics *m, const char *path, int64_t us)
{
    if (m)
        metric_observe(m->creates, METRIC_LABELS(path), (double)us / 1e6);
}

struct metric *vmhost_metrics_calls(struct vmhost_metrics *m)
{
    return m ? m->calls : NULL;
}
