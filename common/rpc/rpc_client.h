/* A small blocking gRPC client on the gRPC C core with protobuf-c messages.
 * One rpc_stream per call; unary calls are rpc_unary(). Thread-safe per
 * channel; a stream belongs to one thread at a time, except that one
 * thread may send (rpc_stream_send, rpc_stream_close_send) while another
 * receives (rpc_stream_recv) on a bidirectional stream: each waits on its
 * own tag. */
#ifndef AIRLOCK_RPC_CLIENT_H
#define AIRLOCK_RPC_CLIENT_H

#include <grpc/grpc.h>
#include <grpc/status.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

#include "tls_credentials.h"

struct rpc_channel;
struct rpc_stream;

/* How a client authenticates itself and its server. */
struct rpc_channel_auth {
    /* Sent as "authorization: Bearer <token>" on every call; NULL: none. */
    const char *bearer_token;
    /* Internal credentials (tls_credentials.h): mutual TLS; the server's
     * certificate must chain to the CA and name identity server
     * ("scheduler", "vmhost:node-a"). NULL: plaintext. After a reload new
     * calls use the new files; calls in flight go on. tls must outlive the
     * channel. */
    struct tls_credentials *tls;
    const char *server;
};

/* target: "unix:/abs/path" or "host:port"; auth may be NULL (plaintext, no
 * token). NULL when out of memory or auth->server is not an identity. */
struct rpc_channel *rpc_channel_open(const char *target, const struct rpc_channel_auth *auth);
void rpc_channel_close(struct rpc_channel *ch);

/* Connects now and waits up to timeout_ms for the channel to be ready: 0 when
 * it is, -1 when the server could not be reached in time. Lets a tool fail
 * fast before a call that has no deadline of its own. */
int rpc_channel_wait_ready(struct rpc_channel *ch, int timeout_ms);

/* Starts a call; timeout_ms <= 0 means no deadline. Waits for the server to
 * become reachable (wait-for-ready) within the deadline. NULL only when out
 * of memory. */
struct rpc_stream *rpc_stream_open(struct rpc_channel *ch, const char *method, int timeout_ms);
/* -1 when the call already failed (the status tells why). */
int rpc_stream_send(struct rpc_stream *s, const ProtobufCMessage *msg);
int rpc_stream_close_send(struct rpc_stream *s);
/* 1 with *out set (free with protobuf_c_message_free_unpacked), 0 at the end
 * of the response stream or on failure. */
int rpc_stream_recv(struct rpc_stream *s, const ProtobufCMessageDescriptor *desc,
                    ProtobufCMessage **out);
/* rpc_stream_recv waiting at most timeout_ms: -1 when nothing came in
 * that time (the receive stays pending: call again, or finish). */
int rpc_stream_recv_wait(struct rpc_stream *s, const ProtobufCMessageDescriptor *desc,
                         ProtobufCMessage **out, int timeout_ms);
/* Cancels the call from the client side (the server sees cancellation).
 * Unlike the other stream calls, safe from any thread. */
void rpc_stream_cancel(struct rpc_stream *s);
/* Half-closes if not done yet, reads and drops responses not yet received,
 * waits for the status and frees the stream (cancel first to abandon an
 * endless stream). *details (malloc'd, may be NULL) gets the status
 * message; details itself may be NULL. UNAVAILABLE because the connection
 * went during the call (the server died or restarted) says so, naming the
 * server (its identity, else the target), here and in rpc_unary. A response that does not parse ends
 * the call with INTERNAL "response is not a valid <Message>". */
grpc_status_code rpc_stream_finish(struct rpc_stream *s, char **details);

/* One request, one response, as a stream would do it (same statuses and
 * messages) but in a single batch. On a non-OK status *resp is NULL. */
grpc_status_code rpc_unary(struct rpc_channel *ch, const char *method, const ProtobufCMessage *req,
                           const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                           char **details, int timeout_ms);

const char *rpc_status_name(grpc_status_code code);

#endif
