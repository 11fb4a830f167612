/* vault's Prometheus metrics (docs/operations.md "Metrics"): injections by
 * outcome (injected, rate_limited, locked, ...) and gRPC calls (counted by
 * the rpc server). */
#ifndef AIRLOCK_VAULT_METRICS_H
#define AIRLOCK_VAULT_METRICS_H

#include "airlock_error.h"
#include "metrics_registry.h"

struct vault_metrics {
    struct metrics_registry *reg;
    struct metric *calls;      /* rpc_calls_metric */
    struct metric *injections; /* {outcome} */
};

/* 0, or -1 when out of memory. */
int vault_metrics_init(struct vault_metrics *m);
void vault_metrics_destroy(struct vault_metrics *m);

/* A ResolveInjection's outcome: rc 0 injected, else e's class. */
void vault_metrics_injection(struct vault_metrics *m, int rc, const struct airlock_error *e);

#endif
