/* A watch over a vmhost or scheduler stream that a public gRPC call relays
 * (Exec, AttachProcess, ReadFile, BuildTemplate): the handler blocks on the
 * stream, which may stay quiet for as long as the command does, so a small
 * thread notices when the public call is cancelled (client gone, deadline,
 * gateway stopping) and cancels the upstream stream — which kills an Exec's process
 * group and wakes the handler. */
#ifndef AIRLOCK_GATEWAY_GRPC_RELAY_H
#define AIRLOCK_GATEWAY_GRPC_RELAY_H

#include <pthread.h>
#include <stdbool.h>

#include "grpc_call.h"
#include "rpc_client.h"

struct grpc_relay_watch {
    struct rpc_call *call;
    struct rpc_stream *stream;
    pthread_mutex_t mu;
    pthread_cond_t changed;
    bool done;
    bool running;            /* the thread started */
    pthread_t thread;
};

/* Starts watching; without a thread (none could be made) the relay still
 * works, it just notices a cancel only when it next sends. */
void grpc_relay_watch_start(struct grpc_relay_watch *w, struct rpc_call *call,
                            struct rpc_stream *stream);
/* Stops the watch (before the stream is finished and freed). */
void grpc_relay_watch_stop(struct grpc_relay_watch *w);

/* Sends what the client sees of one vmhost message: 1 after the last one,
 * 0 to go on, -1 when the client went away. */
typedef int (*grpc_relay_forward)(struct grpc_request *r, const ProtobufCMessage *msg);

/* Relays vmhost stream s (a request sent; finished and freed here) to r
 * under a watch, message by message (desc), and ends r with the vmhost
 * status — CANCELLED when the client left, or, when `unfinished` is not
 * NULL and the stream ended without a last message, UNAVAILABLE with that
 * message. */
void grpc_relay_stream(struct grpc_request *r, struct rpc_stream *s,
                       const ProtobufCMessageDescriptor *desc, grpc_relay_forward forward,
                       const char *unfinished);

#endif
