/* The caller check of a server with mutual TLS (rpc_server.c): the
 * client's certificate must chain to the internal CA and name an identity
 * the method lets in (struct rpc_method's callers). */
#ifndef AIRLOCK_RPC_CALLER_H
#define AIRLOCK_RPC_CALLER_H

#include <grpc/grpc.h>
#include <grpc/status.h>

#include "peer_identity.h"
#include "tls_credentials.h"

/* 0 with *caller filled when the call may go on; else -1 with the status
 * and message to finish it with (UNAUTHENTICATED for a certificate that is
 * missing, expired, of another CA or without identity; PERMISSION_DENIED
 * for a role the method does not let in), after one log line naming the
 * peer's address, its identity when known, and the reason. */
int rpc_caller_check(grpc_call *call, const char *method, unsigned callers,
                     struct tls_credentials *tls, struct peer_identity *caller,
                     grpc_status_code *code, char *msg, size_t msglen);

#endif
