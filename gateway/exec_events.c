#include "exec_events.h"

#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "rpc_err.h"
#include "sse.h"

typedef Airlock__Vmhost__V1__ExecEvent ExecEvent;

struct exec_sse {
    struct rpc_stream *stream;   /* NULL once finished */
    struct sse_buffer out;
    struct live_streams *streams;
    struct live_stream live;     /* a stopping gateway cancels stream through it */
    struct exec_slot slot;       /* an Exec's, given back at the end */
};

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

/* Appends the SSE form of ev; true for the last event (exit). */
static bool sse_format(struct exec_sse *x, const ExecEvent *ev)
{
    switch (ev->event_case) {
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT:
        sse_append(&x->out, ev->output->fd == 2 ? "stderr" : "stdout",
                   output_json(&ev->output->data));
        return false;
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT:
        sse_append(&x->out, "exit", exec_exit_json(ev->exit));
        return true;
    default:
        return false; /* started: nothing a REST client needs */
    }
}

/* Ends the gRPC call; a stream that stopped before its exit event becomes
 * a final "error" event naming why. */
static void sse_finish(struct exec_sse *x, bool exited)
{
    char *details = NULL;
    live_streams_detach(x->streams, &x->live);
    grpc_status_code st = rpc_stream_finish(x->stream, &details);
    x->stream = NULL;
    if (!exited && live_streams_stopping(x->streams)) {
        sse_append(&x->out, "error",
                   json_pack("{s:{s:s,s:s}}", "error", "code", "unavailable", "message",
                             "the gateway is shutting down: the command was stopped; run it again"));
    } else if (!exited) {
        const char *code;
        reply_http_status(
            airlock_error_class_of(st == GRPC_STATUS_OK ? GRPC_STATUS_UNAVAILABLE : st), &code);
        sse_append(&x->out, "error",
                   json_pack("{s:{s:s,s:s}}", "error", "code", code, "message",
                             details && *details ? details
                                                 : "the exec stream ended without an exit event"));
    }
    free(details);
}

/* Reads the next event into x->out. */
static void sse_next(struct exec_sse *x)
{
    ExecEvent *ev = NULL;
    if (rpc_stream_recv(x->stream, &airlock__vmhost__v1__exec_event__descriptor,
                        (ProtobufCMessage **)&ev) != 1) {
        sse_finish(x, false);
        return;
    }
    bool last = sse_format(x, ev);
    protobuf_c_message_free_unpacked(&ev->base, NULL);
    if (last)
        sse_finish(x, true);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct exec_sse *x = cls;
    while (sse_drained(&x->out)) {
        if (!x->stream)
            return MHD_CONTENT_READER_END_OF_STREAM;
        sse_next(x);
        if (strbuf_failed(&x->out.text))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    return sse_take(&x->out, buf, max);
}

static void sse_free(void *cls)
{
    struct exec_sse *x = cls;
    live_streams_detach(x->streams, &x->live);
    if (x->stream) {
        /* The client went away: for Exec the cancel reaches vmhost, which
         * kills the command's process group; a re-attach just detaches. */
        rpc_stream_cancel(x->stream);
        rpc_stream_finish(x->stream, NULL);
    }
    live_streams_remove(x->streams, &x->live);
    exec_slot_give(&x->slot);
    sse_buffer_free(&x->out);
    free(x);
}

enum MHD_Result exec_events_reply_sse(struct gw_request *r, struct rpc_stream *s,
                                      struct exec_slot *slot)
{
    ExecEvent *first = NULL;
    if (slot && rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor,
                                (ProtobufCMessage **)&first) != 1) {
        exec_slot_give(slot);
        char *details = NULL;
        grpc_status_code st = rpc_stream_finish(s, &details);
        enum MHD_Result rc = reply_grpc_error(r, st == GRPC_STATUS_OK ? GRPC_STATUS_INTERNAL : st,
                                              details);
        free(details);
        return rc;
    }
    struct exec_sse *x = calloc(1, sizeof(*x));
    if (!x) {
        if (slot)
            exec_slot_give(slot);
        if (first)
            protobuf_c_message_free_unpacked(&first->base, NULL);
        rpc_stream_cancel(s);
        rpc_stream_finish(s, NULL);
        return reply_error(r, 500, "internal", "out of memory");
    }
    if (slot) {
        x->slot = *slot; /* from here on the stream's to give back */
        *slot = (struct exec_slot){ 0 };
    }
    x->stream = s;
    x->streams = &r->gw->streams;
    if (!live_streams_add(x->streams, &x->live, s))
        rpc_stream_cancel(s); /* stopping: the reader ends it with an error event */
    if (first) {
        if (sse_format(x, first))
            sse_finish(x, true);
        protobuf_c_message_free_unpacked(&first->base, NULL);
    }
    return sse_reply(r, sse_read, x, sse_free);
}
