/* airlock_rpc end to end: an in-process server on a temporary unix socket
 * with test handlers that speak vmhost.proto messages, driven by the client
 * API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rpc_client.h"
#include "rpc_server.h"
#include "vmhost.pb-c.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define VMHOST "/airlock.vmhost.v1.VmHost/"
#define CALL_TIMEOUT_MS 10000
#define CONCURRENT_CALLS 50
#define CLIENT_THREADS 8

/* What handlers observed, for the tests to assert on. */
struct observed {
    pthread_mutex_t mu;
    pthread_cond_t changed;
    char authorization[128];
    bool stream_saw_cancel;
    bool stream_handler_ended;
    bool sleeper_saw_cancel;
    int barrier_waiting;
};

static struct observed seen = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .changed = PTHREAD_COND_INITIALIZER,
};

static void observed_reset(void)
{
    pthread_mutex_lock(&seen.mu);
    seen.authorization[0] = '\0';
    seen.stream_saw_cancel = false;
    seen.stream_handler_ended = false;
    seen.sleeper_saw_cancel = false;
    seen.barrier_waiting = 0;
    pthread_mutex_unlock(&seen.mu);
}

/* Waits up to timeout_ms for *flag; returns its value. */
static bool observed_wait(const bool *flag, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&seen.mu);
    while (!*flag && pthread_cond_timedwait(&seen.changed, &seen.mu, &until) == 0)
        ;
    bool value = *flag;
    pthread_mutex_unlock(&seen.mu);
    return value;
}

static void observed_set(bool *flag)
{
    pthread_mutex_lock(&seen.mu);
    *flag = true;
    pthread_cond_broadcast(&seen.changed);
    pthread_mutex_unlock(&seen.mu);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- handlers -------------------------------------------------------- */

/* Unary echo; id "x…" is NOT_FOUND. Records the authorization header. */
static void handle_get_sandbox(struct rpc_call *call, void *ctx)
{
    (void)ctx;
    Airlock__Vmhost__V1__SandboxRef *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    const char *auth = rpc_call_metadata(call, "authorization");
    pthread_mutex_lock(&seen.mu);
    snprintf(seen.authorization, sizeof(seen.authorization), "%s", auth ? auth : "");
    pthread_mutex_unlock(&seen.mu);

    if (req->id[0] == 'x') {
        rpc_call_finishf(call, GRPC_STATUS_NOT_FOUND, "sandbox %s not found", req->id);
    } else {
        Airlock__Vmhost__V1__Sandbox sb = AIRLOCK__VMHOST__V1__SANDBOX__INIT;
        sb.id = req->id;
        sb.state = AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_RUNNING;
        rpc_call_reply(call, &sb.base);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static int send_output(struct rpc_call *call, int i)
{
    char line[32];
    int len = snprintf(line, sizeof(line), "line %d\n", i);
    Airlock__Vmhost__V1__ExecOutput out = AIRLOCK__VMHOST__V1__EXEC_OUTPUT__INIT;
    out.fd = 1;
    out.data = (ProtobufCBinaryData){.len = (size_t)len, .data = (uint8_t *)line};
    Airlock__Vmhost__V1__ExecEvent ev = AIRLOCK__VMHOST__V1__EXEC_EVENT__INIT;
    ev.event_case = AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT;
    ev.output = &out;
    return rpc_call_send(call, &ev.base);
}

/* Server streaming. argv[0] "N": N output events, an exit event, OK.
 * argv[0] "forever": output every 10 ms until the client goes away. */
static void handle_exec(struct rpc_call *call, void *ctx)
{
    (void)ctx;
    Airlock__Vmhost__V1__ExecRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__exec_request__descriptor);
    if (!req)
        return;
    char arg[16] = "0";
    if (req->n_argv && req->argv[0].len < sizeof(arg)) {
        memcpy(arg, req->argv[0].data, req->argv[0].len);
        arg[req->argv[0].len] = '\0';
    }
    if (strcmp(arg, "forever") == 0) {
        for (int i = 0; !rpc_call_cancelled(call) && send_output(call, i) == 0; i++)
            sleep_ms(10);
        if (rpc_call_cancelled(call))
            observed_set(&seen.stream_saw_cancel);
        rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client went away");
        observed_set(&seen.stream_handler_ended);
    } else {
        int n = atoi(arg);
        for (int i = 0; i < n; i++)
            send_output(call, i);
        Airlock__Vmhost__V1__ExecExit exit_ev = AIRLOCK__VMHOST__V1__EXEC_EXIT__INIT;
        exit_ev.exit_code = 7;
        Airlock__Vmhost__V1__ExecEvent ev = AIRLOCK__VMHOST__V1__EXEC_EVENT__INIT;
        ev.event_case = AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT;
        ev.exit = &exit_ev;
        rpc_call_send(call, &ev.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* Client streaming: the first message names the file, the rest carry data;
 * answers with the byte count. */
static void handle_write_file(struct rpc_call *call, void *ctx)
{
    (void)ctx;
    const ProtobufCMessageDescriptor *desc = &airlock__vmhost__v1__write_file_request__descriptor;
    Airlock__Vmhost__V1__WriteFileRequest *head = (void *)rpc_call_recv_request(call, desc);
    if (!head)
        return;
    uint64_t total = head->data.len;
    Airlock__Vmhost__V1__WriteFileRequest *chunk;
    while ((chunk = (void *)rpc_call_recv(call, desc))) {
        total += chunk->data.len;
        protobuf_c_message_free_unpacked(&chunk->base, NULL);
    }
    if (rpc_call_recv_status(call) == RPC_RECV_END) {
        Airlock__Guest__V1__FileInfo info = AIRLOCK__GUEST__V1__FILE_INFO__INIT;
        info.name = head->request ? head->request->path : (ProtobufCBinaryData){ 0 };
        info.size = total;
        rpc_call_send(call, &info.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    } else {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "bad chunk");
    }
    protobuf_c_message_free_unpacked(&head->base, NULL);
}

static void handle_no_finish(struct rpc_call *call, void *ctx)
{
    (void)call;
    (void)ctx;
}

/* Waits for cancellation (the client's deadline) for up to 5 s. */
static void handle_sleep(struct rpc_call *call, void *ctx)
{
    (void)ctx;
    for (int i = 0; i < 500 && !rpc_call_cancelled(call); i++)
        sleep_ms(10);
    if (rpc_call_cancelled(call))
        observed_set(&seen.sleeper_saw_cancel);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
}

/* Answers only once CONCURRENT_CALLS handlers are waiting at once, which
 * proves calls run in parallel; DEADLINE_EXCEEDED after 10 s otherwise. */
static void handle_barrier(struct rpc_call *call, void *ctx)
{
    (void)ctx;
    Airlock__Vmhost__V1__SandboxRef *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&seen.mu);
    seen.barrier_waiting++;
    pthread_cond_broadcast(&seen.changed);
    while (seen.barrier_waiting < CONCURRENT_CALLS &&
           pthread_cond_timedwait(&seen.changed, &seen.mu, &until) == 0)
        ;
    bool reached = seen.barrier_waiting >= CONCURRENT_CALLS;
    pthread_mutex_unlock(&seen.mu);

    if (reached) {
        Airlock__Vmhost__V1__Sandbox sb = AIRLOCK__VMHOST__V1__SANDBOX__INIT;
        sb.id = req->id;
        rpc_call_send(call, &sb.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    } else {
        rpc_call_finish(call, GRPC_STATUS_DEADLINE_EXCEEDED, "barrier not reached");
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* Status OK without a message: a unary client must not take that as an
 * answer. */
static void handle_empty(struct rpc_call *call, void *ctx)
{
    (void)ctx;
    ProtobufCMessage *req =
        rpc_call_recv_request(call, &airlock__vmhost__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    protobuf_c_message_free_unpacked(req, NULL);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
}

/* callers only matter with mutual TLS, which test_rpc_tls covers. */
static const struct rpc_method test_methods[] = {
    {VMHOST "GetSandbox", handle_get_sandbox, PEER_GATEWAY},
    {VMHOST "Exec", handle_exec, PEER_GATEWAY},
    {VMHOST "WriteFile", handle_write_file, PEER_GATEWAY},
    {"/test.Test/NoFinish", handle_no_finish, PEER_GATEWAY},
    {"/test.Test/Sleep", handle_sleep, PEER_GATEWAY},
    {"/test.Test/Barrier", handle_barrier, PEER_GATEWAY},
    {"/test.Test/Empty", handle_empty, PEER_GATEWAY},
};

/* ---- fixture --------------------------------------------------------- */

struct fixture {
    char dir[64];
    char addr[96];
    struct metrics_registry *metrics; /* the server's calls counter's */
    struct rpc_server *server;
    struct rpc_channel *channel;
};

static int fixture_setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/airlock-test-rpc-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->addr, sizeof(f->addr), "unix:%s/rpc.sock", f->dir);
    char err[256];
    f->metrics = metrics_registry_new();
    struct rpc_security sec = { .calls = rpc_calls_metric(f->metrics, "test") };
    f->server = rpc_server_start(f->addr, test_methods,
                                 sizeof(test_methods) / sizeof(test_methods[0]), NULL, &sec,
                                 err, sizeof(err));
    if (!f->server) {
        fprintf(stderr, "rpc_server_start: %s\n", err);
        return -1;
    }
    f->channel = rpc_channel_open(f->addr, &(struct rpc_channel_auth){ .bearer_token = "sekrit" });
    observed_reset();
    *state = f;
    return f->channel ? 0 : -1;
}

static int fixture_teardown(void **state)
{
    struct fixture *f = *state;
    rpc_channel_close(f->channel);
    rpc_server_stop(f->server); /* NULL after a test stopped it itself */
    metrics_registry_free(f->metrics);
    char sock[128];
    snprintf(sock, sizeof(sock), "%s/rpc.sock", f->dir);
    bool socket_left = access(sock, F_OK) == 0;
    unlink(sock);
    rmdir(f->dir);
    free(f);
    return socket_left ? -1 : 0; /* stop must remove its socket */
}

static grpc_status_code get_sandbox(struct rpc_channel *ch, const char *id,
                                    Airlock__Vmhost__V1__Sandbox **sb, char **details)
{
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = (char *)id;
    return rpc_unary(ch, VMHOST "GetSandbox", &req.base, &airlock__vmhost__v1__sandbox__descriptor,
                     (ProtobufCMessage **)sb, details, CALL_TIMEOUT_MS);
}

static struct rpc_stream *open_exec(struct rpc_channel *ch, const char *arg, int timeout_ms)
{
    ProtobufCBinaryData argv[1] = {{.len = strlen(arg), .data = (uint8_t *)arg}};
    Airlock__Vmhost__V1__ExecRequest req = AIRLOCK__VMHOST__V1__EXEC_REQUEST__INIT;
    req.n_argv = 1;
    req.argv = argv;
    struct rpc_stream *s = rpc_stream_open(ch, VMHOST "Exec", timeout_ms);
    assert_non_null(s);
    assert_int_equal(rpc_stream_send(s, &req.base), 0);
    assert_int_equal(rpc_stream_close_send(s), 0);
    return s;
}

/* ---- tests ----------------------------------------------------------- */

/* The server's calls counter shows the sample line want. */
static void assert_counted(struct fixture *f, const char *want)
{
    struct strbuf text = { 0 };
    metrics_render(f->metrics, &text);
    if (!strstr(strbuf_str(&text), want))
        fail_msg("no \"%s\" in:\n%s", want, strbuf_str(&text));
    strbuf_free(&text);
}

static void test_unary_echo(void **state)
{
    struct fixture *f = *state;
    Airlock__Vmhost__V1__Sandbox *sb = NULL;
    char *details = NULL;
    assert_int_equal(get_sandbox(f->channel, "sb-1", &sb, &details), GRPC_STATUS_OK);
    assert_non_null(sb);
    assert_string_equal(sb->id, "sb-1");
    assert_int_equal(sb->state, AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_RUNNING);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    free(details);
}

static void test_error_status_reaches_client(void **state)
{
    struct fixture *f = *state;
    Airlock__Vmhost__V1__Sandbox *sb = NULL;
    char *details = NULL;
    assert_int_equal(get_sandbox(f->channel, "x", &sb, &details), GRPC_STATUS_NOT_FOUND);
    assert_null(sb);
    assert_string_equal(details, "sandbox x not found");
    assert_string_equal(rpc_status_name(GRPC_STATUS_NOT_FOUND), "NOT_FOUND");
    free(details);
    assert_counted(f, "test_grpc_requests_total{method=\"GetSandbox\",code=\"NOT_FOUND\"} 1\n");
}

static void test_authorization_metadata(void **state)
{
    struct fixture *f = *state;
    Airlock__Vmhost__V1__Sandbox *sb = NULL;
    assert_int_equal(get_sandbox(f->channel, "sb-auth", &sb, NULL), GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    assert_string_equal(seen.authorization, "Bearer sekrit");

    struct rpc_channel *anonymous = rpc_channel_open(f->addr, NULL);
    assert_int_equal(get_sandbox(anonymous, "sb-anon", &sb, NULL), GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    rpc_channel_close(anonymous);
    assert_string_equal(seen.authorization, "");
}

/* A call to a server started with a token, by a channel presenting
 * token (NULL: none); *details gets the status message. */
static grpc_status_code call_token_server(const char *addr, const char *token, char **details)
{
    struct rpc_channel *ch = rpc_channel_open(addr, &(struct rpc_channel_auth){ .bearer_token = token });
    assert_non_null(ch);
    Airlock__Vmhost__V1__Sandbox *sb = NULL;
    grpc_status_code code = get_sandbox(ch, "sb-token", &sb, details);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    rpc_channel_close(ch);
    return code;
}

static void test_server_token_required(void **state)
{
    struct fixture *f = *state;
    static const char token[] = "0123456789abcdefghijklmnopqrstuvwxyzABCD";
    char addr[128], err[256];
    snprintf(addr, sizeof(addr), "unix:%s/token.sock", f->dir);
    struct rpc_server *srv = rpc_server_start(
        addr, test_methods, sizeof(test_methods) / sizeof(test_methods[0]), NULL,
        &(struct rpc_security){ .bearer_token = token }, err, sizeof(err));
    assert_non_null(srv);

    char *details = NULL;
    assert_int_equal(call_token_server(addr, NULL, &details), GRPC_STATUS_UNAUTHENTICATED);
    assert_string_equal(details, "internal token required");
    free(details);
    /* Wrong, a prefix of the right one, and the right one with more. */
    const char *wrong[] = {"not-the-token", "0123456789abcdefghijklmnopqrstuvwxyzABC",
                           "0123456789abcdefghijklmnopqrstuvwxyzABCDE", ""};
    for (size_t i = 0; i < sizeof(wrong) / sizeof(*wrong); i++) {
        details = NULL;
        assert_int_equal(call_token_server(addr, wrong[i], &details), GRPC_STATUS_UNAUTHENTICATED);
        assert_string_equal(details, "wrong internal token");
        assert_null(strstr(details, token));
        free(details);
    }
    /* No handler ran for any of them. */
    assert_string_equal(seen.authorization, "");

    details = NULL;
    assert_int_equal(call_token_server(addr, token, &details), GRPC_STATUS_OK);
    free(details);
    assert_string_equal(seen.authorization, "Bearer 0123456789abcdefghijklmnopqrstuvwxyzABCD");
    rpc_server_stop(srv);
}

static void test_server_streaming(void **state)
{
    struct fixture *f = *state;
    struct rpc_stream *s = open_exec(f->channel, "5", CALL_TIMEOUT_MS);
    Airlock__Vmhost__V1__ExecEvent *ev;
    int outputs = 0, exit_code = -1;
    while (rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor,
                           (ProtobufCMessage **)&ev)) {
        if (ev->event_case == AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT) {
            char want[32];
            snprintf(want, sizeof(want), "line %d\n", outputs++);
            assert_int_equal(ev->output->data.len, strlen(want));
            assert_memory_equal(ev->output->data.data, want, strlen(want));
        } else if (ev->event_case == AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT) {
            exit_code = ev->exit->exit_code;
        }
        protobuf_c_message_free_unpacked(&ev->base, NULL);
    }
    assert_int_equal(rpc_stream_finish(s, NULL), GRPC_STATUS_OK);
    assert_int_equal(outputs, 5);
    assert_int_equal(exit_code, 7);
}

static void test_client_streaming(void **state)
{
    struct fixture *f = *state;
    struct rpc_stream *s = rpc_stream_open(f->channel, VMHOST "WriteFile", CALL_TIMEOUT_MS);
    Airlock__Guest__V1__FileWriteRequest fw = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
    fw.path = (ProtobufCBinaryData){.len = 6, .data = (uint8_t *)"/a/b.c"};
    Airlock__Vmhost__V1__WriteFileRequest msg = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
    msg.request = &fw;
    assert_int_equal(rpc_stream_send(s, &msg.base), 0);
    static uint8_t chunk[64 * 1024];
    msg = (Airlock__Vmhost__V1__WriteFileRequest)AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
    msg.data = (ProtobufCBinaryData){.len = sizeof(chunk), .data = chunk};
    for (int i = 0; i < 20; i++)
        assert_int_equal(rpc_stream_send(s, &msg.base), 0);
    assert_int_equal(rpc_stream_close_send(s), 0);

    Airlock__Guest__V1__FileInfo *info = NULL;
    assert_int_equal(
        rpc_stream_recv(s, &airlock__guest__v1__file_info__descriptor, (ProtobufCMessage **)&info),
        1);
    assert_int_equal(rpc_stream_finish(s, NULL), GRPC_STATUS_OK);
    assert_int_equal(info->size, 20 * sizeof(chunk));
    assert_int_equal(info->name.len, 6);
    assert_memory_equal(info->name.data, "/a/b.c", 6);
    protobuf_c_message_free_unpacked(&info->base, NULL);
}

static void test_unknown_method(void **state)
{
    struct fixture *f = *state;
    Airlock__Vmhost__V1__Empty req = AIRLOCK__VMHOST__V1__EMPTY__INIT;
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    assert_int_equal(rpc_unary(f->channel, VMHOST "NoSuchMethod", &req.base,
                               &airlock__vmhost__v1__empty__descriptor, &resp, &details,
                               CALL_TIMEOUT_MS),
                     GRPC_STATUS_UNIMPLEMENTED);
    assert_null(resp);
    assert_non_null(strstr(details, "NoSuchMethod"));
    free(details);
    /* The caller's path is no label: a client cannot grow the registry. */
    assert_counted(f, "test_grpc_requests_total{method=\"unknown\",code=\"UNIMPLEMENTED\"} 1\n");
}

/* A unary call to method ends in INTERNAL with message, and no answer. */
static void assert_unary_internal(struct fixture *f, const char *method, const char *message)
{
    Airlock__Vmhost__V1__Empty req = AIRLOCK__VMHOST__V1__EMPTY__INIT;
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    assert_int_equal(rpc_unary(f->channel, method, &req.base,
                               &airlock__vmhost__v1__empty__descriptor, &resp, &details,
                               CALL_TIMEOUT_MS),
                     GRPC_STATUS_INTERNAL);
    assert_null(resp);
    assert_string_equal(details, message);
    free(details);
}

static void test_handler_without_finish(void **state)
{
    assert_unary_internal(*state, "/test.Test/NoFinish", "handler did not finish");
}

static void test_malformed_request(void **state)
{
    struct fixture *f = *state;
    /* Field 1 of ExecExit is a varint; SandboxRef's field 1 is a
     * string, so these bytes do not parse as a SandboxRef. */
    Airlock__Vmhost__V1__ExecExit wrong = AIRLOCK__VMHOST__V1__EXEC_EXIT__INIT;
    wrong.exit_code = 5;
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    assert_int_equal(rpc_unary(f->channel, VMHOST "GetSandbox", &wrong.base,
                               &airlock__vmhost__v1__sandbox__descriptor, &resp, &details,
                               CALL_TIMEOUT_MS),
                     GRPC_STATUS_INVALID_ARGUMENT);
    assert_string_equal(details, "request is not a valid SandboxRef");
    free(details);
}

static void test_client_cancel_mid_stream(void **state)
{
    struct fixture *f = *state;
    struct rpc_stream *s = open_exec(f->channel, "forever", 0);
    ProtobufCMessage *ev = NULL;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor, &ev), 1);
        protobuf_c_message_free_unpacked(ev, NULL);
    }
    rpc_stream_cancel(s);
    assert_int_equal(rpc_stream_finish(s, NULL), GRPC_STATUS_CANCELLED);
    assert_true(observed_wait(&seen.stream_saw_cancel, 5000));
    assert_true(observed_wait(&seen.stream_handler_ended, 5000));
}

static void test_deadline_exceeded(void **state)
{
    struct fixture *f = *state;
    Airlock__Vmhost__V1__Empty req = AIRLOCK__VMHOST__V1__EMPTY__INIT;
    ProtobufCMessage *resp = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(rpc_unary(f->channel, "/test.Test/Sleep", &req.base,
                               &airlock__vmhost__v1__empty__descriptor, &resp, NULL, 200),
                     GRPC_STATUS_DEADLINE_EXCEEDED);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long elapsed_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    assert_in_range(elapsed_ms, 150, 3000);
    assert_true(observed_wait(&seen.sleeper_saw_cancel, 5000));
}

struct client_thread {
    struct rpc_channel *channel;
    int first, step; /* calls first, first+step, … below CONCURRENT_CALLS */
    int ok;
};

static void *concurrent_client(void *arg)
{
    struct client_thread *t = arg;
    struct rpc_stream *streams[CONCURRENT_CALLS];
    char ids[CONCURRENT_CALLS][16];
    int n = 0;
    for (int i = t->first; i < CONCURRENT_CALLS; i += t->step, n++) {
        snprintf(ids[n], sizeof(ids[n]), "sb-%d", i);
        Airlock__Vmhost__V1__SandboxRef req =
            AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
        req.id = ids[n];
        streams[n] = rpc_stream_open(t->channel, "/test.Test/Barrier", 20000);
        if (rpc_stream_send(streams[n], &req.base) == 0)
            rpc_stream_close_send(streams[n]);
    }
    for (int i = 0; i < n; i++) {
        Airlock__Vmhost__V1__Sandbox *sb = NULL;
        rpc_stream_recv(streams[i], &airlock__vmhost__v1__sandbox__descriptor,
                        (ProtobufCMessage **)&sb);
        if (rpc_stream_finish(streams[i], NULL) == GRPC_STATUS_OK && sb &&
            strcmp(sb->id, ids[i]) == 0)
            t->ok++;
        if (sb)
            protobuf_c_message_free_unpacked(&sb->base, NULL);
    }
    return NULL;
}

static void test_concurrent_calls(void **state)
{
    struct fixture *f = *state;
    struct client_thread threads[CLIENT_THREADS];
    pthread_t ids[CLIENT_THREADS];
    for (int i = 0; i < CLIENT_THREADS; i++) {
        threads[i] = (struct client_thread){.channel = f->channel, .first = i, .step = CLIENT_THREADS};
        assert_int_equal(pthread_create(&ids[i], NULL, concurrent_client, &threads[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < CLIENT_THREADS; i++) {
        pthread_join(ids[i], NULL);
        ok += threads[i].ok;
    }
    assert_int_equal(ok, CONCURRENT_CALLS);
}

/* The pool grew to 50 workers for the burst and shrinks back; calls keep
 * being served one after another by the workers left. */
static void test_calls_after_a_burst(void **state)
{
    test_concurrent_calls(state);
    struct fixture *f = *state;
    for (int i = 0; i < 20; i++) {
        Airlock__Vmhost__V1__Sandbox *sb = NULL;
        char *details = NULL;
        assert_int_equal(get_sandbox(f->channel, "sb-after", &sb, &details), GRPC_STATUS_OK);
        assert_string_equal(sb->id, "sb-after");
        protobuf_c_message_free_unpacked(&sb->base, NULL);
        free(details);
    }
}

static void test_unary_without_answer(void **state)
{
    assert_unary_internal(*state, "/test.Test/Empty", "no response message");
}

static void *stop_server(void *arg)
{
    rpc_server_stop(arg);
    return NULL;
}

static void test_stop_with_stream_in_flight(void **state)
{
    struct fixture *f = *state;
    struct rpc_stream *s = open_exec(f->channel, "forever", 0);
    ProtobufCMessage *ev = NULL;
    assert_int_equal(rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor, &ev), 1);
    protobuf_c_message_free_unpacked(ev, NULL);

    pthread_t stopper;
    assert_int_equal(pthread_create(&stopper, NULL, stop_server, f->server), 0);
    f->server = NULL;
    while (rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor, &ev))
        protobuf_c_message_free_unpacked(ev, NULL);
    char *details = NULL;
    grpc_status_code status = rpc_stream_finish(s, &details);
    pthread_join(stopper, NULL);

    assert_int_not_equal(status, GRPC_STATUS_OK);
    free(details);
    /* stop returned, so the handler thread was joined; it ran to its end. */
    assert_true(seen.stream_handler_ended);
    /* A new call now fails cleanly within its deadline. */
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    ProtobufCMessage *resp = NULL;
    assert_int_not_equal(rpc_unary(f->channel, VMHOST "GetSandbox", &req.base,
                                   &airlock__vmhost__v1__sandbox__descriptor, &resp, NULL, 300),
                         GRPC_STATUS_OK);
    assert_int_equal(rpc_channel_wait_ready(f->channel, 100), -1);
}

static void test_start_fails_on_bad_address(void **state)
{
    (void)state;
    char err[256] = "";
    struct rpc_server *srv =
        rpc_server_start("unix:/nonexistent-dir/x.sock", test_methods, 1, NULL, NULL, err,
                         sizeof(err));
    assert_null(srv);
    assert_non_null(strstr(err, "/nonexistent-dir/x.sock"));
}

/* A second server on a unix socket another one serves (two nodes given
 * one address) is refused and leaves the first one serving; a socket
 * nobody serves (a run that died) is taken over. */
static void test_start_refuses_a_live_socket(void **state)
{
    struct fixture *f = *state;
    char err[512] = "";
    assert_null(rpc_server_start(f->addr, test_methods, 1, NULL, NULL, err, sizeof(err)));
    assert_non_null(strstr(err, f->addr + 5));
    assert_non_null(strstr(err, "in use"));
    test_unary_echo(state);

    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof(a.sun_path), "%s/stale.sock", f->dir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    close(fd); /* the file stays, nobody listens */
    char addr[160];
    snprintf(addr, sizeof(addr), "unix:%s", a.sun_path);
    struct rpc_server *srv = rpc_server_start(addr, test_methods, 1, NULL, NULL, err,
                                              sizeof(err));
    if (!srv)
        fail_msg("a stale socket was not taken over: %s", err);
    rpc_server_stop(srv);
}

#define FIXTURE_TEST(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_unary_echo),
        FIXTURE_TEST(test_error_status_reaches_client),
        FIXTURE_TEST(test_authorization_metadata),
        FIXTURE_TEST(test_server_token_required),
        FIXTURE_TEST(test_server_streaming),
        FIXTURE_TEST(test_client_streaming),
        FIXTURE_TEST(test_unknown_method),
        FIXTURE_TEST(test_handler_without_finish),
        FIXTURE_TEST(test_malformed_request),
        FIXTURE_TEST(test_client_cancel_mid_stream),
        FIXTURE_TEST(test_deadline_exceeded),
        FIXTURE_TEST(test_concurrent_calls),
        FIXTURE_TEST(test_calls_after_a_burst),
        FIXTURE_TEST(test_unary_without_answer),
        FIXTURE_TEST(test_stop_with_stream_in_flight),
        cmocka_unit_test(test_start_fails_on_bad_address),
        FIXTURE_TEST(test_start_refuses_a_live_socket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
