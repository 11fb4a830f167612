/* Server side of airlock_rpc: worker threads wait for calls on the server's
 * "next" queue and each runs the call it took on that call's own pluck
 * queue, so handlers are plain blocking code. The pool grows whenever no
 * worker is left waiting (a long stream never starves other calls) and
 * shrinks back to a few idle workers. See docs/rpc.md. */
#include "rpc_server.h"

#include "log.h"
#include "rpc_caller.h"
#include "rpc_client.h" /* rpc_status_name */
#include "rpc_wire.h"

#include <errno.h>
#include <grpc/grpc_security.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Tags on a call's own queue: one per kind of op that may be in flight. */
#define TAG_RECV ((void *)1)
#define TAG_SEND ((void *)2)
#define TAG_CLOSE ((void *)3)

struct rpc_metadata_entry {
    char *key;
    char *value;
};

struct rpc_call {
    struct rpc_server *srv;
    grpc_call *call;           /* filled in by grpc_server_request_call */
    grpc_completion_queue *cq; /* pluck queue for this call's ops only */
    grpc_call_details details;
    grpc_metadata_array request_metadata;

    char *method;
    /* The served method's name (its path's last element) as the calls
     * metric counts it; NULL: not one of the server's (a caller's string
     * must not become a label). */
    const char *method_label;
    struct rpc_metadata_entry *metadata;
    size_t n_metadata;

    struct peer_identity peer;
    bool has_peer;

    bool sent_initial_metadata;
    bool finished;
    enum rpc_recv_status recv_status;

    /* RECV_CLOSE_ON_SERVER runs from the start; whoever plucks its tag first
     * (rpc_call_cancelled or the worker's end) records the outcome. */
    pthread_mutex_t close_mu;
    atomic_bool closed;
    atomic_bool cancelled;
    int close_cancelled; /* written by gRPC when TAG_CLOSE completes */
};

/* Workers wait for calls, and the one that takes a call runs it itself
 * (no thread start, no hand-over on the way in). Another is started only
 * when none is left waiting; one that finds this many others waiting ends. */
#define WORKERS_AT_START 2
#define WORKERS_MAX_IDLE 4

struct rpc_worker {
    struct rpc_server *srv;
    pthread_t thread;
    struct rpc_worker *next_done; /* on srv->done once it returned */
};

struct rpc_server {
    grpc_server *server;
    grpc_completion_queue *cq; /* new-call notifications and the shutdown tag */
    const struct rpc_method *methods;
    size_t n_methods;
    void *ctx;
    char *authorization; /* "Bearer <token>" every call must send; NULL: no check */
    struct tls_credentials *tls; /* internal: mutual TLS, callers checked */
    struct metric *calls;        /* NULL: not counted */
    char *unix_path; /* removed again at stop */
    char shutdown_tag;

    pthread_mutex_t mu;
    pthread_cond_t workers_changed;
    size_t live_workers;
    size_t idle_workers;      /* waiting on cq for a call */
    bool shutting_down;       /* the shutdown tag came: request no more calls */
    struct rpc_worker *done;  /* workers that returned and await pthread_join */
};

/* ---- per-call queue -------------------------------------------------- */

static bool call_run_batch(struct rpc_call *c, const grpc_op *ops, size_t n, void *tag)
{
    if (grpc_call_start_batch(c->call, ops, n, tag, NULL) != GRPC_CALL_OK)
        return false;
    grpc_event ev = grpc_completion_queue_pluck(c->cq, tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    return ev.type == GRPC_OP_COMPLETE && ev.success;
}

/* Records the close outcome once TAG_CLOSE has been plucked. */
static void call_note_closed(struct rpc_call *c)
{
    atomic_store(&c->cancelled, c->close_cancelled != 0);
    atomic_store(&c->closed, true);
}

static void call_poll_close(struct rpc_call *c, gpr_timespec deadline)
{
    pthread_mutex_lock(&c->close_mu);
    if (!atomic_load(&c->closed)) {
        grpc_event ev = grpc_completion_queue_pluck(c->cq, TAG_CLOSE, deadline, NULL);
        if (ev.type == GRPC_OP_COMPLETE)
            call_note_closed(c);
    }
    pthread_mutex_unlock(&c->close_mu);
}

static struct rpc_call *call_new(struct rpc_server *srv)
{
    struct rpc_call *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->srv = srv;
    c->cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->request_metadata);
    pthread_mutex_init(&c->close_mu, NULL);
    return c;
}

/* Frees the call and all it holds. */
static void call_release(struct rpc_call *c)
{
    if (c->call)
        grpc_call_unref(c->call);
    c->call = NULL;
    grpc_completion_queue_shutdown(c->cq);
    grpc_completion_queue_pluck(c->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_completion_queue_destroy(c->cq);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->request_metadata);
    for (size_t i = 0; i < c->n_metadata; i++) {
        free(c->metadata[i].key);
        free(c->metadata[i].value);
    }
    free(c->metadata);
    free(c->method);
    pthread_mutex_destroy(&c->close_mu);
    free(c);
}

static int call_copy_request_info(struct rpc_call *c)
{
    c->method = rpc_wire_slice_strdup(c->details.method);
    c->metadata = calloc(c->request_metadata.count + 1, sizeof(*c->metadata));
    if (!c->method || !c->metadata)
        return -1;
    for (size_t i = 0; i < c->request_metadata.count; i++) {
        const grpc_metadata *md = &c->request_metadata.metadata[i];
        struct rpc_metadata_entry *e = &c->metadata[c->n_metadata++];
        e->key = rpc_wire_slice_strdup(md->key);
        e->value = rpc_wire_slice_strdup(md->value);
        if (!e->key || !e->value)
            return -1;
    }
    return 0;
}

/* ---- handler API ----------------------------------------------------- */

ProtobufCMessage *rpc_call_recv(struct rpc_call *c, const ProtobufCMessageDescriptor *desc)
{
    grpc_byte_buffer *buf = NULL;
    grpc_op op = {.op = GRPC_OP_RECV_MESSAGE, .data.recv_message.recv_message = &buf};
    if (!call_run_batch(c, &op, 1, TAG_RECV)) {
        c->recv_status = RPC_RECV_FAILED;
        if (buf)
            grpc_byte_buffer_destroy(buf);
        return NULL;
    }
    if (!buf) {
        c->recv_status = RPC_RECV_END;
        return NULL;
    }
    ProtobufCMessage *msg = rpc_wire_unpack(buf, desc);
    grpc_byte_buffer_destroy(buf);
    c->recv_status = msg ? RPC_RECV_MESSAGE : RPC_RECV_MALFORMED;
    return msg;
}

enum rpc_recv_status rpc_call_recv_status(const struct rpc_call *c)
{
    return c->recv_status;
}

ProtobufCMessage *rpc_call_recv_request(struct rpc_call *c, const ProtobufCMessageDescriptor *desc)
{
    ProtobufCMessage *msg = rpc_call_recv(c, desc);
    switch (c->recv_status) {
    case RPC_RECV_MESSAGE:
        return msg;
    case RPC_RECV_MALFORMED:
        rpc_call_finishf(c, GRPC_STATUS_INVALID_ARGUMENT, "request is not a valid %s",
                         desc->short_name);
        break;
    case RPC_RECV_END:
        rpc_call_finish(c, GRPC_STATUS_INVALID_ARGUMENT, "missing request message");
        break;
    case RPC_RECV_FAILED:
        rpc_call_finish(c, GRPC_STATUS_CANCELLED, "call ended before the request arrived");
        break;
    }
    return NULL;
}

/* Adds SEND_INITIAL_METADATA in front of the first send, so an error status
 * can go out as a trailers-only response. Returns the number of ops used. */
static size_t call_initial_metadata_op(struct rpc_call *c, grpc_op *op)
{
    if (c->sent_initial_metadata)
        return 0;
    c->sent_initial_metadata = true;
    *op = (grpc_op){.op = GRPC_OP_SEND_INITIAL_METADATA};
    return 1;
}

int rpc_call_send(struct rpc_call *c, const ProtobufCMessage *msg)
{
    grpc_op ops[2];
    size_t n = call_initial_metadata_op(c, &ops[0]);
    grpc_byte_buffer *buf = rpc_wire_pack(msg);
    ops[n++] = (grpc_op){.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = buf};
    bool ok = call_run_batch(c, ops, n, TAG_SEND);
    grpc_byte_buffer_destroy(buf);
    return ok ? 0 : -1;
}

/* The status, after msg when there is one, in one batch, with trailer
 * (NULL: none) as trailing metadata. */
static int call_end(struct rpc_call *c, const ProtobufCMessage *msg, grpc_status_code code,
                    const char *message, const struct rpc_trailer *trailer)
{
    if (c->finished) {
        log_warn("rpc call finished twice", "method=%s", c->method);
        return -1;
    }
    c->finished = true;
    metric_add(c->srv->calls,
               METRIC_LABELS(c->method_label ? c->method_label : "unknown", rpc_status_name(code)),
               1);
    grpc_slice details = grpc_slice_from_copied_string(message ? message : "");
    grpc_byte_buffer *buf = msg ? rpc_wire_pack(msg) : NULL;
    grpc_op ops[3];
    size_t n = call_initial_metadata_op(c, &ops[0]);
    if (buf)
        ops[n++] = (grpc_op){.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = buf};
    grpc_metadata md = { 0 };
    if (trailer) {
        md.key = grpc_slice_from_copied_string(trailer->key);
        md.value = grpc_slice_from_copied_string(trailer->value);
    }
    ops[n++] = (grpc_op){.op = GRPC_OP_SEND_STATUS_FROM_SERVER,
                         .data.send_status_from_server = {
                             .trailing_metadata_count = trailer ? 1 : 0,
                             .trailing_metadata = trailer ? &md : NULL,
                             .status = code,
                             .status_details = &details}};
    bool ok = call_run_batch(c, ops, n, TAG_SEND);
    if (buf)
        grpc_byte_buffer_destroy(buf);
    grpc_slice_unref(details);
    if (trailer) {
        grpc_slice_unref(md.key);
        grpc_slice_unref(md.value);
    }
    return ok ? 0 : -1;
}

void rpc_call_finish(struct rpc_call *c, grpc_status_code code, const char *message)
{
    /* Fails only when the client is gone, which the handler cannot act on. */
    call_end(c, NULL, code, message, NULL);
}

void rpc_call_finish_trailer(struct rpc_call *c, grpc_status_code code, const char *message,
                             const struct rpc_trailer *trailer)
{
    call_end(c, NULL, code, message, trailer);
}

int rpc_call_reply(struct rpc_call *c, const ProtobufCMessage *msg)
{
    return call_end(c, msg, GRPC_STATUS_OK, NULL, NULL);
}

void rpc_call_finishf(struct rpc_call *c, grpc_status_code code, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    rpc_call_finish(c, code, message);
}

bool rpc_call_cancelled(struct rpc_call *c)
{
    if (!atomic_load(&c->closed))
        call_poll_close(c, gpr_inf_past(GPR_CLOCK_REALTIME));
    return atomic_load(&c->cancelled);
}

const char *rpc_call_metadata(struct rpc_call *c, const char *key)
{
    for (size_t i = 0; i < c->n_metadata; i++)
        if (strcasecmp(c->metadata[i].key, key) == 0)
            return c->metadata[i].value;
    return NULL;
}

const char *rpc_call_method(const struct rpc_call *c)
{
    return c->method;
}

const struct peer_identity *rpc_call_peer(const struct rpc_call *c)
{
    return c->has_peer ? &c->peer : NULL;
}

/* ---- workers --------------------------------------------------------- */

/* Compares in time that depends only on the lengths, so a caller cannot
 * find the token byte by byte from how long a refusal takes. */
static bool secret_equal(const char *given, const char *expected)
{
    size_t glen = strlen(given), elen = strlen(expected);
    unsigned char diff = glen != elen;
    for (size_t i = 0; i < elen; i++)
        diff |= (unsigned char)(given[i < glen ? i : 0] ^ expected[i]);
    return diff == 0;
}

/* Finishes the call with UNAUTHENTICATED unless it carries the server's
 * token; the messages never repeat what was sent. */
static bool call_authorized(struct rpc_call *c)
{
    if (!c->srv->authorization)
        return true;
    const char *given = rpc_call_metadata(c, "authorization");
    if (!given) {
        rpc_call_finish(c, GRPC_STATUS_UNAUTHENTICATED, "internal token required");
    } else if (!secret_equal(given, c->srv->authorization)) {
        rpc_call_finish(c, GRPC_STATUS_UNAUTHENTICATED, "wrong internal token");
    } else {
        return true;
    }
    log_warn("rpc call refused", "method=%s reason=\"%s\"", c->method,
             given ? "wrong internal token" : "no internal token");
    return false;
}

static const struct rpc_method *server_find_method(const struct rpc_server *srv,
                                                   const char *method)
{
    for (size_t i = 0; i < srv->n_methods; i++)
        if (strcmp(srv->methods[i].path, method) == 0)
            return &srv->methods[i];
    return NULL;
}

/* With mutual TLS: finishes the call unless its certificate names a
 * caller the method lets in (any valid one, for an unknown method: it
 * gets UNIMPLEMENTED then). */
static bool call_caller_allowed(struct rpc_call *c, const struct rpc_method *m)
{
    if (!c->srv->tls || !tls_credentials_internal(c->srv->tls))
        return true;
    grpc_status_code code;
    char msg[512];
    unsigned callers = m ? m->callers : ~RPC_CALLER_SAME_NODE;
    if (rpc_caller_check(c->call, c->method, callers, c->srv->tls, &c->peer,
                         &code, msg, sizeof(msg)) < 0) {
        rpc_call_finish(c, code, msg);
        return false;
    }
    c->has_peer = true;
    return true;
}

/* Runs one accepted call to its end and frees it. */
static void call_serve(struct rpc_call *c)
{
    struct rpc_server *srv = c->srv;
    grpc_op close_op = {.op = GRPC_OP_RECV_CLOSE_ON_SERVER,
                        .data.recv_close_on_server.cancelled = &c->close_cancelled};
    if (grpc_call_start_batch(c->call, &close_op, 1, TAG_CLOSE, NULL) != GRPC_CALL_OK)
        call_note_closed(c); /* never started: nothing to pluck later */

    if (call_copy_request_info(c) < 0) {
        rpc_call_finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        const struct rpc_method *m = server_find_method(srv, c->method);
        if (m)
            c->method_label = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
        if (!call_caller_allowed(c, m) || !call_authorized(c)) {
            /* finished with the reason */
        } else if (!m) {
            rpc_call_finishf(c, GRPC_STATUS_UNIMPLEMENTED, "unknown method %s", c->method);
        } else {
            m->handler(c, srv->ctx);
            if (!c->finished)
                rpc_call_finish(c, GRPC_STATUS_INTERNAL, "handler did not finish");
        }
    }
    /* The call may be unreffed only once its close op is out of the queue. */
    call_poll_close(c, gpr_inf_future(GPR_CLOCK_REALTIME));
    call_release(c);
}

/* Asks gRPC for the next incoming call. Without one pending the server
 * accepts nothing more, so a failure is logged loudly. */
static void server_request_call(struct rpc_server *srv)
{
    struct rpc_call *c = call_new(srv);
    if (!c) {
        log_error("rpc server cannot request calls", "err=\"out of memory\"");
        return;
    }
    grpc_call_error err = grpc_server_request_call(srv->server, &c->call, &c->details,
                                                   &c->request_metadata, c->cq, srv->cq, c);
    if (err == GRPC_CALL_OK)
        return;
    log_error("rpc server cannot request calls", "grpc_call_error=%d", (int)err);
    call_release(c);
}

/* Joins workers that have returned (called without srv->mu). */
static void server_reap_workers(struct rpc_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    struct rpc_worker *done = srv->done;
    srv->done = NULL;
    pthread_mutex_unlock(&srv->mu);
    while (done) {
        struct rpc_worker *next = done->next_done;
        pthread_join(done->thread, NULL);
        free(done);
        done = next;
    }
}

static void *worker_main(void *arg);

/* Starts a worker that waits for calls; srv->mu is held. false when no
 * thread could be made (the calls wait for a busy worker instead). */
static bool server_add_worker_locked(struct rpc_server *srv)
{
    struct rpc_worker *w = calloc(1, sizeof(*w));
    if (w)
        w->srv = srv;
    int err = w ? pthread_create(&w->thread, NULL, worker_main, w) : ENOMEM;
    if (err != 0) {
        free(w);
        log_error("rpc worker thread failed", "err=\"%s\"", strerror(err));
        return false;
    }
    /* Counted idle from here, so a burst of calls does not start one
     * thread per call before the first of them got to wait. */
    srv->live_workers++;
    srv->idle_workers++;
    return true;
}

/* One event from the server queue, taken by a worker: a new call, a call
 * request failed by the shutdown, or the shutdown itself. Returns the call
 * to serve, or NULL. */
static struct rpc_call *server_take_event(struct rpc_server *srv, grpc_event ev)
{
    if (ev.tag == &srv->shutdown_tag) {
        pthread_mutex_lock(&srv->mu);
        srv->shutting_down = true;
        pthread_mutex_unlock(&srv->mu);
        /* Nothing is requested on the queue past this point; every worker
         * waiting on it then sees GRPC_QUEUE_SHUTDOWN. */
        grpc_completion_queue_shutdown(srv->cq);
        return NULL;
    }
    struct rpc_call *c = ev.tag;
    if (!ev.success) { /* the server is shutting down */
        call_release(c);
        return NULL;
    }
    pthread_mutex_lock(&srv->mu);
    bool accepting = !srv->shutting_down;
    pthread_mutex_unlock(&srv->mu);
    if (accepting)
        server_request_call(srv);
    return c;
}

/* A worker: waits on the server queue, serves the call it took, and goes
 * back to waiting unless enough others already wait. Ends at the queue's
 * shutdown. */
static void *worker_main(void *arg)
{
    struct rpc_worker *self = arg;
    struct rpc_server *srv = self->srv;
    for (;;) {
        grpc_event ev =
            grpc_completion_queue_next(srv->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        pthread_mutex_lock(&srv->mu);
        srv->idle_workers--;
        pthread_mutex_unlock(&srv->mu);
        struct rpc_call *c = server_take_event(srv, ev);
        if (c) {
            pthread_mutex_lock(&srv->mu);
            if (srv->idle_workers == 0 && !srv->shutting_down)
                server_add_worker_locked(srv);
            pthread_mutex_unlock(&srv->mu);
            call_serve(c);
            server_reap_workers(srv);
        }
        pthread_mutex_lock(&srv->mu);
        /* Enough others wait: this one ends (they drain the queue at stop). */
        bool surplus = srv->idle_workers >= WORKERS_MAX_IDLE;
        if (!surplus)
            srv->idle_workers++;
        pthread_mutex_unlock(&srv->mu);
        if (surplus)
            goto out;
    }
    pthread_mutex_lock(&srv->mu);
    srv->idle_workers--;
    pthread_mutex_unlock(&srv->mu);
out:
    pthread_mutex_lock(&srv->mu);
    self->next_done = srv->done;
    srv->done = self;
    srv->live_workers--;
    pthread_cond_broadcast(&srv->workers_changed);
    pthread_mutex_unlock(&srv->mu);
    return NULL;
}

/* Runs the queue to its shutdown on the calling thread, for a server whose
 * workers could not start. */
static void server_drain(struct rpc_server *srv)
{
    grpc_event ev;
    while ((ev = grpc_completion_queue_next(srv->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL))
               .type != GRPC_QUEUE_SHUTDOWN) {
        struct rpc_call *c = server_take_event(srv, ev);
        if (c) /* cannot happen after shutdown_and_notify; never leak one */
            call_release(c);
    }
}

/* ---- start / stop ---------------------------------------------------- */

/* Whether a process accepts connections on the socket at path (a stale
 * one from a run that died refuses them). */
static bool unix_socket_in_use(const char *path)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(a.sun_path))
        return false;
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return false;
    /* EAGAIN: its backlog is full, so it is alive too. */
    bool in_use = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 || errno == EAGAIN;
    close(fd);
    return in_use;
}

/* Removes a leftover socket file from a previous run (only a socket, and
 * only one nobody serves: a second service given the same address, e.g.
 * two nodes on one machine, must not take the first one's over). */
static int server_prepare_unix_path(struct rpc_server *srv, const char *addr, char *err,
                                    size_t errlen)
{
    if (strncmp(addr, "unix:", 5) != 0)
        return 0;
    srv->unix_path = strdup(addr + 5);
    if (!srv->unix_path) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct stat st;
    if (lstat(srv->unix_path, &st) < 0 || !S_ISSOCK(st.st_mode))
        return 0;
    if (unix_socket_in_use(srv->unix_path)) {
        snprintf(err, errlen, "socket %s is in use: another process serves on it (give this "
                              "one an address of its own)", srv->unix_path);
        return -1;
    }
    if (unlink(srv->unix_path) < 0) {
        snprintf(err, errlen, "cannot remove stale socket %s: %s", srv->unix_path, strerror(errno));
        return -1;
    }
    return 0;
}

static void server_free(struct rpc_server *srv)
{
    grpc_server_destroy(srv->server);
    grpc_completion_queue_destroy(srv->cq);
    if (srv->unix_path) {
        struct stat st;
        if (lstat(srv->unix_path, &st) == 0 && S_ISSOCK(st.st_mode))
            unlink(srv->unix_path);
        free(srv->unix_path);
    }
    pthread_mutex_destroy(&srv->mu);
    pthread_cond_destroy(&srv->workers_changed);
    if (srv->authorization) {
        explicit_bzero(srv->authorization, strlen(srv->authorization));
        free(srv->authorization);
    }
    free(srv);
    grpc_shutdown();
}

/* "Bearer <token>", or NULL (no check) for a NULL or empty token. */
static int server_set_token(struct rpc_server *srv, const char *token, char *err, size_t errlen)
{
    if (!token || !*token)
        return 0;
    if (asprintf(&srv->authorization, "Bearer %s", token) < 0) {
        srv->authorization = NULL;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

struct rpc_server *rpc_server_start(const char *addr, const struct rpc_method *methods,
                                    size_t n_methods, void *ctx, const struct rpc_security *sec,
                                    char *err, size_t errlen)
{
    struct rpc_server *srv = calloc(1, sizeof(*srv));
    if (!srv) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    grpc_init();
    srv->methods = methods;
    srv->n_methods = n_methods;
    srv->ctx = ctx;
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->workers_changed, NULL);
    srv->server = grpc_server_create(rpc_wire_channel_args(), NULL);
    srv->cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(srv->server, srv->cq, NULL);

    srv->tls = sec ? sec->tls : NULL;
    srv->calls = sec ? sec->calls : NULL;
    if (server_set_token(srv, sec ? sec->bearer_token : NULL, err, errlen) < 0 ||
        server_prepare_unix_path(srv, addr, err, errlen) < 0)
        goto fail_unstarted;
    grpc_server_credentials *creds = srv->tls ? tls_credentials_server(srv->tls)
                                              : grpc_insecure_server_credentials_create();
    int port = creds ? grpc_server_add_http2_port(srv->server, addr, creds) : 0;
    if (creds)
        grpc_server_credentials_release(creds);
    if (port == 0) {
        snprintf(err, errlen, "cannot listen on %s", addr);
        goto fail_unstarted;
    }
    grpc_server_start(srv->server);
    server_request_call(srv);

    pthread_mutex_lock(&srv->mu);
    size_t started = 0;
    while (started < WORKERS_AT_START && server_add_worker_locked(srv))
        started++;
    pthread_mutex_unlock(&srv->mu);
    if (started == 0) {
        snprintf(err, errlen, "cannot start a worker thread");
        grpc_server_shutdown_and_notify(srv->server, srv->cq, &srv->shutdown_tag);
        server_drain(srv);
        server_free(srv);
        return NULL;
    }
    return srv;

fail_unstarted:
    grpc_completion_queue_shutdown(srv->cq);
    while (grpc_completion_queue_next(srv->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    free(srv->unix_path);
    srv->unix_path = NULL; /* not ours: another server may be listening there */
    server_free(srv);
    return NULL;
}

void rpc_server_stop(struct rpc_server *srv)
{
    if (!srv)
        return;
    grpc_server_shutdown_and_notify(srv->server, srv->cq, &srv->shutdown_tag);
    grpc_server_cancel_all_calls(srv->server);

    pthread_mutex_lock(&srv->mu);
    while (srv->live_workers > 0)
        pthread_cond_wait(&srv->workers_changed, &srv->mu);
    pthread_mutex_unlock(&srv->mu);
    server_reap_workers(srv);
    server_free(srv);
}

struct metric *rpc_calls_metric(struct metrics_registry *reg, const char *prefix)
{
    char name[128];
    snprintf(name, sizeof(name), "%s_grpc_requests_total", prefix);
    return metrics_counter(reg, name, "gRPC calls answered, by method and status code.", 2,
                           METRIC_LABELS("method", "code"));
}
