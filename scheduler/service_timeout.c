/* SetSandboxTimeout: a sandbox's deadline moved (E2B's /timeout,
 * /connect and /refreshes: docs/e2b.md). Only the row changes; the
 * deadline controller acts on it (controller_deadline.c). */
#include "log.h"
#include "rpc_err.h"
#include "sandbox_store.h"
#include "scheduler_service.h"

void service_sandbox_set_timeout(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__SetSandboxTimeoutRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__set_sandbox_timeout_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    int rc = store_sandbox_set_timeout(&s->db, req->project_id, req->id, req->timeout_s,
                                       req->extend_only, &e);
    if (rc == 0) {
        log_info("sandbox timeout set", "request=%s sandbox=%s timeout_s=%u extend_only=%d",
                 req->request_id, req->id, req->timeout_s, req->extend_only);
        rc = service_reply_sandbox_now(call, s, req->project_id, req->id, &e);
    }
    if (rc < 0)
        rpc_call_finish_error(call, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
