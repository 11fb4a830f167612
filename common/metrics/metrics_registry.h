/* A small Prometheus registry: counters, gauges and histograms with
 * labels, safe to update from any thread, rendered in the text exposition
 * format 0.0.4 (metrics_render). One registry per process; every service
 * serves it on /metrics (metrics_http.h, the gateway on its API). */
#ifndef AIRLOCK_METRICS_REGISTRY_H
#define AIRLOCK_METRICS_REGISTRY_H

#include <stddef.h>

#include "strbuf.h"

#define METRICS_MAX_LABELS 4
#define METRICS_MAX_BUCKETS 16

struct metrics_registry;
struct metric;

struct metrics_registry *metrics_registry_new(void);
void metrics_registry_free(struct metrics_registry *reg);

/* A family named name (its series told apart by the labels, at most
 * METRICS_MAX_LABELS); help is one line. NULL when out of memory: every
 * update of a NULL family does nothing, so a service starts without it. */
struct metric *metrics_counter(struct metrics_registry *reg, const char *name, const char *help,
                               size_t n_labels, const char *const *labels);
struct metric *metrics_gauge(struct metrics_registry *reg, const char *name, const char *help,
                             size_t n_labels, const char *const *labels);
/* bounds: the buckets' upper bounds, increasing (at most
 * METRICS_MAX_BUCKETS; +Inf is added). */
struct metric *metrics_histogram(struct metrics_registry *reg, const char *name, const char *help,
                                 size_t n_labels, const char *const *labels, const double *bounds,
                                 size_t n_bounds);

/* values: one per label of the family, in its order. */
void metric_add(struct metric *m, const char *const *values, double v); /* counter, gauge */
/* A gauge, or a counter whose count lives elsewhere (copied at collect). */
void metric_set(struct metric *m, const char *const *values, double v);
void metric_observe(struct metric *m, const char *const *values, double v); /* histogram */
/* Forgets every series of m: a gauge sampled at each scrape whose label
 * values come and go (templates), set again after. */
void metric_clear(struct metric *m);

/* fn runs at each render before the text is made: it samples gauges whose
 * value lives elsewhere (a registry's sandboxes, a pool's size). */
typedef void (*metrics_collect_fn)(void *arg);
int metrics_on_collect(struct metrics_registry *reg, metrics_collect_fn fn, void *arg);

void metrics_render(struct metrics_registry *reg, struct strbuf *out);

/* The label values as an array: METRIC_LABELS("GET", "200"). */
#define METRIC_LABELS(...) ((const char *const[]){ __VA_ARGS__ })

#endif
