/* An error (common/airlock_error.h) as the gRPC status and message of
 * every API that answers one, and a status another service answered as
 * the class of an error. */
#ifndef AIRLOCK_RPC_ERR_H
#define AIRLOCK_RPC_ERR_H

#include <grpc/status.h>

#include "airlock_error.h"
#include "rpc_server.h"

/* The status of a failure's class; a failure without one (AIRLOCK_OK) is
 * INTERNAL, never an OK answer. */
grpc_status_code airlock_error_status(const struct airlock_error *e);

/* The class of status st (AIRLOCK_OK for OK): airlock_error_status gives
 * st back, so a relayed status stays what it was. */
enum airlock_err airlock_error_class_of(grpc_status_code st);

/* The status st and its details (a message) another service answered,
 * as e: its class (a quota's refusal, RESOURCE_EXHAUSTED whose message
 * begins AIRLOCK_QUOTA_MESSAGE_PREFIX, is AIRLOCK_ERR_QUOTA, not a full
 * node), and the details or, when there are none, the status's name.
 * Returns -1. */
int airlock_error_from_status(struct airlock_error *e, grpc_status_code st, const char *details);

/* The name of e's status ("NOT_FOUND"), for log lines. */
const char *airlock_error_status_name(const struct airlock_error *e);

/* Ends the call with e's status and message. */
void rpc_call_finish_error(struct rpc_call *call, const struct airlock_error *e);

/* Ends a call whose answer was sent: OK when rc is 0, else with e. */
void rpc_call_finish_result(struct rpc_call *call, int rc, const struct airlock_error *e);

#endif
