#include "exec_events.h"

#include <stdlib.h>

#include "reply.h"
#include "sse_relay.h"

typedef Airlock__Vmhost__V1__ExecEvent ExecEvent;

json_t *exec_exit_json(const Airlock__Vmhost__V1__ExecExit *x)
{
    return json_pack("{s:i,s:i,s:b}", "exit_code", (json_int_t)x->exit_code, "signal",
                     (json_int_t)x->signal, "timed_out", x->timed_out);
}

/* {"data":"…"} for UTF-8 bytes, {"data_b64":"…"} otherwise. */
static json_t *output_json(const ProtobufCBinaryData *d)
{
    json_t *s = reply_utf8_string(d->data, d->len);
    if (s)
        return json_pack("{s:o}", "data", s);
    return json_pack("{s:o}", "data_b64", reply_base64(d->data, d->len));
}

/* Appends the SSE form of an ExecEvent; true for the last event (exit). */
static bool exec_format(struct sse_buffer *out, const ProtobufCMessage *msg, bool first,
                        void *owner)
{
    (void)first;
    (void)owner;
    const ExecEvent *ev = (const ExecEvent *)msg;
    switch (ev->event_case) {
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT:
        sse_append(out, ev->output->fd == 2 ? "stderr" : "stdout", output_json(&ev->output->data));
        return false;
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT:
        sse_append(out, "exit", exec_exit_json(ev->exit));
        return true;
    default:
        return false; /* started: nothing a REST client needs */
    }
}

/* An Exec's slot, given back when its response is done. */
static void exec_slot_release(void *owner)
{
    struct exec_slot *slot = owner;
    if (slot) {
        exec_slot_give(slot);
        free(slot);
    }
}

static const struct sse_relay_kind exec_kind = {
    .desc = &airlock__vmhost__v1__exec_event__descriptor,
    .format = exec_format,
    .unfinished = "the exec stream ended without an exit event",
    .stopping = "the gateway is shutting down: the command was stopped; run it again",
    .release = exec_slot_release,
};

enum MHD_Result exec_events_reply_sse(struct gw_request *r, struct rpc_stream *s,
                                      struct exec_slot *slot)
{
    struct exec_slot *owned = NULL;
    if (slot) {
        owned = malloc(sizeof(*owned));
        if (!owned) {
            exec_slot_give(slot);
            rpc_stream_cancel(s);
            rpc_stream_finish(s, NULL);
            return reply_error(r, 500, "internal", "out of memory");
        }
        *owned = *slot; /* from here on the stream's to give back */
        *slot = (struct exec_slot){ 0 };
    }
    return sse_relay_reply(r, s, &exec_kind, slot != NULL, owned);
}
