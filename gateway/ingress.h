/* The gateway's public HTTP listener (docs/ports.md). Each new connection
 * waits here until its request head has arrived, read with MSG_PEEK so
 * nothing is consumed; then it goes to the sandbox port the head names
 * (port_proxy.h), or, for everything else (the API, E2B's API and its
 * in-sandbox API), to libmicrohttpd (MHD_add_connection), which reads the
 * same bytes from the start. One thread with epoll does the waiting. */
#ifndef AIRLOCK_GATEWAY_INGRESS_H
#define AIRLOCK_GATEWAY_INGRESS_H

#include <stddef.h>

struct gateway;
struct ingress;

/* Listens on the gateway's --listen address and hands connections to
 * gw->daemon (started without a listener of its own); sets gw->ingress.
 * NULL with err. */
struct ingress *ingress_start(struct gateway *gw, char *err, size_t errlen);
/* Stops accepting, closes connections still waiting, ends the relays. */
void ingress_stop(struct ingress *in);
/* After libmicrohttpd stopped: its connections' close notices
 * (ingress_connection_closed) use the ingress until then. */
void ingress_free(struct ingress *in);

/* libmicrohttpd closed a connection the ingress handed it (its
 * MHD_OPTION_NOTIFY_CONNECTION): one place more under --max-connections. */
void ingress_connection_closed(struct ingress *in);

#endif
