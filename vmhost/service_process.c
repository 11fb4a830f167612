/* Background processes: StartProcess, ListProcesses, AttachProcess,
 * WriteProcessStdin, SignalProcess. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "service_exec_common.h"

static int process_write_stdin(struct guest_channel *ch, int32_t pid, ProtobufCBinaryData data,
                               bool eof, GuestFrame **ans)
{
    Airlock__Guest__V1__ProcessStdin ps = AIRLOCK__GUEST__V1__PROCESS_STDIN__INIT;
    ps.pid = pid;
    ps.data = data;
    ps.eof = eof;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_STDIN;
    f.process_stdin = &ps;
    return guest_call(ch, &f, SERVICE_GUEST_TIMEOUT_MS, ans) == GUEST_RECV_OK ? 0 : -1;
}

void service_process_start(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__ExecRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__exec_request__descriptor);
    if (!req)
        return;
    struct exec_started x;
    GuestFrame *ans = NULL;
    if (!exec_start(call, vh, req, true, &x))
        goto out;
    if (req->stdin.len) {
        if (process_write_stdin(x.ch, x.pid, req->stdin, !req->stdin_open, &ans) < 0) {
            service_finish_guest_failure(call, x.sb, GUEST_RECV_CLOSED);
            goto out;
        }
        if (ans->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT ||
            ans->result->errno_value) {
            service_finish_from_result(call, ans);
            goto out;
        }
    }
    Airlock__Guest__V1__ProcessInfo info = AIRLOCK__GUEST__V1__PROCESS_INFO__INIT;
    info.pid = x.pid;
    info.n_argv = req->n_argv;
    info.argv = req->argv;
    info.running = true;
    info.started_unix_ms = clock_realtime_ms();
    info.pty = req->pty;
    rpc_call_send(call, &info.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    frame_free(ans);
    exec_started_done(&x); /* a background process outlives its stream */
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_process_list(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__ListProcessesRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__list_processes_request__descriptor);
    if (!req)
        return;
    Airlock__Guest__V1__ProcessListRequest plr = AIRLOCK__GUEST__V1__PROCESS_LIST_REQUEST__INIT;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_LIST_REQUEST;
    f.process_list_request = &plr;
    GuestFrame *ans = service_guest_ask(call, ctx, req->sandbox_id, true, &f,
                                        AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_LIST);
    if (ans) {
        /* The guest's list as it is: the API's ProcessInfo is guest.proto's. */
        Airlock__Vmhost__V1__ListProcessesResponse resp =
            AIRLOCK__VMHOST__V1__LIST_PROCESSES_RESPONSE__INIT;
        resp.n_processes = ans->process_list->n_processes;
        resp.processes = ans->process_list->processes;
        rpc_call_reply(call, &resp.base);
    }
    frame_free(ans);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_process_attach(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__AttachProcessRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__attach_process_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    struct guest_channel *ch = NULL;
    struct guest_stream *s = NULL;
    if (!service_check_pid(call, req->pid))
        goto out;
    ch = service_running_sandbox(call, vh, req->sandbox_id, &sb);
    if (!ch)
        goto out;
    Airlock__Guest__V1__AttachRequest ar = AIRLOCK__GUEST__V1__ATTACH_REQUEST__INIT;
    ar.pid = req->pid;
    ar.follow = req->follow;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_ATTACH;
    f.attach = &ar;
    s = service_open_stream(call, sb, ch, &f);
    if (!s)
        goto out;
    ProtobufCBinaryData no_stdin = { 0, NULL };
    exec_stream_relay(call, sb, s, no_stdin, false);
out:
    guest_stream_close(s);
    service_done(sb, ch);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_process_stdin(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__ProcessStdinRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__process_stdin_request__descriptor);
    if (!req)
        return;
    if (service_check_pid(call, req->pid)) {
        Airlock__Guest__V1__ProcessStdin ps = AIRLOCK__GUEST__V1__PROCESS_STDIN__INIT;
        ps.pid = req->pid;
        ps.data = req->data;
        ps.eof = req->eof;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_STDIN;
        f.process_stdin = &ps;
        service_simple_op(call, ctx, req->sandbox_id, &f);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static bool signal_number_valid(struct rpc_call *call, int32_t signal)
{
    if (signal > 0 && signal < SIGRTMAX)
        return true;
    rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "signal: %d is not a signal number", signal);
    return false;
}

void service_process_signal(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__SignalProcessRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__signal_process_request__descriptor);
    if (!req)
        return;
    if (service_check_pid(call, req->pid) && signal_number_valid(call, req->signal)) {
        Airlock__Guest__V1__SignalRequest sr = AIRLOCK__GUEST__V1__SIGNAL_REQUEST__INIT;
        sr.pid = req->pid;
        sr.signal = req->signal;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SIGNAL;
        f.signal = &sr;
        service_simple_op(call, ctx, req->sandbox_id, &f);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_process_resize(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__ResizeProcessRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__resize_process_request__descriptor);
    if (!req)
        return;
    if (req->rows == 0 || req->cols == 0 || req->rows > 65535 || req->cols > 65535) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "%s: must be 1..65535",
                         req->rows == 0 || req->rows > 65535 ? "rows" : "cols");
    } else if (service_check_pid(call, req->pid)) {
        Airlock__Guest__V1__Resize rr = AIRLOCK__GUEST__V1__RESIZE__INIT;
        rr.pid = req->pid;
        rr.rows = req->rows;
        rr.cols = req->cols;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESIZE;
        f.resize = &rr;
        service_simple_op(call, ctx, req->sandbox_id, &f);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
