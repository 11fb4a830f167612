/* GetSandboxMetrics: what the running guest uses now, asked of guestd
 * (guest.proto Metrics; E2B's metrics, docs/e2b.md). */
#include "vmhost_service.h"

void service_sandbox_metrics(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__SandboxRef *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    Airlock__Guest__V1__MetricsRequest mr = AIRLOCK__GUEST__V1__METRICS_REQUEST__INIT;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_METRICS_REQUEST;
    f.metrics_request = &mr;
    GuestFrame *ans = service_guest_ask(call, ctx, req->id, false, &f,
                                        AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_METRICS);
    if (ans)
        rpc_call_reply(call, &ans->metrics->base);
    frame_free(ans);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
