/* A vmhost server stream relayed as SSE (sse_relay.h). */
#include "sse_relay.h"

#include <stdlib.h>
#include <string.h>

#include "live_streams.h"
#include "reply.h"
#include "rpc_err.h"

struct sse_relay {
    const struct sse_relay_kind *kind;
    void *owner;
    struct rpc_stream *stream;   /* NULL once finished */
    bool first;                  /* the next message is the stream's first */
    struct sse_buffer out;
    struct live_streams *streams;
    struct live_stream live;     /* a stopping gateway cancels stream through it */
};

static void relay_release(const struct sse_relay_kind *kind, void *owner)
{
    if (kind->release)
        kind->release(owner);
}

/* Ends the gRPC call; a stream that stopped before its last message
 * becomes a final "error" event naming why. */
static void relay_finish(struct sse_relay *x, bool complete)
{
    char *details = NULL;
    live_streams_detach(x->streams, &x->live);
    grpc_status_code st = rpc_stream_finish(x->stream, &details);
    x->stream = NULL;
    const char *message = NULL, *code = "unavailable";
    if (complete || (st == GRPC_STATUS_OK && !x->kind->unfinished)) {
        /* the end it was meant to have */
    } else if (live_streams_stopping(x->streams)) {
        message = x->kind->stopping;
    } else {
        reply_http_status(
            airlock_error_class_of(st == GRPC_STATUS_OK ? GRPC_STATUS_UNAVAILABLE : st), &code);
        message = details && *details ? details
                  : x->kind->unfinished ? x->kind->unfinished
                                        : "the stream ended";
    }
    if (message)
        sse_append(&x->out, "error",
                   json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", message));
    free(details);
}

static void relay_format(struct sse_relay *x, ProtobufCMessage *msg)
{
    bool last = x->kind->format(&x->out, msg, x->first, x->owner);
    x->first = false;
    protobuf_c_message_free_unpacked(msg, NULL);
    if (last)
        relay_finish(x, true);
}

static ssize_t relay_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct sse_relay *x = cls;
    while (sse_drained(&x->out)) {
        if (!x->stream)
            return MHD_CONTENT_READER_END_OF_STREAM;
        ProtobufCMessage *msg = NULL;
        if (rpc_stream_recv(x->stream, x->kind->desc, &msg) != 1)
            relay_finish(x, false);
        else
            relay_format(x, msg);
        if (strbuf_failed(&x->out.text))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    return sse_take(&x->out, buf, max);
}

static void relay_free(void *cls)
{
    struct sse_relay *x = cls;
    live_streams_detach(x->streams, &x->live);
    if (x->stream) {
        /* The client went away: the cancel reaches vmhost (an Exec's
         * process group is killed, a watch removed; a re-attach just
         * detaches). */
        rpc_stream_cancel(x->stream);
        rpc_stream_finish(x->stream, NULL);
    }
    live_streams_remove(x->streams, &x->live);
    relay_release(x->kind, x->owner);
    sse_buffer_free(&x->out);
    free(x);
}

enum MHD_Result sse_relay_reply(struct gw_request *r, struct rpc_stream *s,
                                const struct sse_relay_kind *kind, bool await_first, void *owner)
{
    ProtobufCMessage *first = NULL;
    if (await_first && rpc_stream_recv(s, kind->desc, &first) != 1) {
        relay_release(kind, owner);
        char *details = NULL;
        grpc_status_code st = rpc_stream_finish(s, &details);
        enum MHD_Result rc = reply_grpc_error(r, st == GRPC_STATUS_OK ? GRPC_STATUS_INTERNAL : st,
                                              details);
        free(details);
        return rc;
    }
    struct sse_relay *x = calloc(1, sizeof(*x));
    if (!x) {
        relay_release(kind, owner);
        if (first)
            protobuf_c_message_free_unpacked(first, NULL);
        rpc_stream_cancel(s);
        rpc_stream_finish(s, NULL);
        return reply_error(r, 500, "internal", "out of memory");
    }
    x->kind = kind;
    x->owner = owner;
    x->stream = s;
    x->first = true;
    x->streams = &r->gw->streams;
    if (!live_streams_add(x->streams, &x->live, s))
        rpc_stream_cancel(s); /* stopping: the reader ends it with an error event */
    if (first)
        relay_format(x, first);
    return sse_reply(r, relay_read, x, relay_free);
}
