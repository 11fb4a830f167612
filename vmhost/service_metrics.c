/* GetSandboxMetrics: what the running guest uses now, asked of guestd
 * (guest.proto Metrics; E2B's metrics, docs/e2b.md). */
#include "vmhost_service.h"

void service_sandbox_metrics(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__SandboxRef *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    struct guest_channel *ch = service_running_sandbox(call, vh, req->id, &sb);
    GuestFrame *ans = NULL;
    if (!ch)
        goto out;
    Airlock__Guest__V1__MetricsRequest mr = AIRLOCK__GUEST__V1__METRICS_REQUEST__INIT;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_METRICS_REQUEST;
    f.metrics_request = &mr;
    ans = service_guest_call(call, sb, ch, &f);
    if (!ans)
        goto out;
    if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_METRICS)
        rpc_call_reply(call, &ans->metrics->base);
    else
        service_finish_from_result(call, ans);
out:
    frame_free(ans);
    service_done(sb, ch);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
