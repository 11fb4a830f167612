/* Sandboxes.ListPorts and Sandboxes.GetPortUrl: REST's ports routes
 * (handlers_ports.c) through the same port_api.h. */
#include <stdio.h>
#include <stdlib.h>

#include "grpc_call.h"
#include "port_api.h"
#include "reply.h"

/* The REST listener's own address: gRPC callers reached another one. */
static void where_from_config(struct grpc_request *r, struct port_where *w)
{
    const struct gateway_config *cfg = &r->gw->cfg;
    w->scheme = cfg->tls_cert_file ? "https" : "http";
    unsigned standard = cfg->tls_cert_file ? 443 : 80;
    w->listen_port[0] = 0;
    if (cfg->listen_port != standard)
        snprintf(w->listen_port, sizeof(w->listen_port), ":%u", cfg->listen_port);
}

void grpc_list_ports(struct grpc_request *r)
{
    const Airlock__V1__SandboxRequest *in = (const void *)r->msg;
    struct port_where w;
    where_from_config(r, &w);
    struct port_listing *list;
    size_t n;
    struct airlock_error e;
    if (gw_ports_list(r->gw, &r->caller, in->id, &w, &list, &n, &e) < 0) {
        grpc_fail_error(r, &e);
        return;
    }
    Airlock__V1__Port *ports = calloc(n + 1, sizeof(*ports));
    Airlock__V1__Port **ptrs = calloc(n + 1, sizeof(*ptrs));
    if (!ports || !ptrs) {
        grpc_fail(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        for (size_t i = 0; i < n; i++) {
            airlock__v1__port__init(&ports[i]);
            ports[i].port = list[i].port;
            ports[i].address = list[i].address;
            ports[i].reachable = list[i].reachable;
            ports[i].url = list[i].url;
            ptrs[i] = &ports[i];
        }
        Airlock__V1__ListPortsResponse out = AIRLOCK__V1__LIST_PORTS_RESPONSE__INIT;
        out.n_ports = n;
        out.ports = ptrs;
        grpc_reply(r, &out.base);
    }
    free(ports);
    free(ptrs);
    free(list);
}

void grpc_get_port_url(struct grpc_request *r)
{
    const Airlock__V1__GetPortUrlRequest *in = (const void *)r->msg;
    struct port_where w;
    where_from_config(r, &w);
    char port[16], url[1024], at[40] = "";
    snprintf(port, sizeof(port), "%u", in->port);
    int64_t expires_at;
    struct airlock_error e;
    if (gw_port_url(r->gw, &r->caller, in->id, port, in->expires_in_s, &w, url, sizeof(url),
                    &expires_at, &e) < 0) {
        grpc_fail_error(r, &e);
        return;
    }
    if (expires_at)
        reply_rfc3339(expires_at * 1000, at, sizeof(at));
    Airlock__V1__PortUrl out = AIRLOCK__V1__PORT_URL__INIT;
    out.url = url;
    out.expires_at = at;
    grpc_reply(r, &out.base);
}
