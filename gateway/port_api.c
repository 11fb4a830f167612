#include "port_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "port_access.h"
#include "sandbox_netdefs.h"
#include "vmhost.pb-c.h"

/* Bound so that the ingress's connection from the sandbox's namespace to
 * the guest's address reaches it. */
static bool reachable(const char *address)
{
    return strcmp(address, "0.0.0.0") == 0 || strcmp(address, "::") == 0 ||
           strcmp(address, SANDBOX_NET_GUEST_ADDR) == 0 ||
           strcmp(address, "::ffff:" SANDBOX_NET_GUEST_ADDR) == 0;
}

int gw_ports_list(struct gateway *gw, const struct gw_caller *c, const char *id,
                  const struct port_where *w, struct port_listing **out, size_t *n,
                  struct airlock_error *e)
{
    *out = NULL;
    *n = 0;
    Airlock__Vmhost__V1__ListPortsRequest req = AIRLOCK__VMHOST__V1__LIST_PORTS_REQUEST__INIT;
    req.sandbox_id = (char *)id;
    Airlock__Vmhost__V1__ListPortsResponse *resp = NULL;
    if (gw_sandbox_node_unary(gw, c, id, VMHOST_METHOD("ListPorts"), &req.base,
                              &airlock__vmhost__v1__list_ports_response__descriptor,
                              (ProtobufCMessage **)&resp, e) < 0)
        return -1;
    struct port_listing *list = calloc(resp->n_ports + 1, sizeof(*list));
    if (!list) {
        protobuf_c_message_free_unpacked(&resp->base, NULL);
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    }
    for (size_t i = 0; i < resp->n_ports; i++) {
        struct port_listing *p = &list[i];
        p->port = resp->ports[i]->port;
        snprintf(p->address, sizeof(p->address), "%s", resp->ports[i]->address);
        p->reachable = reachable(p->address);
        struct port_grant g = { id, p->port, true, "" };
        if (port_access_url(&g, w->scheme, gw->cfg.public_domain, w->listen_port, 0, p->url,
                            sizeof(p->url)) < 0)
            p->url[0] = 0;
    }
    *out = list;
    *n = resp->n_ports;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}

int gw_port_url(struct gateway *gw, const struct gw_caller *c, const char *id, const char *port,
                uint64_t expires_in_s, const struct port_where *w, char *url, size_t urllen,
                int64_t *expires_at, struct airlock_error *e)
{
    *expires_at = 0;
    char *end;
    unsigned long p = strtoul(port, &end, 10);
    if (!*port || *end || port[0] == '0' || p < 1 || p > 65535)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "port: \"%.20s\" is not a TCP port "
                                 "(1-65535)", port);
    if (expires_in_s &&
        (expires_in_s < PORT_ACCESS_EXPIRES_MIN_S || expires_in_s > PORT_ACCESS_EXPIRES_MAX_S))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "expires_in_s: %llu is not %d..%d seconds",
                                 (unsigned long long)expires_in_s, PORT_ACCESS_EXPIRES_MIN_S,
                                 PORT_ACCESS_EXPIRES_MAX_S);
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    if (gw_sandbox_ref_call(gw, c, SCHEDULER_METHOD("GetSandbox"), id,
                            &airlock__scheduler__v1__sandbox__descriptor,
                            (ProtobufCMessage **)&sb, e) < 0)
        return -1;
    if (expires_in_s)
        *expires_at = (int64_t)time(NULL) + (int64_t)expires_in_s;
    else if (!sb->public_ports)
        *expires_at = (int64_t)time(NULL) + PORT_ACCESS_EXPIRES_DEFAULT_S;
    struct port_grant g = { sb->id, (unsigned)p, sb->public_ports, sb->traffic_token };
    int rc = port_access_url(&g, w->scheme, gw->cfg.public_domain, w->listen_port, *expires_at,
                             url, urllen);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    if (rc < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "the URL is longer than %zu bytes "
                                 "(--public-domain)", urllen);
    return 0;
}
