/* vmhost's Prometheus metrics (docs/operations.md "Metrics"): creates by
 * path as latency histograms, counted as they happen; sandboxes by state,
 * the warm pools and QEMU's memory sampled at each scrape. */
#ifndef AIRLOCK_VMHOST_METRICS_H
#define AIRLOCK_VMHOST_METRICS_H

#include <stdint.h>

#include "metrics_registry.h"

struct vmhost;
struct vmhost_metrics;

/* NULL when out of memory (vmhost then counts nothing). */
struct vmhost_metrics *vmhost_metrics_new(struct vmhost *vh);
void vmhost_metrics_free(struct vmhost_metrics *m);
struct metrics_registry *vmhost_metrics_registry(struct vmhost_metrics *m);
/* The gRPC server's call counter (rpc_server.h); NULL with m NULL. */
struct metric *vmhost_metrics_calls(struct vmhost_metrics *m);

/* A create that answered after us microseconds; path "pool", "restore"
 * or "cold". m NULL: nothing. */
void vmhost_metrics_created(struct vmhost_metrics *m, const char *path, int64_t us);

#endif
