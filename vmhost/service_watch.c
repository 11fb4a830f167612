/* WatchDir: a directory watch in the guest (guest.proto WatchRequest)
 * relayed batch by batch until the caller cancels; closing the guest
 * stream cancels it there, which removes the inotify watch. The guest's
 * batches are paced by the stream's window, returned as this handler
 * takes them, so a slow caller makes the guest coalesce and overflow
 * rather than queue here. */
#include "clock.h"
#include "vmhost_service.h"

/* How often a quiet relay looks at its caller. */
#define WATCH_POLL_MS 250
/* A quiet watch sends an empty batch this often: a relay (the gateway's
 * SSE) only notices its client left when it writes. */
#define WATCH_KEEPALIVE_MS 5000

static void watch_relay(struct rpc_call *call, struct sandbox *sb, struct guest_stream *s)
{
    bool started = false; /* the guest's first, empty batch came */
    int64_t quiet_since = clock_monotonic_ms();
    for (;;) {
        if (rpc_call_cancelled(call)) {
            rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client cancelled");
            return;
        }
        GuestFrame *f;
        enum guest_recv_status st = guest_stream_recv(s, WATCH_POLL_MS, &f);
        if (st == GUEST_RECV_TIMEOUT) {
            if (!started || clock_monotonic_ms() - quiet_since < WATCH_KEEPALIVE_MS)
                continue;
            Airlock__Guest__V1__WatchEvents keepalive = AIRLOCK__GUEST__V1__WATCH_EVENTS__INIT;
            if (rpc_call_send(call, &keepalive.base) < 0) {
                rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client went away");
                return;
            }
            quiet_since = clock_monotonic_ms();
            continue;
        }
        if (st != GUEST_RECV_OK) {
            service_finish_guest_failure(call, sb, st);
            return;
        }
        if (f->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WATCH_EVENTS) {
            service_finish_from_result(call, f); /* an error, or the directory is gone */
            frame_free(f);
            return;
        }
        int sent = rpc_call_send(call, &f->watch_events->base);
        frame_free(f);
        if (sent < 0) {
            rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client went away");
            return;
        }
        started = true;
        quiet_since = clock_monotonic_ms();
    }
}

void service_watch_dir(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__WatchDirRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__watch_dir_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    struct guest_channel *ch = NULL;
    struct guest_stream *s = NULL;
    if (!req->request) {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "request: required");
        goto out;
    }
    if (!service_check_path(call, "path", req->request->path))
        goto out;
    ch = service_running_sandbox(call, vh, req->sandbox_id, &sb);
    if (!ch)
        goto out;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WATCH;
    f.watch = req->request;
    s = service_open_stream(call, sb, ch, &f);
    if (s)
        watch_relay(call, sb, s);
out:
    guest_stream_close(s);
    service_done(sb, ch);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
