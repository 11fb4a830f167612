/* Exec (server-streaming output) and ExecInput (stdin, resize, signals for
 * an exec in flight). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "service_exec_common.h"

#define EXEC_INPUT_TIMEOUT_MS 10000

static void exec_next_id(struct vmhost *vh, char *out, size_t outlen)
{
    pthread_mutex_lock(&vh->lock);
    unsigned long long n = ++vh->next_exec_id;
    pthread_mutex_unlock(&vh->lock);
    snprintf(out, outlen, "ex_%llu", n);
}

void service_exec(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__ExecRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__exec_request__descriptor);
    if (!req)
        return;
    struct exec_started x;
    if (!exec_start(call, vh, req, false, &x))
        goto out;
    struct sandbox *sb = x.sb;
    struct sandbox_exec ex = { .stream = x.s };
    exec_next_id(vh, ex.id, sizeof(ex.id));
    Airlock__Vmhost__V1__ExecStarted started = AIRLOCK__VMHOST__V1__EXEC_STARTED__INIT;
    started.exec_id = ex.id;
    started.pid = x.pid;
    Airlock__Vmhost__V1__ExecEvent ev = AIRLOCK__VMHOST__V1__EXEC_EVENT__INIT;
    ev.event_case = AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_STARTED;
    ev.started = &started;
    /* Registered before the client learns the id: it may send ExecInput
     * the moment it reads the started event. */
    sandbox_exec_register(sb, &ex);
    if (rpc_call_send(call, &ev.base) < 0)
        rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client went away");
    else
        exec_stream_relay(call, sb, x.s, req->stdin, x.g.msg.stdin_open && !req->stdin_open);
    sandbox_exec_unregister(sb, &ex);
out:
    exec_started_done(&x); /* closing the stream cancels (kills) a process still running */
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static int exec_input_apply(struct guest_stream *s, void *arg)
{
    const Airlock__Vmhost__V1__ExecInputRequest *req = arg;
    if ((req->stdin.len || req->close_stdin) &&
        guest_stream_send_bytes(s, req->stdin.data, req->stdin.len, req->close_stdin,
                               EXEC_INPUT_TIMEOUT_MS) < 0)
        return -1;
    if (req->rows && req->cols) {
        Airlock__Guest__V1__Resize r = AIRLOCK__GUEST__V1__RESIZE__INIT;
        r.rows = req->rows;
        r.cols = req->cols;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESIZE;
        f.resize = &r;
        if (guest_stream_send(s, &f, EXEC_INPUT_TIMEOUT_MS) < 0)
            return -1;
    }
    if (req->signal) {
        Airlock__Guest__V1__SignalRequest sr = AIRLOCK__GUEST__V1__SIGNAL_REQUEST__INIT;
        sr.signal = req->signal;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SIGNAL;
        f.signal = &sr;
        if (guest_stream_send(s, &f, EXEC_INPUT_TIMEOUT_MS) < 0)
            return -1;
    }
    return 0;
}

void service_exec_input(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__ExecInputRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__exec_input_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    struct guest_channel *ch = NULL;
    if (!*req->exec_id) {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "exec_id: required");
        goto out;
    }
    if (req->signal < 0 || req->signal >= SIGRTMAX) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "signal: %d is not a signal number",
                         req->signal);
        goto out;
    }
    if ((req->rows == 0) != (req->cols == 0) || req->rows > 1000 || req->cols > 1000) {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT,
                        "rows/cols: give both, each 1..1000, to resize");
        goto out;
    }
    ch = service_running_sandbox(call, vh, req->sandbox_id, &sb);
    if (!ch)
        goto out;
    if (sandbox_exec_with_stream(sb, req->exec_id, exec_input_apply, req) < 0) {
        if (errno == ENOENT)
            rpc_call_finishf(call, GRPC_STATUS_NOT_FOUND, "exec %.64s not found in sandbox %s",
                             req->exec_id, sandbox_id(sb));
        else if (errno == ETIMEDOUT)
            rpc_call_finishf(call, GRPC_STATUS_DEADLINE_EXCEEDED,
                             "exec %.64s is not reading its stdin", req->exec_id);
        else /* its stream is closed: the exec is over, as once it is unregistered (just
              * after its exit reaches the client), so both answer alike */
            rpc_call_finishf(call, GRPC_STATUS_NOT_FOUND, "exec %.64s has ended",
                             req->exec_id);
        goto out;
    }
    Airlock__Vmhost__V1__ExecInputResponse resp = AIRLOCK__VMHOST__V1__EXEC_INPUT_RESPONSE__INIT;
    rpc_call_send(call, &resp.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    service_done(sb, ch);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
