/* The /metrics listener of a service: libmicrohttpd on its own thread,
 * GET /metrics answers the registry's text, anything else 404. */
#ifndef AIRLOCK_METRICS_HTTP_H
#define AIRLOCK_METRICS_HTTP_H

#include <stddef.h>

#include "metrics_registry.h"

/* Every service's flag (and env) for it, in its usage text. */
#define METRICS_LISTEN_FLAG "metrics-listen"
#define METRICS_LISTEN_ENV "AIRLOCK_METRICS_LISTEN"
#define METRICS_LISTEN_USAGE                                                                     \
    "  --metrics-listen IP:PORT  serve Prometheus /metrics here (env AIRLOCK_METRICS_LISTEN;\n" \
    "                        unset: not served; 0.0.0.0:PORT for every interface)\n"

struct metrics_server;
struct MHD_Response;

/* flag_value if given, else $AIRLOCK_METRICS_LISTEN, else NULL (off). */
const char *metrics_listen_addr(const char *flag_value);

/* Whether addr is IPv4:PORT (port 1..65535); checked before a service
 * starts anything so a bad one is refused naming the flag. */
int metrics_listen_check(const char *addr, char *err, size_t errlen);

/* NULL with err set when addr is bad or cannot be bound. */
struct metrics_server *metrics_server_start(struct metrics_registry *reg, const char *addr,
                                            char *err, size_t errlen);
void metrics_server_stop(struct metrics_server *srv);

/* reg's text (metrics_render) as a libmicrohttpd response with the
 * exposition format's content type, for this listener and the gateway's
 * own /metrics route; NULL when out of memory. */
struct MHD_Response *metrics_response(struct metrics_registry *reg);

#endif
