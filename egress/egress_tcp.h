/* A guest TCP connection from accept to close (egress_tcp.c). */
#ifndef AIRLOCK_EGRESS_TCP_H
#define AIRLOCK_EGRESS_TCP_H

#include "egress_state.h"

/* Takes over client_fd: registered in sb->conns, it is decided, dialled
 * and spliced on the connection loop. */
void egress_tcp_accept(struct egress_sandbox *sb, int client_fd);

#endif
