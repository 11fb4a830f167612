/* What REST (handlers_ports.c) and the public gRPC API (grpc_ports.c)
 * share for a sandbox's ports (docs/ports.md): what listens in it, and
 * a port's URL, signed when the caller asks for an expiry or the ports
 * are not public. -1 with e naming what is wrong. */
#ifndef AIRLOCK_GATEWAY_PORT_API_H
#define AIRLOCK_GATEWAY_PORT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox_access.h"

/* How this gateway's URLs start: "http" or "https", and ":7070" or ""
 * (what the caller reached it by). */
struct port_where {
    const char *scheme;
    char listen_port[8];
};

struct port_listing {
    unsigned port;
    char address[48]; /* as the guest bound it */
    bool reachable;   /* bound to every address or the guest's own: the ingress reaches it */
    char url[512];
};

/* The running sandbox's listening TCP ports (*out: free()). */
int gw_ports_list(struct gateway *gw, const struct gw_caller *c, const char *id,
                  const struct port_where *w, struct port_listing **out, size_t *n,
                  struct airlock_error *e);

/* The URL of port (text, as the path or message carried it) of sandbox
 * id. expires_in_s: 0 for the default (signed for an hour unless the ports
 * are public), else PORT_ACCESS_EXPIRES_MIN_S..MAX_S. *expires_at: unix
 * seconds, 0 when unsigned. */
int gw_port_url(struct gateway *gw, const struct gw_caller *c, const char *id, const char *port,
                uint64_t expires_in_s, const struct port_where *w, char *url, size_t urllen,
                int64_t *expires_at, struct airlock_error *e);

#endif
