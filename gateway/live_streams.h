/* The SSE responses in flight (exec output, process re-attach, directory
 * watches, /v1/events), so a stopping gateway can end each with a last "error"
 * event before the HTTP server closes its connections: gRPC relays blocked
 * on their backend are cancelled, event streams notice gw->stopping, and
 * the stop waits (bounded) until every response has been sent. Without
 * this, MHD_stop_daemon waits for a relay until its command ends and
 * clients see a cut connection. */
#ifndef AIRLOCK_GATEWAY_LIVE_STREAMS_H
#define AIRLOCK_GATEWAY_LIVE_STREAMS_H

#include <pthread.h>
#include <stdbool.h>

#include "rpc_client.h"

struct live_stream {
    struct rpc_stream *upstream;   /* NULL: none, or already finished */
    struct live_stream *next;
};

struct live_streams {
    pthread_mutex_t lock;
    pthread_cond_t changed;        /* a stream was removed */
    struct live_stream *head;
    unsigned count;
    bool stopping;
};

void live_streams_init(struct live_streams *ls);
void live_streams_destroy(struct live_streams *ls);

/* Registers a response (with its upstream, or NULL); false once the
 * gateway is stopping (nothing is registered then). */
bool live_streams_add(struct live_streams *ls, struct live_stream *e, struct rpc_stream *upstream);
/* Before the upstream is finished (freed): no cancel reaches it after. */
void live_streams_detach(struct live_streams *ls, struct live_stream *e);
/* When the response is done (its free callback). */
void live_streams_remove(struct live_streams *ls, struct live_stream *e);
bool live_streams_stopping(struct live_streams *ls);

/* Cancels every upstream and waits up to timeout_ms for every response to
 * end. */
void live_streams_stop(struct live_streams *ls, int timeout_ms);

#endif
