#include "template_access.h"

struct rpc_stream *gw_template_build_open(struct gateway *gw, const struct gw_caller *c,
                                          const char *spec_json)
{
    struct rpc_stream *s = rpc_stream_open(gw->scheduler, SCHEDULER_METHOD("BuildTemplate"),
                                           GW_TEMPLATE_BUILD_TIMEOUT_MS);
    if (!s)
        return NULL;
    Airlock__Scheduler__V1__BuildTemplateRequest req =
        AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_REQUEST__INIT;
    GW_CALLER_FILL(req, c);
    req.spec_json = (char *)spec_json;
    rpc_stream_send(s, &req.base);
    rpc_stream_close_send(s);
    return s;
}

int gw_template_build_next(struct rpc_stream *s, Airlock__Scheduler__V1__BuildTemplateEvent **ev)
{
    return rpc_stream_recv(s, &airlock__scheduler__v1__build_template_event__descriptor,
                           (ProtobufCMessage **)ev);
}
