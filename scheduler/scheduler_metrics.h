/* The scheduler's Prometheus metrics (docs/operations.md "Metrics"): gRPC
 * calls by method and code (counted by the rpc server), controller runs,
 * whether this replica leads, and placements that found no node. */
#ifndef AIRLOCK_SCHEDULER_METRICS_H
#define AIRLOCK_SCHEDULER_METRICS_H

#include "metrics_registry.h"

struct scheduler_metrics {
    struct metrics_registry *reg;
    struct metric *calls;              /* rpc_calls_metric */
    struct metric *controller_runs;    /* {controller} */
    struct metric *leader;             /* 1 while this replica runs the controllers */
    struct metric *placement_failures; /* {op} */
};

/* 0, or -1 when out of memory. */
int scheduler_metrics_init(struct scheduler_metrics *m);
void scheduler_metrics_destroy(struct scheduler_metrics *m);

#endif
