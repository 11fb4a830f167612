/* envd's filesystem.WatchDir on the sandbox's vmhost WatchDir (inotify in
 * guestd, watch_access.h): a start event once the watch is in place, then
 * one filesystem event per coalesced change, its name relative to the
 * watched directory, as envd sends them. Overflow markers have no envd
 * counterpart and are left out (docs/e2b.md). The polling watchers
 * (CreateWatcher, GetWatcherEvents, RemoveWatcher) are not served: E2B's
 * SDK watches with this stream. */
#include <stdlib.h>
#include <string.h>

#include "connect_protocol.h"
#include "rpc_err.h"
#include "envd_routes.h"
#include "envd_stream.h"
#include "vmhost.pb-c.h"
#include "watch_access.h"

typedef Airlock__Guest__V1__WatchEvents WatchEvents;

static const struct envd_stream_kind watch_kind;

static const char *event_type(Airlock__Guest__V1__WatchEventType t)
{
    switch (t) {
    case AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_CREATE: return "EVENT_TYPE_CREATE";
    case AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_WRITE: return "EVENT_TYPE_WRITE";
    case AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_REMOVE: return "EVENT_TYPE_REMOVE";
    case AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_RENAME: return "EVENT_TYPE_RENAME";
    case AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_CHMOD: return "EVENT_TYPE_CHMOD";
    default: return NULL;
    }
}

/* owner: the watched directory's path. */
static bool append_batch(struct strbuf *out, const ProtobufCMessage *msg, void *owner)
{
    const WatchEvents *batch = (const WatchEvents *)msg;
    const char *root = owner;
    size_t n = strlen(root);
    for (size_t i = 0; i < batch->n_events; i++) {
        const Airlock__Guest__V1__WatchEvent *ev = batch->events[i];
        const char *type = event_type(ev->type);
        const char *path = (const char *)ev->path.data;
        size_t len = ev->path.len;
        if (!type)
            continue;
        if (len > n + 1 && strncmp(path, root, n) == 0 && path[n] == '/') {
            path += n + 1;
            len -= n + 1;
        }
        json_t *name = json_stringn(path, len);
        if (name) /* a name that is not UTF-8 has no place in envd's JSON */
            connect_envelope_json(out, envd_event(&watch_kind, "filesystem",
                                                  json_pack("{s:o,s:s}", "name", name, "type",
                                                            type)));
    }
    return false; /* a watch lasts until its client leaves */
}

static const struct envd_stream_kind watch_kind = {
    .desc = &airlock__guest__v1__watch_events__descriptor,
    .append = append_batch,
    .stopping = "the gateway is shutting down: the watch ended; watch again",
    .unfinished = "the watched directory was removed or moved away",
    .release = free,
};

enum MHD_Result envd_fs_watch_dir(struct gw_request *r)
{
    static const struct json_field fields[] = {
        { "path", JF_STRING }, { "recursive", JF_BOOL }, { "includeEntry", JF_BOOL },
        { "allowNetworkMounts", JF_BOOL },
    };
    struct envd_call c;
    const char *path;
    if (envd_call_begin(r, "watching a directory", fields, sizeof(fields) / sizeof(*fields),
                        &c) < 0 ||
        envd_string(c.msg, "path", true, &path, &c.e) < 0)
        return envd_call_end(r, &c, NULL);
    if (json_is_true(json_object_get(c.msg, "includeEntry"))) {
        airlock_error_set(&c.e, AIRLOCK_ERR_UNIMPLEMENTED,
                          "includeEntry (entry info in watch events) is not supported");
        return envd_call_end(r, &c, NULL);
    }
    char *root = strdup(path);
    struct rpc_stream *s =
        root ? gw_watch_open(c.ch, c.sb->id, path,
                             json_is_true(json_object_get(c.msg, "recursive")))
             : NULL;
    ProtobufCMessage *placed = NULL;
    /* The first message comes at once: the watch in place, or why not. */
    if (s && rpc_stream_recv(s, &airlock__guest__v1__watch_events__descriptor, &placed) == 1) {
        protobuf_c_message_free_unpacked(placed, NULL);
        envd_call_free(&c);
        return envd_stream_reply(r, s, &watch_kind, envd_event(&watch_kind, "start", json_object()),
                                 root);
    }
    if (s) {
        char *details = NULL;
        grpc_status_code st = rpc_stream_finish(s, &details);
        airlock_error_from_status(&c.e, st == GRPC_STATUS_OK ? GRPC_STATUS_UNAVAILABLE : st,
                                  details ? details : "the watch ended before it began");
        free(details);
    } else {
        airlock_error_set(&c.e, AIRLOCK_ERR_INTERNAL, "out of memory");
    }
    free(root);
    return envd_call_end(r, &c, NULL);
}
