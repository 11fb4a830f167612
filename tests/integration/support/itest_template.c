#include "itest_template.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "rpc_client.h"

void itest_build_free(struct itest_build *r)
{
    free(r->details);
    free(r->log);
    if (r->done)
        protobuf_c_message_free_unpacked(&r->done->base, NULL);
}

void itest_build(struct itest_vmhost *vh, const Airlock__Vmhost__V1__TemplateSpec *spec,
                 struct itest_build *r)
{
    memset(r, 0, sizeof(*r));
    Airlock__Vmhost__V1__BuildTemplateRequest req = AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_REQUEST__INIT;
    req.spec = (Airlock__Vmhost__V1__TemplateSpec *)spec;
    struct rpc_stream *s =
        rpc_stream_open(vh->ch, ITEST_METHOD("BuildTemplate"), ITEST_CALL_TIMEOUT_MS);
    assert_non_null(s);
    rpc_stream_send(s, &req.base);
    rpc_stream_close_send(s);
    size_t len = 0;
    r->log = calloc(1, 1);
    Airlock__Vmhost__V1__BuildTemplateEvent *ev;
    while (rpc_stream_recv(s, &airlock__vmhost__v1__build_template_event__descriptor,
                           (ProtobufCMessage **)&ev) == 1) {
        if (ev->event_case == AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_EVENT__EVENT_LOG) {
            size_t n = strlen(ev->log);
            r->log = realloc(r->log, len + n + 2);
            memcpy(r->log + len, ev->log, n);
            len += n;
            r->log[len++] = '\n';
            r->log[len] = '\0';
            protobuf_c_message_free_unpacked(&ev->base, NULL);
        } else {
            if (r->done)
                protobuf_c_message_free_unpacked(&r->done->base, NULL);
            r->done = ev;
        }
    }
    r->status = rpc_stream_finish(s, &r->details);
}

void itest_must_build(struct itest_vmhost *vh, const Airlock__Vmhost__V1__TemplateSpec *spec,
                      struct itest_build *r)
{
    itest_build(vh, spec, r);
    if (r->status != GRPC_STATUS_OK || !r->done) {
        itest_vmhost_print_log_tail(vh);
        fail_msg("BuildTemplate %s: %s %s\nlog:\n%s", spec->name, rpc_status_name(r->status),
                 r->details ? r->details : "", r->log);
    }
}
