/* The registry's structures, shared by metrics.c (updates) and
 * metrics_text.c (exposition); nothing outside common/metrics uses them. */
#ifndef AIRLOCK_METRICS_INTERNAL_H
#define AIRLOCK_METRICS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "metrics_registry.h"

enum metric_type { METRIC_COUNTER, METRIC_GAUGE, METRIC_HISTOGRAM };

struct metric_series {
    struct metric_series *next;
    char *values[METRICS_MAX_LABELS];
    double value;                             /* counter, gauge; histogram: sum */
    uint64_t buckets[METRICS_MAX_BUCKETS + 1]; /* not cumulative; last: +Inf */
    uint64_t count;
};

struct metric {
    struct metric *next;
    struct metrics_registry *reg;
    enum metric_type type;
    char *name, *help;
    size_t n_labels;
    char *labels[METRICS_MAX_LABELS];
    size_t n_bounds;
    double bounds[METRICS_MAX_BUCKETS];
    struct metric_series *series; /* in the order they were first updated */
};

struct metrics_collector {
    metrics_collect_fn fn;
    void *arg;
};

struct metrics_registry {
    pthread_mutex_t lock; /* every family's series */
    struct metric *families, **tail;
    struct metrics_collector *collectors;
    size_t n_collectors;
};

#endif
