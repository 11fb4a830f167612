#include "egress_metrics.h"

#include <stdlib.h>
#include <string.h>

#include "rpc_server.h"

struct egress_metrics *egress_metrics_new(void)
{
    struct egress_metrics *m = calloc(1, sizeof(*m));
    if (!m || !(m->reg = metrics_registry_new())) {
        free(m);
        return NULL;
    }
    m->calls = rpc_calls_metric(m->reg, "airlock_egress");
    m->connections = metrics_counter(m->reg, "airlock_egress_connections_total",
                                     "Guest TCP connections (and later requests on them) "
                                     "decided, by decision and reason.",
                                     2, METRIC_LABELS("decision", "reason"));
    m->dns = metrics_counter(m->reg, "airlock_egress_dns_answers_total",
                             "DNS questions of guests answered, by decision and reason.", 2,
                             METRIC_LABELS("decision", "reason"));
    m->bytes = metrics_counter(m->reg, "airlock_egress_bytes_total",
                               "Bytes of ended connections, by direction (sent: guest to "
                               "upstream, received: upstream to guest).",
                               1, METRIC_LABELS("direction"));
    /* Both directions from the start, as the dashboards' rates want. */
    egress_metrics_bytes(m, 0, 0);
    if (!m->calls || !m->connections || !m->dns || !m->bytes) {
        egress_metrics_free(m);
        return NULL;
    }
    return m;
}

void egress_metrics_free(struct egress_metrics *m)
{
    if (!m)
        return;
    metrics_registry_free(m->reg);
    free(m);
}

void egress_metrics_logged(struct egress_metrics *m, const struct conn_entry *e)
{
    if (!m)
        return;
    metric_add(strcmp(e->protocol, "dns") == 0 ? m->dns : m->connections,
               METRIC_LABELS(e->allowed ? "allowed" : "denied", e->reason), 1);
}

void egress_metrics_bytes(struct egress_metrics *m, uint64_t sent, uint64_t received)
{
    if (!m)
        return;
    metric_add(m->bytes, METRIC_LABELS("sent"), (double)sent);
    metric_add(m->bytes, METRIC_LABELS("received"), (double)received);
}
