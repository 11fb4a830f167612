#include "metrics.h"

#include <stdio.h>
#include <string.h>

#include "routes.h"

void gw_metrics_init(struct gw_metrics *m)
{
    memset(m, 0, sizeof(*m));
    pthread_mutex_init(&m->lock, NULL);
}

void gw_metrics_destroy(struct gw_metrics *m)
{
    pthread_mutex_destroy(&m->lock);
}

void gw_metrics_begin(struct gw_metrics *m)
{
    pthread_mutex_lock(&m->lock);
    m->in_flight++;
    pthread_mutex_unlock(&m->lock);
}

void gw_metrics_end(struct gw_metrics *m, int route_index, unsigned status, int64_t duration_ms)
{
    int slot = route_index >= 0 && route_index < GW_METRICS_MAX_ROUTES ? route_index
                                                                        : GW_METRICS_MAX_ROUTES;
    pthread_mutex_lock(&m->lock);
    m->in_flight--;
    struct gw_route_counters *c = &m->routes[slot];
    c->by_class[status / 100 < 6 ? status / 100 : 5]++;
    c->duration_ms_sum += duration_ms > 0 ? (uint64_t)duration_ms : 0;
    c->count++;
    pthread_mutex_unlock(&m->lock);
}

static void render_route(struct strbuf *out, const char *label, const struct gw_route_counters *c)
{
    for (int k = 1; k < 6; k++)
        if (c->by_class[k])
            strbuf_appendf(out, "airlock_gateway_http_requests_total{route=\"%s\",code=\"%dxx\"} %llu\n",
                           label, k, (unsigned long long)c->by_class[k]);
    if (c->count)
        strbuf_appendf(out,
                       "airlock_gateway_http_request_duration_ms_sum{route=\"%s\"} %llu\n"
                       "airlock_gateway_http_request_duration_ms_count{route=\"%s\"} %llu\n",
                       label, (unsigned long long)c->duration_ms_sum, label,
                       (unsigned long long)c->count);
}

void gw_metrics_render(struct gw_metrics *m, struct strbuf *out)
{
    pthread_mutex_lock(&m->lock);
    strbuf_append(out, "# HELP airlock_gateway_http_requests_total HTTP requests by route and status class.\n"
                       "# TYPE airlock_gateway_http_requests_total counter\n"
                       "# HELP airlock_gateway_http_request_duration_ms Time to the response (streams: to their end).\n"
                       "# TYPE airlock_gateway_http_request_duration_ms summary\n");
    for (size_t i = 0; i < gw_routes_count && i < GW_METRICS_MAX_ROUTES; i++) {
        char label[128];
        snprintf(label, sizeof(label), "%s %s", gw_routes[i].method, gw_routes[i].pattern);
        render_route(out, label, &m->routes[i]);
    }
    render_route(out, "unmatched", &m->routes[GW_METRICS_MAX_ROUTES]);
    strbuf_appendf(out,
                   "# HELP airlock_gateway_http_requests_in_flight Requests being served now.\n"
                   "# TYPE airlock_gateway_http_requests_in_flight gauge\n"
                   "airlock_gateway_http_requests_in_flight %llu\n",
                   (unsigned long long)m->in_flight);
    pthread_mutex_unlock(&m->lock);
}
