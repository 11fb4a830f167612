#include "grpc_relay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

/* How often the watch looks at the call: the delay between a client
 * leaving and its command being killed. */
#define WATCH_POLL_MS 100

static void *watch_main(void *arg)
{
    struct grpc_relay_watch *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (rpc_call_cancelled(w->call)) {
            rpc_stream_cancel(w->stream);
            break;
        }
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += WATCH_POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->changed, &w->mu, &until);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

void grpc_relay_watch_start(struct grpc_relay_watch *w, struct rpc_call *call,
                            struct rpc_stream *stream)
{
    memset(w, 0, sizeof(*w));
    w->call = call;
    w->stream = stream;
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w->changed, &attr);
    pthread_condattr_destroy(&attr);
    int err = pthread_create(&w->thread, NULL, watch_main, w);
    w->running = err == 0;
    if (err)
        log_warn("grpc relay without a cancel watch", "err=\"%s\"", strerror(err));
}

void grpc_relay_watch_stop(struct grpc_relay_watch *w)
{
    if (w->running) {
        pthread_mutex_lock(&w->mu);
        w->done = true;
        pthread_cond_signal(&w->changed);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->thread, NULL);
    }
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->mu);
}

void grpc_relay_stream(struct grpc_request *r, struct rpc_stream *s,
                       const ProtobufCMessageDescriptor *desc, grpc_relay_forward forward,
                       const char *unfinished)
{
    struct grpc_relay_watch watch;
    grpc_relay_watch_start(&watch, r->call, s);
    int state = 0; /* forward's last answer */
    ProtobufCMessage *msg = NULL;
    while (state == 0 && rpc_stream_recv(s, desc, &msg) == 1) {
        state = forward(r, msg);
        protobuf_c_message_free_unpacked(msg, NULL);
    }
    grpc_relay_watch_stop(&watch);
    if (state < 0)
        rpc_stream_cancel(s);
    char *details = NULL;
    grpc_status_code st = rpc_stream_finish(s, &details);
    if (state < 0 || rpc_call_cancelled(r->call))
        grpc_fail(r, GRPC_STATUS_CANCELLED, "the client went away");
    else if (st != GRPC_STATUS_OK)
        grpc_fail(r, st, "%s", details && *details ? details : rpc_status_name(st));
    else if (state == 0 && unfinished)
        grpc_fail(r, GRPC_STATUS_UNAVAILABLE, "%s", unfinished);
    else
        grpc_reply(r, NULL);
    free(details);
}
