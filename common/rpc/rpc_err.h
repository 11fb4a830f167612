/* An error (common/airlock_error.h) as the gRPC status and message of
 * every API that answers one: vmhost's, egress's. */
#ifndef AIRLOCK_RPC_ERR_H
#define AIRLOCK_RPC_ERR_H

#include <grpc/status.h>

#include "airlock_error.h"
#include "rpc_server.h"

/* The status of a failure's class; a failure without one (AIRLOCK_OK) is
 * INTERNAL, never an OK answer. */
grpc_status_code airlock_error_status(const struct airlock_error *e);

/* Ends the call with e's status and message. */
void rpc_call_finish_error(struct rpc_call *call, const struct airlock_error *e);

#endif
