/* The gRPC status of each error class (common/airlock_err.h), for every
 * API that answers one: vmhost's, egress's. */
#ifndef AIRLOCK_RPC_ERR_H
#define AIRLOCK_RPC_ERR_H

#include <grpc/status.h>

#include "airlock_err.h"

grpc_status_code airlock_err_status(enum airlock_err e);

#endif
