/* A small gRPC server on the gRPC C core with protobuf-c messages.
 *
 * Each call is handled on a thread of its own (while it runs) with its own
 * completion queue, so a handler is plain blocking code: receive the
 * request, send zero or more messages, finish with a status. Handlers for
 * unary, server-streaming and client-streaming methods all use the same
 * calls.
 *
 * Threads: a pool of workers waits for calls; each call runs its handler on
 * the worker that took it, and the pool grows while all are busy (a long
 * stream never holds up other calls). On one call, a recv may run
 * concurrently with a send or finish on another thread, but never two recvs
 * or two sends at once. */
#ifndef AIRLOCK_RPC_SERVER_H
#define AIRLOCK_RPC_SERVER_H

#include <grpc/grpc.h>
#include <grpc/status.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

#include "metrics_registry.h"
#include "peer_identity.h"
#include "tls_credentials.h"

struct rpc_server;
struct rpc_call;

typedef void (*rpc_handler_fn)(struct rpc_call *call, void *ctx);

/* With mutual TLS, who may call a method: peer_role bits, and
 * RPC_CALLER_SAME_NODE to let in a vmhost or egress of the server's own
 * node only. 0 lets no one in. */
#define RPC_CALLER_SAME_NODE (1u << 16)

struct rpc_method {
    const char *path; /* "/airlock.vmhost.v1.VmHost/CreateSandbox" */
    rpc_handler_fn handler;
    unsigned callers;
};

/* How a server authenticates its callers. */
struct rpc_security {
    /* With a token (not NULL or ""), a call whose "authorization" metadata
     * is not exactly "Bearer <token>" is finished with UNAUTHENTICATED
     * before any handler runs (internal_token.h; beside mutual TLS it is a
     * second factor). */
    const char *bearer_token;
    /* NULL: plaintext. Internal credentials (tls_credentials_configure):
     * mutual TLS, each call's certificate checked against the method's
     * callers (rpc_caller.h) before its handler runs. Public ones: TLS,
     * no client certificate. The credentials must outlive the server. */
    struct tls_credentials *tls;
    /* NULL: calls not counted. Else rpc_calls_metric's counter, which
     * must outlive the server. */
    struct metric *calls;
};

/* The counter of a server's finished calls by method (its last path
 * element; "unknown" for a method it does not serve) and status name: "<prefix>_grpc_requests_total", as
 * "airlock_scheduler". NULL when out of memory. */
struct metric *rpc_calls_metric(struct metrics_registry *reg, const char *prefix);

/* What the last rpc_call_recv() saw. */
enum rpc_recv_status {
    RPC_RECV_MESSAGE,   /* a message was returned */
    RPC_RECV_END,       /* the client half-closed: no more messages */
    RPC_RECV_MALFORMED, /* bytes arrived that do not parse as the message */
    RPC_RECV_FAILED,    /* the call is gone (cancelled, deadline, server stop) */
};

/* Listens on addr ("unix:/abs/path" or "127.0.0.1:port"; a stale unix socket
 * is unlinked first) and serves methods until rpc_server_stop(). Unknown
 * methods get UNIMPLEMENTED. methods[] must outlive the server; sec may be
 * NULL (plaintext, no token) and is copied. Returns NULL with a message in
 * err. */
struct rpc_server *rpc_server_start(const char *addr, const struct rpc_method *methods,
                                    size_t n_methods, void *ctx, const struct rpc_security *sec,
                                    char *err, size_t errlen);

/* Stops accepting, cancels calls in flight, waits for handler threads to
 * return, frees everything. */
void rpc_server_stop(struct rpc_server *srv);

/* Next request message, unpacked (free with protobuf_c_message_free_unpacked).
 * NULL when the client half-closed (end of a client stream), sent bytes that
 * are not a desc message, or the call failed; rpc_call_recv_status() tells
 * which. */
ProtobufCMessage *rpc_call_recv(struct rpc_call *call, const ProtobufCMessageDescriptor *desc);
enum rpc_recv_status rpc_call_recv_status(const struct rpc_call *call);

/* The request of a unary or server-streaming method. When there is none,
 * finishes the call itself (INVALID_ARGUMENT "request is not a valid
 * <Message>", INVALID_ARGUMENT "missing request message", or CANCELLED) and
 * returns NULL; the handler then just returns. */
ProtobufCMessage *rpc_call_recv_request(struct rpc_call *call,
                                        const ProtobufCMessageDescriptor *desc);

/* Sends one response message (blocking until gRPC took it). -1 when the
 * client went away. */
int rpc_call_send(struct rpc_call *call, const ProtobufCMessage *msg);

/* Ends the call with a status; once per call (later calls are logged and
 * ignored). The handler returns after this. A handler that returns without
 * finishing gets INTERNAL "handler did not finish". */
void rpc_call_finish(struct rpc_call *call, grpc_status_code code, const char *message);
/* One trailing metadata entry (key lowercase, e.g. "retry-after"). */
struct rpc_trailer {
    const char *key, *value;
};
/* The same with trailer sent beside the status. */
void rpc_call_finish_trailer(struct rpc_call *call, grpc_status_code code, const char *message,
                             const struct rpc_trailer *trailer);
/* A unary answer: msg and status OK in one batch, which is what
 * rpc_call_send + rpc_call_finish(OK) do in two. -1 when the client went
 * away (or the call was already finished). */
int rpc_call_reply(struct rpc_call *call, const ProtobufCMessage *msg);
/* printf-style message. */
void rpc_call_finishf(struct rpc_call *call, grpc_status_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* True once the client cancelled, its deadline passed, the connection broke
 * or the server is stopping. Cheap and callable from any thread; handlers of
 * long streams poll it. */
bool rpc_call_cancelled(struct rpc_call *call);

/* Value of a request metadata key (e.g. "authorization"), or NULL. The
 * string lives as long as the call. */
const char *rpc_call_metadata(struct rpc_call *call, const char *key);

const char *rpc_call_method(const struct rpc_call *call);

/* The caller's verified identity on a server with mutual TLS, else NULL. */
const struct peer_identity *rpc_call_peer(const struct rpc_call *call);

#endif
