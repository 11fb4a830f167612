/* The scheduler's gRPC service (protos/scheduler.proto). service.c holds
 * the method table and the project/key methods; service_sandbox.c the
 * sandbox lifecycle. */
#ifndef AIRLOCK_SCHEDULER_SERVICE_H
#define AIRLOCK_SCHEDULER_SERVICE_H

#include "rpc_server.h"
#include "scheduler.h"

struct rpc_server *scheduler_service_start(struct scheduler *s, char *err, size_t errlen);

/* Answers with the sandbox in row 0 of res and OK. */
void service_reply_sandbox(struct rpc_call *call, PGresult *res);

void service_sandbox_create(struct rpc_call *call, void *ctx);
void service_sandbox_get(struct rpc_call *call, void *ctx);
void service_sandbox_list(struct rpc_call *call, void *ctx);
void service_sandbox_delete(struct rpc_call *call, void *ctx);
void service_sandbox_pause(struct rpc_call *call, void *ctx);
void service_sandbox_resume(struct rpc_call *call, void *ctx);
void service_sandbox_suspend(struct rpc_call *call, void *ctx);

#endif
