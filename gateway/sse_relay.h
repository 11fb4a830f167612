/* A vmhost server stream relayed to a REST client as SSE, message by
 * message (exec output, process re-attach, directory watches): the
 * response is registered in live_streams so a stopping gateway ends it
 * with an "error" event, a client that leaves cancels the upstream, and a
 * stream that breaks before its last message ends with an "error" event
 * naming why. What each message looks like is the kind's. */
#ifndef AIRLOCK_GATEWAY_SSE_RELAY_H
#define AIRLOCK_GATEWAY_SSE_RELAY_H

#include <stdbool.h>

#include "gateway.h"
#include "sse.h"

struct sse_relay_kind {
    const ProtobufCMessageDescriptor *desc;
    /* Appends what msg is to the client to out (first: the stream's first
     * message; owner: sse_relay_reply's); true for the stream's last. */
    bool (*format)(struct sse_buffer *out, const ProtobufCMessage *msg, bool first, void *owner);
    /* The error event's message when the stream ends without its last
     * message and with an OK status; NULL: that is its normal end. */
    const char *unfinished;
    /* The error event's message when the gateway stops. */
    const char *stopping;
    /* Releases the owner passed to sse_relay_reply (NULL: nothing to do). */
    void (*release)(void *owner);
};

/* Relays stream s (a request sent; owned from here on). With await_first
 * the first message is awaited before answering, so a call that fails at
 * once is a plain JSON error instead of a 200; use it only for a stream
 * whose first message comes at once. owner goes to kind->release when the
 * response is done (also on every failure here). */
enum MHD_Result sse_relay_reply(struct gw_request *r, struct rpc_stream *s,
                                const struct sse_relay_kind *kind, bool await_first, void *owner);

#endif
