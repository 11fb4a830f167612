/* egress's Prometheus metrics (docs/operations.md "Metrics"): every entry
 * of a sandbox's connection log counted by decision and reason
 * (connections and DNS questions apart), the bytes spliced, and gRPC
 * calls (counted by the rpc server). */
#ifndef AIRLOCK_EGRESS_METRICS_H
#define AIRLOCK_EGRESS_METRICS_H

#include <stdint.h>

#include "conn_log.h"
#include "metrics_registry.h"

struct egress_metrics {
    struct metrics_registry *reg;
    struct metric *calls;       /* rpc_calls_metric */
    struct metric *connections; /* {decision, reason} */
    struct metric *dns;         /* {decision, reason} */
    struct metric *bytes;       /* {direction} */
};

/* NULL when out of memory. */
struct egress_metrics *egress_metrics_new(void);
void egress_metrics_free(struct egress_metrics *m);

/* An entry added to a connection log; m NULL: nothing. */
void egress_metrics_logged(struct egress_metrics *m, const struct conn_entry *e);
/* A connection's final byte counts. */
void egress_metrics_bytes(struct egress_metrics *m, uint64_t sent, uint64_t received);

#endif
