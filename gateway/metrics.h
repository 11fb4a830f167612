/* Prometheus counters of the gateway, served as text on /metrics. */
#ifndef AIRLOCK_GATEWAY_METRICS_H
#define AIRLOCK_GATEWAY_METRICS_H

#include <pthread.h>
#include <stdint.h>

#include "strbuf.h"

/* At least gw_routes_count (routes.c): a route past it would be counted
 * as unmatched (controlplane.rest_api checks every route shows up). */
#define GW_METRICS_MAX_ROUTES 96

struct gw_route_counters {
    uint64_t by_class[6];   /* index status/100: 1xx..5xx */
    uint64_t duration_ms_sum;
    uint64_t count;
};

struct gw_metrics {
    pthread_mutex_t lock;
    struct gw_route_counters routes[GW_METRICS_MAX_ROUTES + 1]; /* last: no route matched */
    uint64_t in_flight;
};

void gw_metrics_init(struct gw_metrics *m);
void gw_metrics_destroy(struct gw_metrics *m);
void gw_metrics_begin(struct gw_metrics *m);
/* route_index < 0: the request matched no route. */
void gw_metrics_end(struct gw_metrics *m, int route_index, unsigned status, int64_t duration_ms);
void gw_metrics_render(struct gw_metrics *m, struct strbuf *out);

#endif
