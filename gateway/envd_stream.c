#include "envd_stream.h"

#include <stdlib.h>
#include <string.h>

#include "connect_protocol.h"
#include "live_streams.h"
#include "reply.h"
#include "rpc_err.h"

/* Keepalive events on a quiet stream, unless the client asks for another
 * interval (Keepalive-Ping-Interval, seconds), as envd sends them. */
#define ENVD_KEEPALIVE_DEFAULT_S 50
#define ENVD_KEEPALIVE_MAX_S 3600

struct envd_stream {
    struct rpc_stream *stream; /* NULL once finished */
    const struct envd_stream_kind *kind;
    void *owner;
    int keepalive_ms;
    struct strbuf out;         /* envelopes not yet handed to MHD */
    size_t off;
    struct live_streams *streams;
    struct live_stream live;   /* a stopping gateway cancels stream through it */
};

json_t *envd_event(const struct envd_stream_kind *kind, const char *name, json_t *value)
{
    json_t *ev = json_pack("{s:o}", name, value);
    return kind->in_event_field ? json_pack("{s:o}", "event", ev) : ev;
}

/* Ends the upstream call and appends the end-stream. */
static void stream_finish(struct envd_stream *es, bool ended)
{
    char *details = NULL;
    live_streams_detach(es->streams, &es->live);
    grpc_status_code st = rpc_stream_finish(es->stream, &details);
    es->stream = NULL;
    struct airlock_error e;
    if (ended) {
        connect_end_stream(&es->out, NULL, NULL);
    } else if (live_streams_stopping(es->streams)) {
        connect_end_stream(&es->out, "unavailable", es->kind->stopping);
    } else {
        airlock_error_from_status(&e, st == GRPC_STATUS_OK ? GRPC_STATUS_UNAVAILABLE : st,
                                  details && *details ? details : es->kind->unfinished);
        connect_end_stream(&es->out, connect_code_name(e.class), e.message);
    }
    free(details);
}

static void stream_next(struct envd_stream *es)
{
    ProtobufCMessage *msg = NULL;
    int got = rpc_stream_recv_wait(es->stream, es->kind->desc, &msg, es->keepalive_ms);
    if (got < 0) {
        connect_envelope_json(&es->out, envd_event(es->kind, "keepalive", json_object()));
        return;
    }
    if (got == 0) {
        stream_finish(es, false);
        return;
    }
    bool last = es->kind->append(&es->out, msg, es->owner);
    protobuf_c_message_free_unpacked(msg, NULL);
    if (last)
        stream_finish(es, true);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct envd_stream *es = cls;
    while (es->off >= es->out.len) {
        es->out.len = es->off = 0;
        if (!es->stream)
            return MHD_CONTENT_READER_END_OF_STREAM;
        stream_next(es);
        if (strbuf_failed(&es->out))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = es->out.len - es->off < max ? es->out.len - es->off : max;
    memcpy(buf, es->out.data + es->off, n);
    es->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    struct envd_stream *es = cls;
    live_streams_detach(es->streams, &es->live);
    if (es->stream) {
        /* The client went away: only the relay ends (a process outlives
         * its caller; a watch goes with it). */
        rpc_stream_cancel(es->stream);
        rpc_stream_finish(es->stream, NULL);
    }
    live_streams_remove(es->streams, &es->live);
    if (es->kind->release)
        es->kind->release(es->owner);
    strbuf_free(&es->out);
    free(es);
}

static int keepalive_ms(struct gw_request *r)
{
    const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Keepalive-Ping-Interval");
    long s = v ? strtol(v, NULL, 10) : 0;
    if (s <= 0 || s > ENVD_KEEPALIVE_MAX_S)
        s = ENVD_KEEPALIVE_DEFAULT_S;
    return (int)s * 1000;
}

enum MHD_Result envd_stream_reply(struct gw_request *r, struct rpc_stream *s,
                                  const struct envd_stream_kind *kind, json_t *first, void *owner)
{
    struct envd_stream *es = calloc(1, sizeof(*es));
    if (!es) {
        json_decref(first);
        rpc_stream_cancel(s);
        rpc_stream_finish(s, NULL);
        if (kind->release)
            kind->release(owner);
        return MHD_NO;
    }
    es->stream = s;
    es->kind = kind;
    es->owner = owner;
    es->keepalive_ms = keepalive_ms(r);
    es->streams = &r->gw->streams;
    if (!live_streams_add(es->streams, &es->live, s))
        rpc_stream_cancel(s); /* stopping: the reader ends it with an error */
    if (first)
        connect_envelope_json(&es->out, first);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, es, stream_free);
    if (!resp) {
        stream_free(es);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", CONNECT_STREAM_TYPE);
    return reply_queue(r, 200, resp);
}
