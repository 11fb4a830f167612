/* The gateway's HTTP request metrics in its registry, served on the API's
 * own /metrics (handlers_admin.c). */
#ifndef AIRLOCK_GATEWAY_METRICS_H
#define AIRLOCK_GATEWAY_METRICS_H

#include <stdint.h>

#include "metrics_registry.h"

struct gw_route;

struct gw_metrics {
    struct metrics_registry *reg;
    struct metric *requests, *duration_ms, *in_flight;
};

/* 0, or -1 when out of memory. */
int gw_metrics_init(struct gw_metrics *m);
void gw_metrics_destroy(struct gw_metrics *m);
void gw_metrics_begin(struct gw_metrics *m);
/* route NULL: the request matched no route. */
void gw_metrics_end(struct gw_metrics *m, const struct gw_route *route, unsigned status,
                    int64_t duration_ms);

#endif
