#include "metrics.h"

#include <stdio.h>

#include "routes.h"

int gw_metrics_init(struct gw_metrics *m)
{
    static const double ms_bounds[] = { 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000, 60000 };
    m->reg = metrics_registry_new();
    m->requests = metrics_counter(m->reg, "airlock_gateway_http_requests_total",
                                  "HTTP requests by route and status class.", 2,
                                  METRIC_LABELS("route", "code"));
    m->duration_ms = metrics_histogram(m->reg, "airlock_gateway_http_request_duration_ms",
                                       "Time to the response (streams: to their end).", 1,
                                       METRIC_LABELS("route"), ms_bounds,
                                       sizeof(ms_bounds) / sizeof(*ms_bounds));
    m->in_flight = metrics_gauge(m->reg, "airlock_gateway_http_requests_in_flight",
                                 "Requests being served now.", 0, NULL);
    metric_set(m->in_flight, NULL, 0);
    return m->reg && m->requests && m->duration_ms && m->in_flight ? 0 : -1;
}

void gw_metrics_destroy(struct gw_metrics *m)
{
    metrics_registry_free(m->reg);
    m->reg = NULL;
}

void gw_metrics_begin(struct gw_metrics *m)
{
    metric_add(m->in_flight, NULL, 1);
}

void gw_metrics_end(struct gw_metrics *m, const struct gw_route *route, unsigned status,
                    int64_t duration_ms)
{
    char label[160], code[8];
    if (route)
        snprintf(label, sizeof(label), "%s %s", route->method, route->pattern);
    else
        snprintf(label, sizeof(label), "unmatched");
    snprintf(code, sizeof(code), "%uxx", status / 100 < 6 ? status / 100 : 5);
    metric_add(m->in_flight, NULL, -1);
    metric_add(m->requests, METRIC_LABELS(label, code), 1);
    metric_observe(m->duration_ms, METRIC_LABELS(label), duration_ms > 0 ? (double)duration_ms : 0);
}
