#include "rpc_err.h"

#include <string.h>

#include "rpc_client.h" /* rpc_status_name */

grpc_status_code airlock_error_status(const struct airlock_error *e)
{
    switch (e->class) {
    case AIRLOCK_OK: return GRPC_STATUS_INTERNAL;
    case AIRLOCK_ERR_INVALID: return GRPC_STATUS_INVALID_ARGUMENT;
    case AIRLOCK_ERR_NOT_FOUND: return GRPC_STATUS_NOT_FOUND;
    case AIRLOCK_ERR_EXISTS: return GRPC_STATUS_ALREADY_EXISTS;
    case AIRLOCK_ERR_CAPACITY:
    case AIRLOCK_ERR_QUOTA: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case AIRLOCK_ERR_STATE: return GRPC_STATUS_FAILED_PRECONDITION;
    case AIRLOCK_ERR_ABORTED: return GRPC_STATUS_ABORTED;
    case AIRLOCK_ERR_UNAVAILABLE: return GRPC_STATUS_UNAVAILABLE;
    case AIRLOCK_ERR_INTERNAL: return GRPC_STATUS_INTERNAL;
    case AIRLOCK_ERR_TIMEOUT: return GRPC_STATUS_DEADLINE_EXCEEDED;
    case AIRLOCK_ERR_CANCELLED: return GRPC_STATUS_CANCELLED;
    case AIRLOCK_ERR_UNAUTHENTICATED: return GRPC_STATUS_UNAUTHENTICATED;
    case AIRLOCK_ERR_PERMISSION: return GRPC_STATUS_PERMISSION_DENIED;
    case AIRLOCK_ERR_RANGE: return GRPC_STATUS_OUT_OF_RANGE;
    case AIRLOCK_ERR_UNIMPLEMENTED: return GRPC_STATUS_UNIMPLEMENTED;
    case AIRLOCK_ERR_DATA_LOSS: return GRPC_STATUS_DATA_LOSS;
    case AIRLOCK_ERR_UNKNOWN: return GRPC_STATUS_UNKNOWN;
    }
    return GRPC_STATUS_INTERNAL;
}

enum airlock_err airlock_error_class_of(grpc_status_code st)
{
    switch (st) {
    case GRPC_STATUS_OK: return AIRLOCK_OK;
    case GRPC_STATUS_INVALID_ARGUMENT: return AIRLOCK_ERR_INVALID;
    case GRPC_STATUS_NOT_FOUND: return AIRLOCK_ERR_NOT_FOUND;
    case GRPC_STATUS_ALREADY_EXISTS: return AIRLOCK_ERR_EXISTS;
    case GRPC_STATUS_RESOURCE_EXHAUSTED: return AIRLOCK_ERR_CAPACITY;
    case GRPC_STATUS_FAILED_PRECONDITION: return AIRLOCK_ERR_STATE;
    case GRPC_STATUS_ABORTED: return AIRLOCK_ERR_ABORTED;
    case GRPC_STATUS_UNAVAILABLE: return AIRLOCK_ERR_UNAVAILABLE;
    case GRPC_STATUS_INTERNAL: return AIRLOCK_ERR_INTERNAL;
    case GRPC_STATUS_DEADLINE_EXCEEDED: return AIRLOCK_ERR_TIMEOUT;
    case GRPC_STATUS_CANCELLED: return AIRLOCK_ERR_CANCELLED;
    case GRPC_STATUS_UNAUTHENTICATED: return AIRLOCK_ERR_UNAUTHENTICATED;
    case GRPC_STATUS_PERMISSION_DENIED: return AIRLOCK_ERR_PERMISSION;
    case GRPC_STATUS_OUT_OF_RANGE: return AIRLOCK_ERR_RANGE;
    case GRPC_STATUS_UNIMPLEMENTED: return AIRLOCK_ERR_UNIMPLEMENTED;
    case GRPC_STATUS_DATA_LOSS: return AIRLOCK_ERR_DATA_LOSS;
    case GRPC_STATUS_UNKNOWN: return AIRLOCK_ERR_UNKNOWN;
    default: return AIRLOCK_ERR_UNKNOWN; /* not a code of gRPC's */
    }
}

/* airlock_error_class_of, and a quota's refusal told from a full node. */
static enum airlock_err class_of_answer(grpc_status_code st, const char *details)
{
    if (st == GRPC_STATUS_RESOURCE_EXHAUSTED && details &&
        strncmp(details, AIRLOCK_QUOTA_MESSAGE_PREFIX, strlen(AIRLOCK_QUOTA_MESSAGE_PREFIX)) == 0)
        return AIRLOCK_ERR_QUOTA;
    return airlock_error_class_of(st);
}

int airlock_error_from_status(struct airlock_error *e, grpc_status_code st, const char *details)
{
    return airlock_error_set(e, class_of_answer(st, details), "%s",
                             details && *details ? details : rpc_status_name(st));
}

const char *airlock_error_status_name(const struct airlock_error *e)
{
    return rpc_status_name(airlock_error_status(e));
}

void rpc_call_finish_error(struct rpc_call *call, const struct airlock_error *e)
{
    rpc_call_finish(call, airlock_error_status(e), e->message);
}

void rpc_call_finish_result(struct rpc_call *call, int rc, const struct airlock_error *e)
{
    if (rc == 0)
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    else
        rpc_call_finish_error(call, e);
}
