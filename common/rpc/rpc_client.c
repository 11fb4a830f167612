/* Client side of airlock_rpc: every stream owns a pluck queue and runs one
 * blocking batch per operation. See docs/rpc.md. */
#include "rpc_client.h"

#include "rpc_wire.h"

#include <grpc/grpc_security.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tags on a stream's own queue: one per kind of op that may be in flight. */
#define TAG_START ((void *)1)
#define TAG_SEND ((void *)2)
#define TAG_RECV ((void *)3)
#define TAG_STATUS ((void *)4)

/* One grpc_channel with the TLS files of one generation. Each call holds
 * a reference; after a reload (tls_credentials_reload) new calls go on a
 * new one, and the old one is destroyed when its last call has ended, so
 * a rotation drops no call. */
struct channel_gen {
    grpc_channel *channel;
    unsigned tls_generation;
    atomic_uint refs; /* the rpc_channel's (while current) + one per call */
};

struct rpc_channel {
    pthread_mutex_t mu;
    struct channel_gen *cur; /* under mu */
    char *target;
    char *name; /* the server's identity, else the target: in messages */
    char server_dns[PEER_IDENTITY_DNS_MAX]; /* with tls: the name the server must have */
    struct tls_credentials *tls;
    grpc_metadata auth; /* "authorization: Bearer …" */
    size_t n_metadata;  /* 0 or 1 */
};

struct rpc_stream {
    const struct rpc_channel *ch;
    grpc_call *call;
    grpc_completion_queue *cq;
    struct channel_gen *gen;
    bool start_pending; /* TAG_START (initial metadata) not plucked yet */
    bool send_closed;
    bool recv_ended;
    bool got_initial_metadata;
    bool recv_pending;           /* a TAG_RECV batch started, not plucked yet */
    grpc_byte_buffer *recv_buf;  /* where that batch puts its message */
    grpc_metadata_array initial_metadata;
};

static struct channel_gen *gen_new(const struct rpc_channel *ch)
{
    struct channel_gen *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    atomic_init(&g->refs, 1);
    if (!ch->tls) {
        grpc_channel_credentials *creds = grpc_insecure_credentials_create();
        g->channel = grpc_channel_create(ch->target, creds, rpc_wire_channel_args());
        grpc_channel_credentials_release(creds);
        return g;
    }
    /* gRPC's host name check verifies the server's identity (its DNS
     * name, peer_identity.h) whatever the address: a unix socket too. */
    const grpc_channel_args *base = rpc_wire_channel_args();
    grpc_arg args[base->num_args + 1];
    memcpy(args, base->args, base->num_args * sizeof(*args));
    args[base->num_args] = (grpc_arg){ .type = GRPC_ARG_STRING,
                                       .key = GRPC_SSL_TARGET_NAME_OVERRIDE_ARG,
                                       .value.string = (char *)ch->server_dns };
    grpc_channel_args with = { .num_args = base->num_args + 1, .args = args };
    grpc_channel_credentials *creds = tls_credentials_channel(ch->tls, &g->tls_generation);
    if (!creds) {
        free(g);
        return NULL;
    }
    g->channel = grpc_channel_create(ch->target, creds, &with);
    grpc_channel_credentials_release(creds);
    return g;
}

static void gen_unref(struct channel_gen *g)
{
    if (g && atomic_fetch_sub(&g->refs, 1) == 1) {
        grpc_channel_destroy(g->channel);
        free(g);
    }
}

/* The current channel with a reference for one call, first made anew when
 * the TLS files were reloaded. */
static struct channel_gen *channel_gen_for_call(struct rpc_channel *ch)
{
    pthread_mutex_lock(&ch->mu);
    if (ch->tls && tls_credentials_generation(ch->tls) != ch->cur->tls_generation) {
        struct channel_gen *fresh = gen_new(ch);
        if (fresh) {
            gen_unref(ch->cur);
            ch->cur = fresh;
        }
    }
    struct channel_gen *g = ch->cur;
    atomic_fetch_add(&g->refs, 1);
    pthread_mutex_unlock(&ch->mu);
    return g;
}

struct rpc_channel *rpc_channel_open(const char *target, const struct rpc_channel_auth *auth)
{
    struct rpc_channel *ch = calloc(1, sizeof(*ch));
    if (!ch)
        return NULL;
    grpc_init();
    pthread_mutex_init(&ch->mu, NULL);
    if (!(ch->target = strdup(target)) ||
        !(ch->name = strdup(auth && auth->server ? auth->server : target)))
        goto fail;
    if (auth && auth->tls) {
        struct peer_identity server;
        if (!auth->server || peer_identity_parse(auth->server, &server) < 0)
            goto fail;
        peer_identity_dns(&server, ch->server_dns, sizeof(ch->server_dns));
        ch->tls = auth->tls;
    }
    if (auth && auth->bearer_token) {
        size_t len = strlen("Bearer ") + strlen(auth->bearer_token) + 1;
        char *value = malloc(len);
        if (!value)
            goto fail;
        snprintf(value, len, "Bearer %s", auth->bearer_token);
        ch->auth.key = grpc_slice_from_static_string("authorization");
        ch->auth.value = grpc_slice_from_copied_string(value);
        ch->n_metadata = 1;
        free(value);
    }
    if (!(ch->cur = gen_new(ch)))
        goto fail;
    return ch;

fail:
    if (ch->n_metadata)
        grpc_slice_unref(ch->auth.value);
    pthread_mutex_destroy(&ch->mu);
    free(ch->target);
    free(ch->name);
    free(ch);
    grpc_shutdown();
    return NULL;
}

void rpc_channel_close(struct rpc_channel *ch)
{
    if (!ch)
        return;
    gen_unref(ch->cur);
    if (ch->n_metadata) {
        grpc_slice_unref(ch->auth.key);
        grpc_slice_unref(ch->auth.value);
    }
    pthread_mutex_destroy(&ch->mu);
    free(ch->target);
    free(ch->name);
    free(ch);
    grpc_shutdown();
}

/* Whether the channel is connected now (no attempt to connect). */
static bool channel_ready(struct rpc_channel *ch)
{
    struct channel_gen *g = channel_gen_for_call(ch);
    bool ready = grpc_channel_check_connectivity_state(g->channel, 0) == GRPC_CHANNEL_READY;
    gen_unref(g);
    return ready;
}

/* Whether channel leaves state `from` before deadline. */
static bool state_changes(grpc_channel *channel, grpc_connectivity_state from,
                          gpr_timespec deadline)
{
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_channel_watch_connectivity_state(channel, from, deadline, cq, TAG_START);
    grpc_event ev =
        grpc_completion_queue_pluck(cq, TAG_START, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_completion_queue_shutdown(cq);
    grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_completion_queue_destroy(cq);
    return ev.success; /* else the deadline passed without a change */
}

int rpc_channel_wait_ready(struct rpc_channel *ch, int timeout_ms)
{
    if (channel_ready(ch)) /* the common case costs no queue */
        return 0;
    gpr_timespec deadline = rpc_wire_deadline(timeout_ms);
    struct channel_gen *g = channel_gen_for_call(ch);
    grpc_connectivity_state state = grpc_channel_check_connectivity_state(g->channel, 1);
    while (state != GRPC_CHANNEL_READY && state != GRPC_CHANNEL_SHUTDOWN &&
           state_changes(g->channel, state, deadline))
        /* An idle channel must be asked again to connect. */
        state = grpc_channel_check_connectivity_state(g->channel, 1);
    gen_unref(g);
    return state == GRPC_CHANNEL_READY ? 0 : -1;
}

/* How long a channel that failed a call UNAVAILABLE while still ready is
 * given to show a lost connection: the transport fails the calls before
 * the channel's state catches up. Only such failures wait it. */
#define LOST_CONNECTION_WAIT_MS 250

/* A call that failed UNAVAILABLE because its connection went (the server
 * died or restarted in the middle: the channel is no longer ready), not
 * because the server answered so: *details names the server and says the
 * outcome is unknown, instead of gRPC's "Socket closed". */
static void name_lost_connection(const struct rpc_channel *ch, grpc_channel *channel,
                                 grpc_status_code st, char **details)
{
    if (st != GRPC_STATUS_UNAVAILABLE || !details ||
        (grpc_channel_check_connectivity_state(channel, 0) == GRPC_CHANNEL_READY &&
         !state_changes(channel, GRPC_CHANNEL_READY,
                        rpc_wire_deadline(LOST_CONNECTION_WAIT_MS))))
        return;
    const char *was = *details && **details ? *details : "no detail";
    size_t len = strlen(ch->name) + strlen(was) + 128;
    char *now = malloc(len);
    if (!now)
        return;
    snprintf(now, len,
             "%s went away during the call (%s): it may or may not have carried it out",
             ch->name, was);
    free(*details);
    *details = now;
}

struct rpc_stream *rpc_stream_open(struct rpc_channel *ch, const char *method, int timeout_ms)
{
    struct rpc_stream *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->ch = ch;
    s->cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_metadata_array_init(&s->initial_metadata);
    grpc_slice method_slice = grpc_slice_from_copied_string(method);
    s->gen = channel_gen_for_call(ch);
    s->call = grpc_channel_create_call(s->gen->channel, NULL, GRPC_PROPAGATE_DEFAULTS, s->cq,
                                       method_slice, NULL, rpc_wire_deadline(timeout_ms), NULL);
    grpc_slice_unref(method_slice);

    /* Started now and plucked in finish, so later batches queue behind it
     * without waiting for the connection here. */
    grpc_op op = {.op = GRPC_OP_SEND_INITIAL_METADATA,
                  .flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY,
                  .data.send_initial_metadata = {.count = ch->n_metadata, .metadata = &ch->auth}};
    s->start_pending = grpc_call_start_batch(s->call, &op, 1, TAG_START, NULL) == GRPC_CALL_OK;
    return s;
}

static bool stream_run_batch(struct rpc_stream *s, const grpc_op *ops, size_t n, void *tag)
{
    if (grpc_call_start_batch(s->call, ops, n, tag, NULL) != GRPC_CALL_OK)
        return false;
    grpc_event ev = grpc_completion_queue_pluck(s->cq, tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    return ev.type == GRPC_OP_COMPLETE && ev.success;
}

int rpc_stream_send(struct rpc_stream *s, const ProtobufCMessage *msg)
{
    grpc_byte_buffer *buf = rpc_wire_pack(msg);
    grpc_op op = {.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = buf};
    bool ok = stream_run_batch(s, &op, 1, TAG_SEND);
    grpc_byte_buffer_destroy(buf);
    return ok ? 0 : -1;
}

int rpc_stream_close_send(struct rpc_stream *s)
{
    if (s->send_closed)
        return 0;
    s->send_closed = true;
    grpc_op op = {.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT};
    return stream_run_batch(s, &op, 1, TAG_SEND) ? 0 : -1;
}

/* Next raw response into *out (NULL at the end of the stream): 1, or 0
 * when deadline passed first (the receive stays pending for the next
 * call). */
static int stream_recv_buffer_until(struct rpc_stream *s, gpr_timespec deadline,
                                    grpc_byte_buffer **out)
{
    *out = NULL;
    if (s->recv_ended)
        return 1;
    if (!s->recv_pending) {
        grpc_op ops[2];
        size_t n = 0;
        if (!s->got_initial_metadata) {
            s->got_initial_metadata = true;
            ops[n++] = (grpc_op){.op = GRPC_OP_RECV_INITIAL_METADATA,
                                 .data.recv_initial_metadata.recv_initial_metadata =
                                     &s->initial_metadata};
        }
        s->recv_buf = NULL;
        ops[n++] = (grpc_op){.op = GRPC_OP_RECV_MESSAGE,
                             .data.recv_message.recv_message = &s->recv_buf};
        if (grpc_call_start_batch(s->call, ops, n, TAG_RECV, NULL) != GRPC_CALL_OK) {
            s->recv_ended = true;
            return 1;
        }
        s->recv_pending = true;
    }
    grpc_event ev = grpc_completion_queue_pluck(s->cq, TAG_RECV, deadline, NULL);
    if (ev.type == GRPC_QUEUE_TIMEOUT)
        return 0;
    s->recv_pending = false;
    if (!(ev.type == GRPC_OP_COMPLETE && ev.success) && s->recv_buf) {
        grpc_byte_buffer_destroy(s->recv_buf);
        s->recv_buf = NULL;
    }
    if (!s->recv_buf)
        s->recv_ended = true;
    *out = s->recv_buf;
    s->recv_buf = NULL;
    return 1;
}

/* Next raw response, or NULL at the end of the stream. */
static grpc_byte_buffer *stream_recv_buffer(struct rpc_stream *s)
{
    grpc_byte_buffer *buf;
    stream_recv_buffer_until(s, gpr_inf_future(GPR_CLOCK_REALTIME), &buf);
    return buf;
}

/* The message in buf (destroyed here): 1 with *out, or 0 after ending the
 * call when it does not parse. */
static int stream_unpack(struct rpc_stream *s, grpc_byte_buffer *buf,
                         const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out)
{
    *out = rpc_wire_unpack(buf, desc);
    grpc_byte_buffer_destroy(buf);
    if (*out)
        return 1;
    char reason[256];
    snprintf(reason, sizeof(reason), "response is not a valid %s", desc->short_name);
    grpc_call_cancel_with_status(s->call, GRPC_STATUS_INTERNAL, reason, NULL);
    s->recv_ended = true;
    return 0;
}

int rpc_stream_recv(struct rpc_stream *s, const ProtobufCMessageDescriptor *desc,
                    ProtobufCMessage **out)
{
    *out = NULL;
    grpc_byte_buffer *buf = stream_recv_buffer(s);
    return buf ? stream_unpack(s, buf, desc, out) : 0;
}

int rpc_stream_recv_wait(struct rpc_stream *s, const ProtobufCMessageDescriptor *desc,
                         ProtobufCMessage **out, int timeout_ms)
{
    *out = NULL;
    grpc_byte_buffer *buf;
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                         gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
    if (!stream_recv_buffer_until(s, deadline, &buf))
        return -1;
    return buf ? stream_unpack(s, buf, desc, out) : 0;
}

void rpc_stream_cancel(struct rpc_stream *s)
{
    grpc_call_cancel(s->call, NULL);
}

grpc_status_code rpc_stream_finish(struct rpc_stream *s, char **details)
{
    /* gRPC delivers the status only once the client half-closed and read
     * every message. */
    rpc_stream_close_send(s);
    grpc_byte_buffer *unread;
    while ((unread = stream_recv_buffer(s)))
        grpc_byte_buffer_destroy(unread);

    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    grpc_slice status_details = grpc_empty_slice();
    grpc_metadata_array trailing_metadata;
    grpc_metadata_array_init(&trailing_metadata);
    grpc_op op = {.op = GRPC_OP_RECV_STATUS_ON_CLIENT,
                  .data.recv_status_on_client = {.trailing_metadata = &trailing_metadata,
                                                 .status = &status,
                                                 .status_details = &status_details}};
    if (!stream_run_batch(s, &op, 1, TAG_STATUS))
        status = GRPC_STATUS_INTERNAL;
    if (s->start_pending)
        grpc_completion_queue_pluck(s->cq, TAG_START, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (details)
        *details = rpc_wire_slice_strdup(status_details);
    name_lost_connection(s->ch, s->gen->channel, status, details);

    grpc_slice_unref(status_details);
    grpc_metadata_array_destroy(&trailing_metadata);
    grpc_metadata_array_destroy(&s->initial_metadata);
    grpc_call_unref(s->call);
    gen_unref(s->gen);
    grpc_completion_queue_shutdown(s->cq);
    grpc_completion_queue_pluck(s->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_completion_queue_destroy(s->cq);
    free(s);
    return status;
}

/* A status the client decided itself, with its message in *details. */
static grpc_status_code unary_fail(grpc_status_code code, char **details, const char *message)
{
    if (details) {
        free(*details);
        *details = strdup(message);
    }
    return code;
}

grpc_status_code rpc_unary(struct rpc_channel *ch, const char *method, const ProtobufCMessage *req,
                           const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                           char **details, int timeout_ms)
{
    *resp = NULL;
    if (details)
        *details = NULL;
    /* The whole call in one batch: one wait on the queue instead of one
     * per step (the streams' way), which a control-plane hop pays twice. */
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_slice method_slice = grpc_slice_from_copied_string(method);
    struct channel_gen *gen = channel_gen_for_call(ch);
    grpc_call *call = grpc_channel_create_call(gen->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                               method_slice, NULL, rpc_wire_deadline(timeout_ms),
                                               NULL);
    grpc_slice_unref(method_slice);
    grpc_byte_buffer *sent = rpc_wire_pack(req), *received = NULL;
    grpc_metadata_array initial_metadata, trailing_metadata;
    grpc_metadata_array_init(&initial_metadata);
    grpc_metadata_array_init(&trailing_metadata);
    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    grpc_slice status_details = grpc_empty_slice();
    grpc_op ops[] = {
        {.op = GRPC_OP_SEND_INITIAL_METADATA,
         .flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY,
         .data.send_initial_metadata = {.count = ch->n_metadata, .metadata = &ch->auth}},
        {.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = sent},
        {.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT},
        {.op = GRPC_OP_RECV_INITIAL_METADATA,
         .data.recv_initial_metadata.recv_initial_metadata = &initial_metadata},
        {.op = GRPC_OP_RECV_MESSAGE, .data.recv_message.recv_message = &received},
        {.op = GRPC_OP_RECV_STATUS_ON_CLIENT,
         .data.recv_status_on_client = {.trailing_metadata = &trailing_metadata,
                                        .status = &status,
                                        .status_details = &status_details}},
    };
    bool ran = grpc_call_start_batch(call, ops, sizeof(ops) / sizeof(*ops), TAG_STATUS, NULL) ==
               GRPC_CALL_OK;
    if (ran)
        grpc_completion_queue_pluck(cq, TAG_STATUS, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (details)
        *details = rpc_wire_slice_strdup(status_details);
    name_lost_connection(ch, gen->channel, status, details);
    if (!ran) {
        status = unary_fail(GRPC_STATUS_INTERNAL, details, "the call could not start");
    } else if (status == GRPC_STATUS_OK && !received) {
        status = unary_fail(GRPC_STATUS_INTERNAL, details, "no response message");
    } else if (status == GRPC_STATUS_OK && !(*resp = rpc_wire_unpack(received, resp_desc))) {
        char why[256];
        snprintf(why, sizeof(why), "response is not a valid %s", resp_desc->short_name);
        status = unary_fail(GRPC_STATUS_INTERNAL, details, why);
    }

    if (received)
        grpc_byte_buffer_destroy(received);
    grpc_byte_buffer_destroy(sent);
    grpc_slice_unref(status_details);
    grpc_metadata_array_destroy(&initial_metadata);
    grpc_metadata_array_destroy(&trailing_metadata);
    grpc_call_unref(call);
    gen_unref(gen);
    grpc_completion_queue_shutdown(cq);
    grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_completion_queue_destroy(cq);
    return status;
}

const char *rpc_status_name(grpc_status_code code)
{
    static const char *const names[] = {
        [GRPC_STATUS_OK] = "OK",
        [GRPC_STATUS_CANCELLED] = "CANCELLED",
        [GRPC_STATUS_UNKNOWN] = "UNKNOWN",
        [GRPC_STATUS_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
        [GRPC_STATUS_DEADLINE_EXCEEDED] = "DEADLINE_EXCEEDED",
        [GRPC_STATUS_NOT_FOUND] = "NOT_FOUND",
        [GRPC_STATUS_ALREADY_EXISTS] = "ALREADY_EXISTS",
        [GRPC_STATUS_PERMISSION_DENIED] = "PERMISSION_DENIED",
        [GRPC_STATUS_RESOURCE_EXHAUSTED] = "RESOURCE_EXHAUSTED",
        [GRPC_STATUS_FAILED_PRECONDITION] = "FAILED_PRECONDITION",
        [GRPC_STATUS_ABORTED] = "ABORTED",
        [GRPC_STATUS_OUT_OF_RANGE] = "OUT_OF_RANGE",
        [GRPC_STATUS_UNIMPLEMENTED] = "UNIMPLEMENTED",
        [GRPC_STATUS_INTERNAL] = "INTERNAL",
        [GRPC_STATUS_UNAVAILABLE] = "UNAVAILABLE",
        [GRPC_STATUS_DATA_LOSS] = "DATA_LOSS",
        [GRPC_STATUS_UNAUTHENTICATED] = "UNAUTHENTICATED",
    };
    if ((unsigned)code < sizeof(names) / sizeof(names[0]) && names[code])
        return names[code];
    return "UNKNOWN";
}
