/* GET /v1/sandboxes/{id}/files/watch?path=&recursive=: the sandbox's
 * vmhost WatchDir relayed as SSE (docs/api.md "Watching a directory"): a
 * "start" event once the watch is in place, then one event per coalesced
 * change, named by its type; a comment line when the node's keepalive
 * comes, which is also how a client that left is noticed. Its leaving
 * cancels the stream, which removes the watch in the guest. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"

#include "reply.h"
#include "route_handlers.h"
#include "sse_relay.h"
#include "vmhost_names.h"
#include "watch_access.h"

typedef Airlock__Guest__V1__WatchEvents WatchEvents;

static json_t *event_json(const Airlock__Guest__V1__WatchEvent *ev)
{
    char when[40];
    reply_rfc3339(ev->unix_ms, when, sizeof(when));
    const char *type = gw_watch_event_name(ev->type);
    json_t *path = reply_utf8_string(ev->path.data, ev->path.len);
    return json_pack("{s:s,s:o,s:b,s:s}", "type", type, path ? "path" : "path_b64",
                     path ? path : reply_base64(ev->path.data, ev->path.len), "is_dir",
                     ev->is_dir, "time", when);
}

/* owner: the watched directory's path. */
static bool watch_format(struct sse_buffer *out, const ProtobufCMessage *msg, bool first,
                         void *owner)
{
    const WatchEvents *batch = (const WatchEvents *)msg;
    if (first) {
        Airlock__Guest__V1__WatchEvent start = AIRLOCK__GUEST__V1__WATCH_EVENT__INIT;
        start.path.data = owner;
        start.path.len = strlen(owner);
        start.is_dir = true;
        start.unix_ms = clock_realtime_ms();
        json_t *j = event_json(&start);
        json_object_set_new(j, "type", json_string("start"));
        sse_append(out, "start", j);
    }
    if (!first && batch->n_events == 0)
        sse_append_comment(out, "keepalive");
    for (size_t i = 0; i < batch->n_events; i++)
        sse_append(out, gw_watch_event_name(batch->events[i]->type), event_json(batch->events[i]));
    return false; /* a watch lasts until its client leaves */
}

static const struct sse_relay_kind watch_kind = {
    .desc = &airlock__guest__v1__watch_events__descriptor,
    .format = watch_format,
    .unfinished = NULL, /* ends OK only when the directory is gone */
    .stopping = "the gateway is shutting down: the watch ended; watch again",
    .release = free,
};

enum MHD_Result handle_file_watch(struct gw_request *r)
{
    const char *recursive = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "recursive");
    if (recursive && strcmp(recursive, "true") != 0 && strcmp(recursive, "false") != 0)
        return reply_error(r, 400, "invalid_argument", "recursive: must be true or false");
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    const char *path;
    enum MHD_Result rc = MHD_NO;
    struct rpc_channel *ch = gw_file_target(r, "watching files", &sb, &path, &rc);
    if (ch) {
        char *root = strdup(path);
        struct rpc_stream *s =
            root ? gw_watch_open(ch, sb->id, path, recursive && strcmp(recursive, "true") == 0)
                 : NULL;
        /* The first message comes at once: the watch in place, or why not. */
        if (s) {
            rc = sse_relay_reply(r, s, &watch_kind, true, root);
        } else {
            free(root);
            rc = reply_error(r, 500, "internal", "out of memory");
        }
    }
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}
