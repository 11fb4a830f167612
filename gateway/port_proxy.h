/* One client connection relayed to a sandbox port (docs/ports.md), on a
 * thread of its own: the sandbox looked up by id (any project's: its
 * traffic token, not a key, opens it), its state and the request's
 * credentials judged, then the connection's bytes, from the head the
 * ingress only peeked at, relayed both ways through vmhost's PortForward
 * until either side closes. HTTP/1.1, WebSocket and streamed bodies pass
 * untouched: the whole connection belongs to the one port. */
#ifndef AIRLOCK_GATEWAY_PORT_PROXY_H
#define AIRLOCK_GATEWAY_PORT_PROXY_H

#include <stdbool.h>
#include <stddef.h>

#include "port_target.h"

struct gateway;
struct port_relays;

/* Relays in flight, so a stopping gateway can end them. on_end(arg) runs
 * once per connection handed to port_proxy_start, when it is closed. */
struct port_relays *port_relays_new(unsigned max, void (*on_end)(void *arg), void *arg);
/* Cancels every relay and waits until all have ended; frees. */
void port_relays_stop(struct port_relays *r);

/* Takes fd, whose peeked (unread) head names t (or is invalid,
 * with why: answered 400); serves it on a new thread. */
void port_proxy_start(struct gateway *gw, struct port_relays *relays, int fd,
                      const struct port_target *t, const char *invalid_why);

#endif
