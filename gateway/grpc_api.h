/* The public gRPC API (protos/airlock/v1, docs/grpc-api.md):
 * services airlock.v1.Sandboxes, Templates, Projects, Nodes, Volumes and Events, served by the
 * gateway on a port of their own with the same API keys, the same scheduler
 * calls and the same direct vmhost streams as the REST API. */
#ifndef AIRLOCK_GATEWAY_GRPC_API_H
#define AIRLOCK_GATEWAY_GRPC_API_H

#include <stddef.h>

#include "gateway.h"

/* Serves the API on addr ("127.0.0.1:7071"); -1 with err. */
int grpc_api_start(struct gateway *gw, const char *addr, char *err, size_t errlen);
/* Cancels calls in flight, waits for their handlers, frees everything. */
void grpc_api_stop(struct gateway *gw);

#endif
