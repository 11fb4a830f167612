#include "rpc_err.h"

grpc_status_code airlock_error_status(const struct airlock_error *e)
{
    switch (e->class) {
    case AIRLOCK_OK: return GRPC_STATUS_INTERNAL;
    case AIRLOCK_ERR_INVALID: return GRPC_STATUS_INVALID_ARGUMENT;
    case AIRLOCK_ERR_NOT_FOUND: return GRPC_STATUS_NOT_FOUND;
    case AIRLOCK_ERR_EXISTS: return GRPC_STATUS_ALREADY_EXISTS;
    case AIRLOCK_ERR_CAPACITY: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case AIRLOCK_ERR_STATE: return GRPC_STATUS_FAILED_PRECONDITION;
    case AIRLOCK_ERR_ABORTED: return GRPC_STATUS_ABORTED;
    case AIRLOCK_ERR_UNAVAILABLE: return GRPC_STATUS_UNAVAILABLE;
    case AIRLOCK_ERR_INTERNAL: return GRPC_STATUS_INTERNAL;
    }
    return GRPC_STATUS_INTERNAL;
}

void rpc_call_finish_error(struct rpc_call *call, const struct airlock_error *e)
{
    rpc_call_finish(call, airlock_error_status(e), e->message);
}
