/* GET /v1/events: the caller's project's lifecycle events as SSE, from a
 * NATS subscription of the client's own (events_feed.h), in place before
 * the response starts: an event committed after the client has the
 * response headers is delivered. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "events_feed.h"
#include "reply.h"
#include "route_handlers.h"
#include "sse.h"

/* How often a waiting reader looks at gw->stopping. */
#define EVENTS_POLL_MS 1000
/* An idle stream gets a comment this often: proxies keep it open and a
 * client that went away is noticed (the write fails). */
#define EVENTS_KEEPALIVE_MS 15000

struct event_stream {
    struct gateway *gw;
    natsSubscription *sub;
    struct sse_buffer out;
    int64_t last_write_ms;
    bool ended;
    struct live_stream live;     /* counted, so a stopping gateway waits for the last event */
};

/* Waits for the next event (or a keepalive's turn) into s->out. */
static void events_next(struct event_stream *s)
{
    while (!atomic_load(&s->gw->stopping)) {
        json_t *data;
        natsStatus st;
        int got = gw_events_next(s->sub, EVENTS_POLL_MS, &data, &st);
        if (got > 0) {
            sse_append(&s->out, "sandbox", data);
            return;
        }
        if (got < 0) {
            sse_append(&s->out, "error",
                       json_pack("{s:{s:s,s:s}}", "error", "code", "unavailable", "message",
                                 natsStatus_GetText(st)));
            s->ended = true;
            return;
        }
        if (clock_monotonic_ms() - s->last_write_ms >= EVENTS_KEEPALIVE_MS) {
            sse_append_comment(&s->out, "keepalive");
            return;
        }
    }
    /* The gateway is stopping: say so, then end the stream cleanly. */
    sse_append(&s->out, "error",
               json_pack("{s:{s:s,s:s}}", "error", "code", "unavailable", "message",
                         "the gateway is shutting down; reconnect"));
    s->ended = true;
}

static ssize_t events_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct event_stream *s = cls;
    while (sse_drained(&s->out)) {
        if (s->ended)
            return MHD_CONTENT_READER_END_OF_STREAM;
        events_next(s);
        if (strbuf_failed(&s->out.text))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    s->last_write_ms = clock_monotonic_ms();
    return sse_take(&s->out, buf, max);
}

static void events_free(void *cls)
{
    struct event_stream *s = cls;
    live_streams_remove(&s->gw->streams, &s->live);
    natsSubscription_Destroy(s->sub);
    sse_buffer_free(&s->out);
    free(s);
}

enum MHD_Result handle_events(struct gw_request *r)
{
    struct event_stream *s = calloc(1, sizeof(*s));
    if (!s)
        return reply_error(r, 500, "internal", "out of memory");
    s->gw = r->gw;
    if (!live_streams_add(&r->gw->streams, &s->live, NULL)) {
        free(s);
        return reply_error(r, 503, "unavailable", "the gateway is shutting down");
    }
    natsStatus st = gw_events_subscribe(r->gw, r->project_id, &s->sub);
    if (st != NATS_OK) {
        events_free(s);
        return reply_error(r, 503, "unavailable", "the event bus (NATS) is not reachable: %s",
                           natsStatus_GetText(st));
    }
    /* Sent at once, so clients see the stream is live before any event. */
    sse_append_comment(&s->out, "subscribed");
    return sse_reply(r, events_read, s, events_free);
}
