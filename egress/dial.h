/* Dialling upstream from the uplink side, and ending a connection with a
 * reset: shared by the connection loop (egress_tcp.c) and interception
 * (intercept.c), calling neither. */
#ifndef AIRLOCK_EGRESS_DIAL_H
#define AIRLOCK_EGRESS_DIAL_H

#include <stdint.h>

#include "egress_state.h"

/* Creates the socket (recorded in c->upstream_fd, where a detach can shut
 * it down) and starts connecting from the calling thread's namespace: 0
 * connected, 1 in progress (egress_dial_result once writable), -1 failed
 * or the sandbox is being detached. */
int egress_dial_begin(struct egress_conn *c, uint32_t addr, uint16_t port);
/* 0 when the connect of fd succeeded. */
int egress_dial_result(int fd);

/* Dials addr:port from the calling thread's namespace (the uplink one)
 * into c->upstream_fd (non-blocking socket), blocking for at most
 * timeout_ms: for intercepted connections, on their own thread. -1 when
 * it failed or the sandbox is being detached. */
int egress_dial(struct egress_conn *c, uint32_t addr, uint16_t port, int timeout_ms);

/* Makes the close of fd a reset (SO_LINGER 0). */
void egress_reset(int fd);

#endif
