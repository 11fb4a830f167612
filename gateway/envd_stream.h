/* A vmhost stream relayed as a Connect server stream of envd's events
 * (process events, directory watch events): each upstream message becomes
 * envelopes, a quiet upstream a keepalive event (at the client's
 * Keepalive-Ping-Interval, as envd sends them), the end an end-stream
 * message: {} after the kind's last event, else the error that cut the
 * stream short. A stopping gateway ends it through live_streams.h; a
 * client that leaves cancels the upstream call. */
#ifndef AIRLOCK_GATEWAY_ENVD_STREAM_H
#define AIRLOCK_GATEWAY_ENVD_STREAM_H

#include <jansson.h>
#include <stdbool.h>

#include "gateway.h"
#include "rpc_client.h"
#include "strbuf.h"

struct envd_stream_kind {
    const ProtobufCMessageDescriptor *desc; /* the upstream's messages */
    /* Events as the response message holds them: in a field named event
     * (process.StartResponse: {"event":{"data":…}}), or its oneof at the
     * top (filesystem.WatchDirResponse: {"filesystem":…}). */
    bool in_event_field;
    /* Appends msg's envelopes to out; true after the stream's last
     * event. owner: what envd_stream_reply was given. */
    bool (*append)(struct strbuf *out, const ProtobufCMessage *msg, void *owner);
    const char *stopping;   /* the end-stream's message when the gateway stops */
    const char *unfinished; /* when the upstream ends before the last event */
    void (*release)(void *owner);
};

/* The response message of event name with value (stolen) for kind. */
json_t *envd_event(const struct envd_stream_kind *kind, const char *name, json_t *value);

/* Answers r with first (an event, stolen; NULL: none) and then s's
 * messages; takes s and owner. */
enum MHD_Result envd_stream_reply(struct gw_request *r, struct rpc_stream *s,
                                  const struct envd_stream_kind *kind, json_t *first, void *owner);

#endif
