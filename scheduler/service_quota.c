/* GetQuotas and SetQuotas: a project's quotas and usage
 * (quota_store.h). Who may call them is the gateway's to decide (the
 * admin key sets; a project key reads only its own). */
#include "log.h"
#include "quota_store.h"
#include "rpc_err.h"
#include "scheduler.pb-c.h"
#include "scheduler_service.h"

/* Answers with project_id's quotas as they are now; -1 with e when they
 * cannot be read (nothing answered). */
static int reply_quotas(struct rpc_call *call, struct scheduler *s, const char *project_id,
                        struct airlock_error *e)
{
    struct project_quotas_msg q;
    int rc = store_quota_get(&s->db, project_id, &s->cfg.quota_defaults, &q, e);
    if (rc == 0)
        rpc_call_reply(call, &q.msg.base);
    return rc;
}

void service_quotas_get(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__ProjectRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__project_ref__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    if (reply_quotas(call, s, req->project_id, &e) < 0)
        rpc_call_finish_error(call, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_quotas_set(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__SetQuotasRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__set_quotas_request__descriptor);
    if (!req)
        return;
    Airlock__V1__QuotaLimits none = AIRLOCK__V1__QUOTA_LIMITS__INIT;
    struct airlock_error e;
    int rc = store_quota_set(&s->db, req->project_id, req->limits ? req->limits : &none, &e);
    if (rc == 0) {
        log_info("quotas set", "request=%s project=%s actor=%s", req->request_id, req->project_id,
                 service_actor(req->actor));
        rc = reply_quotas(call, s, req->project_id, &e);
    }
    if (rc < 0)
        rpc_call_finish_error(call, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
