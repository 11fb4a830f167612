/* GET /v1/sandboxes/{id}/ports and POST /v1/sandboxes/{id}/ports/{port}/url
 * (docs/ports.md; the ingress itself: ingress.c). */
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "port_api.h"
#include "reply.h"
#include "route_handlers.h"

/* This gateway's URL start as the client reached it (its Host's port). */
static void where_from_request(struct gw_request *r, struct port_where *w)
{
    w->scheme = r->gw->cfg.tls_cert_file ? "https" : "http";
    w->listen_port[0] = 0;
    const char *host = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Host");
    const char *colon = host && host[0] != '[' ? strrchr(host, ':') : NULL;
    if (colon && strlen(colon) < sizeof(w->listen_port) && strspn(colon + 1, "0123456789") ==
                                                                 strlen(colon + 1))
        snprintf(w->listen_port, sizeof(w->listen_port), "%s", colon);
}

json_t *gw_ports_json(struct gw_request *r, const char *id, struct airlock_error *e)
{
    struct port_where w;
    where_from_request(r, &w);
    struct gw_caller c = gw_request_caller(r);
    struct port_listing *list;
    size_t n;
    if (gw_ports_list(r->gw, &c, id, &w, &list, &n, e) < 0)
        return NULL;
    json_t *ports = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(ports, json_pack("{s:i,s:s,s:b,s:s}", "port",
                                               (json_int_t)list[i].port, "address",
                                               list[i].address, "reachable", list[i].reachable,
                                               "url", list[i].url));
    free(list);
    return ports;
}

enum MHD_Result handle_ports_list(struct gw_request *r)
{
    struct airlock_error e;
    json_t *ports = gw_ports_json(r, r->path_id, &e);
    if (!ports)
        return reply_airlock_error(r, &e);
    return reply_json(r, 200, json_pack("{s:o}", "ports", ports));
}

enum MHD_Result handle_port_url(struct gw_request *r)
{
    static const struct json_field fields[] = { { "expires_in_s", JF_UINT } };
    enum MHD_Result rc = MHD_NO;
    json_t *body = gw_json_body(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    struct airlock_error e;
    uint64_t expires_in;
    struct port_where w;
    where_from_request(r, &w);
    struct gw_caller c = gw_request_caller(r);
    char url[1024];
    int64_t expires_at;
    if (json_input_uint(body, "expires_in_s", UINT32_MAX, 0, &expires_in, &e) < 0 ||
        gw_port_url(r->gw, &c, r->path_id, r->path_port, expires_in, &w, url, sizeof(url),
                    &expires_at, &e) < 0) {
        json_decref(body);
        return reply_airlock_error(r, &e);
    }
    json_decref(body);
    json_t *out = json_pack("{s:s}", "url", url);
    if (expires_at) {
        char at[40];
        reply_rfc3339(expires_at * 1000, at, sizeof(at));
        json_object_set_new(out, "expires_at", json_string(at));
    }
    return reply_json(r, 200, out);
}
