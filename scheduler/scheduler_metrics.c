#include "scheduler_metrics.h"

#include "rpc_server.h"

int scheduler_metrics_init(struct scheduler_metrics *m)
{
    m->reg = metrics_registry_new();
    m->calls = rpc_calls_metric(m->reg, "airlock_scheduler");
    m->controller_runs = metrics_counter(m->reg, "airlock_scheduler_controller_runs_total",
                                         "Controller passes run by this replica while it leads.",
                                         1, METRIC_LABELS("controller"));
    m->leader = metrics_gauge(m->reg, "airlock_scheduler_controller_leader",
                              "1 while this replica leads (runs the controllers), else 0.", 0,
                              NULL);
    m->placement_failures =
        metrics_counter(m->reg, "airlock_scheduler_placement_failures_total",
                        "Placements no live node had room for, by op: create, resume, restore, "
                        "migrate, move (a drain's, through the store), build (a template's).",
                        1, METRIC_LABELS("op"));
    metric_set(m->leader, NULL, 0);
    return m->reg && m->calls && m->controller_runs && m->leader && m->placement_failures ? 0
                                                                                          : -1;
}

void scheduler_metrics_destroy(struct scheduler_metrics *m)
{
    metrics_registry_free(m->reg);
    m->reg = NULL;
}
