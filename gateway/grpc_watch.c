/* Sandboxes.WatchDir: the sandbox's vmhost WatchDir relayed as FileEvents
 * (REST's files/watch events, field for field): "start" once the watch is
 * in place, then the changes; the node's keepalives are not passed on
 * (the relay's watch notices a client that left by itself). Cancelling
 * the call removes the watch in the guest. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "grpc_call.h"
#include "grpc_relay.h"
#include "reply.h"
#include "sandbox_access.h"
#include "vmhost_names.h"
#include "watch_access.h"

typedef Airlock__Guest__V1__WatchEvents WatchEvents;

static int send_event(struct grpc_request *r, const char *type, ProtobufCBinaryData path,
                      bool is_dir, int64_t unix_ms)
{
    char when[40];
    reply_rfc3339(unix_ms, when, sizeof(when));
    Airlock__V1__FileEvent ev = AIRLOCK__V1__FILE_EVENT__INIT;
    ev.type = (char *)type;
    ev.path = path;
    ev.is_dir = is_dir;
    ev.time = when;
    return grpc_send(r, &ev.base) < 0 ? -1 : 0;
}

static int forward_events(struct grpc_request *r, const ProtobufCMessage *msg)
{
    const WatchEvents *batch = (const WatchEvents *)msg;
    for (size_t i = 0; i < batch->n_events; i++) {
        const Airlock__Guest__V1__WatchEvent *e = batch->events[i];
        if (send_event(r, gw_watch_event_name(e->type), e->path, e->is_dir, e->unix_ms) < 0)
            return -1;
    }
    return 0;
}

void grpc_watch_dir(struct grpc_request *r)
{
    const Airlock__V1__PathRequest *in = (const void *)r->msg;
    struct airlock_error e;
    if (gw_path_check(in->path, "path", &e) < 0) {
        grpc_fail_error(r, &e);
        return;
    }
    Airlock__Scheduler__V1__Sandbox *sb;
    struct rpc_channel *ch;
    if (!grpc_open_sandbox(r, in->id, "watching files", &sb, &ch))
        return;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    struct rpc_stream *s = gw_watch_open(ch, in->id, in->path, in->recursive);
    if (!s) {
        grpc_fail(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    /* The first message comes at once: the watch in place, or why not. */
    WatchEvents *first = NULL;
    if (rpc_stream_recv(s, &airlock__guest__v1__watch_events__descriptor,
                        (ProtobufCMessage **)&first) != 1) {
        char *details = NULL;
        grpc_status_code st = rpc_stream_finish(s, &details);
        if (st == GRPC_STATUS_OK)
            st = GRPC_STATUS_INTERNAL;
        grpc_fail(r, st, "%s", details && *details ? details : rpc_status_name(st));
        free(details);
        return;
    }
    ProtobufCBinaryData root = { strlen(in->path), (uint8_t *)in->path };
    int state = send_event(r, "start", root, true, clock_realtime_ms());
    if (state == 0)
        state = forward_events(r, &first->base);
    protobuf_c_message_free_unpacked(&first->base, NULL);
    if (state < 0) {
        rpc_stream_cancel(s);
        rpc_stream_finish(s, NULL);
        grpc_fail(r, GRPC_STATUS_CANCELLED, "the client went away");
        return;
    }
    grpc_relay_stream(r, s, &airlock__guest__v1__watch_events__descriptor, forward_events, NULL);
}
