/* Sandboxes.Exec and the background processes (StartProcess,
 * ListProcesses, AttachProcess, WriteProcessStdin, SignalProcess): like
 * their REST routes they go straight to the sandbox's vmhost, so output
 * bytes never pass the scheduler, and share exec_request.h's checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_request.h"
#include "grpc_call.h"
#include "grpc_convert.h"
#include "grpc_relay.h"
#include "string_map_json.h"
#include "vmhost_names.h"

typedef Airlock__V1__ExecRequest ExecRequest;

/* The request as the JSON object exec_request_from_json checks (fields
 * left at their zero value are left out, so the defaults apply); -1 with
 * e (invalid) naming the field. */
static int exec_fields_json(const ExecRequest *m, enum exec_kind kind, json_t **out,
                            struct airlock_error *e)
{
    json_t *body = json_object(), *cmd = json_array(), *env = NULL;
    *out = NULL;
    for (size_t i = 0; i < m->n_cmd; i++) {
        if (json_array_append_new(cmd, json_string(m->cmd[i])) < 0) {
            airlock_error_set(e, AIRLOCK_ERR_INVALID, "cmd[%zu]: must be UTF-8", i);
            goto fail;
        }
    }
    if (!(env = string_map_to_json((ProtobufCMessage **)m->env, m->n_env, "env",
                                   AIRLOCK_ERROR_MSG(e)))) {
        airlock_error_classify(e, AIRLOCK_ERR_INVALID);
        goto fail;
    }
    if (kind == EXEC_FOREGROUND && m->stdin_open) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "stdin_open: only for StartProcess");
        goto fail;
    }
    json_object_set_new(body, "cmd", cmd);
    json_object_set_new(body, "env", env);
    if (*m->cwd && json_object_set_new(body, "cwd", json_string(m->cwd)) < 0) {
        json_decref(body);
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "cwd: must be UTF-8");
    }
    if (m->timeout_s)
        json_object_set_new(body, "timeout_s", json_integer(m->timeout_s));
    if (m->stdin_open)
        json_object_set_new(body, "stdin_open", json_true());
    *out = body;
    return 0;
fail:
    json_decref(body);
    json_decref(cmd);
    json_decref(env);
    return -1;
}

/* in from the request, checked, and built for the caller's running
 * sandbox; *ch its vmhost. false after failing the call. */
static bool exec_prepare(struct grpc_request *r, enum exec_kind kind, const char *what,
                         struct exec_request *in, struct rpc_channel **ch)
{
    const ExecRequest *m = (const void *)r->msg;
    struct airlock_error e;
    json_t *body;
    memset(in, 0, sizeof(*in));
    if (exec_fields_json(m, kind, &body, &e) < 0 ||
        exec_request_from_json(in, body, kind, &e) < 0) {
        grpc_fail_error(r, &e);
        return false;
    }
    in->stdin = m->stdin;
    Airlock__Scheduler__V1__Sandbox *sb;
    if (!grpc_open_sandbox(r, m->id, what, &sb, ch))
        return false;
    int built = exec_request_build(in, sb);
    /* The request's strings point into sb: keep its id. */
    in->req.sandbox_id = m->id;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    if (built < 0)
        grpc_fail(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    return built == 0;
}

/* A vmhost ExecEvent as the public one: output and exit (started is
 * nothing a client needs). */
static int forward_exec_event(struct grpc_request *r, const ProtobufCMessage *msg)
{
    const Airlock__Vmhost__V1__ExecEvent *ev = (const void *)msg;
    Airlock__V1__ExecEvent out = AIRLOCK__V1__EXEC_EVENT__INIT;
    Airlock__V1__ExecExit exit_msg = AIRLOCK__V1__EXEC_EXIT__INIT;
    switch (ev->event_case) {
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT:
        if (ev->output->fd == 2) {
            out.event_case = AIRLOCK__V1__EXEC_EVENT__EVENT_STDERR;
            out.stderr = ev->output->data;
        } else {
            out.event_case = AIRLOCK__V1__EXEC_EVENT__EVENT_STDOUT;
            out.stdout = ev->output->data;
        }
        return grpc_send(r, &out.base) < 0 ? -1 : 0;
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT:
        exit_msg.exit_code = ev->exit->exit_code;
        exit_msg.signal = ev->exit->signal;
        exit_msg.timed_out = ev->exit->timed_out;
        out.event_case = AIRLOCK__V1__EXEC_EVENT__EVENT_EXIT;
        out.exit = &exit_msg;
        return grpc_send(r, &out.base) < 0 ? -1 : 1;
    default:
        return 0;
    }
}

/* Opens the vmhost stream `method` with req and relays its ExecEvents. */
static void relay_exec_stream(struct grpc_request *r, struct rpc_channel *ch, const char *method,
                              const ProtobufCMessage *req, int deadline_ms)
{
    struct rpc_stream *s = rpc_stream_open(ch, method, deadline_ms);
    if (!s) {
        grpc_fail(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    rpc_stream_send(s, req);
    rpc_stream_close_send(s);
    grpc_relay_stream(r, s, &airlock__vmhost__v1__exec_event__descriptor, forward_exec_event,
                      "the exec stream ended without an exit event");
}

void grpc_exec(struct grpc_request *r)
{
    struct exec_request in;
    struct rpc_channel *ch;
    struct exec_slot slot;
    struct airlock_error e;
    if (exec_prepare(r, EXEC_FOREGROUND, "exec", &in, &ch)) {
        if (exec_slot_take(&r->gw->execs, r->key_id, &slot, &e) < 0) {
            grpc_fail_error(r, &e);
        } else {
            /* The command's own timeout is enforced by vmhost; the call's
             * deadline is a backstop a little later. */
            relay_exec_stream(r, ch, VMHOST_METHOD("Exec"), &in.req.base,
                              (int)(in.timeout_s + 30) * 1000);
            exec_slot_give(&slot);
        }
    }
    exec_request_free(&in);
}

void grpc_start_process(struct grpc_request *r)
{
    struct exec_request in;
    struct rpc_channel *ch;
    Airlock__Guest__V1__ProcessInfo *info = NULL;
    if (!exec_prepare(r, EXEC_BACKGROUND, "starting a process", &in, &ch) ||
        !grpc_unary(r, ch, VMHOST_METHOD("StartProcess"), &in.req.base,
                    &airlock__guest__v1__process_info__descriptor, GW_SCHEDULER_TIMEOUT_MS,
                    (ProtobufCMessage **)&info))
        goto out;
    struct grpc_arena a = { 0 };
    Airlock__V1__ProcessInfo *msg = grpc_process_msg(&a, info);
    grpc_reply_built(r, &a, msg ? &msg->base : NULL, &info->base);
out:
    exec_request_free(&in);
}

void grpc_list_processes(struct grpc_request *r)
{
    const Airlock__V1__SandboxRequest *in = (const void *)r->msg;
    Airlock__Vmhost__V1__ListProcessesRequest req =
        AIRLOCK__VMHOST__V1__LIST_PROCESSES_REQUEST__INIT;
    req.sandbox_id = in->id;
    Airlock__Vmhost__V1__ListProcessesResponse *resp;
    if (!grpc_vmhost_unary(r, in->id, "listing processes", VMHOST_METHOD("ListProcesses"), &req.base,
                           &airlock__vmhost__v1__list_processes_response__descriptor,
                           (ProtobufCMessage **)&resp))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__ListProcessesResponse out = AIRLOCK__V1__LIST_PROCESSES_RESPONSE__INIT;
    out.processes = grpc_process_list(&a, resp->processes, resp->n_processes);
    out.n_processes = resp->n_processes;
    grpc_reply_built(r, &a, &out.base, &resp->base);
}

/* pid as a process id; false after failing the call. */
static bool check_pid(struct grpc_request *r, int32_t pid)
{
    if (pid > 0)
        return true;
    grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT, "pid: %d is not a process id", pid);
    return false;
}

void grpc_attach_process(struct grpc_request *r)
{
    const Airlock__V1__ProcessRequest *in = (const void *)r->msg;
    Airlock__Scheduler__V1__Sandbox *sb;
    struct rpc_channel *ch;
    if (!check_pid(r, in->pid) || !grpc_open_sandbox(r, in->id, "attaching to a process", &sb, &ch))
        return;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    Airlock__Vmhost__V1__AttachProcessRequest req = AIRLOCK__VMHOST__V1__ATTACH_PROCESS_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.pid = in->pid;
    req.follow = true;
    /* No deadline: it follows the process for as long as it runs. */
    relay_exec_stream(r, ch, VMHOST_METHOD("AttachProcess"), &req.base, 0);
}

void grpc_write_process_stdin(struct grpc_request *r)
{
    const Airlock__V1__WriteProcessStdinRequest *in = (const void *)r->msg;
    if (!check_pid(r, in->pid))
        return;
    if (in->data.len == 0 && !in->eof) {
        grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT, "data: required unless eof is true");
        return;
    }
    Airlock__Vmhost__V1__ProcessStdinRequest req = AIRLOCK__VMHOST__V1__PROCESS_STDIN_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.pid = in->pid;
    req.data = in->data;
    req.eof = in->eof;
    grpc_vmhost_call_empty(r, in->id, "writing to a process", VMHOST_METHOD("WriteProcessStdin"),
                           &req.base);
}

void grpc_signal_process(struct grpc_request *r)
{
    const Airlock__V1__SignalProcessRequest *in = (const void *)r->msg;
    if (!check_pid(r, in->pid))
        return;
    int number = gw_signal_number(in->signal);
    if (!number) {
        grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT,
                  *in->signal ? "signal: \"%.40s\" is not one of " GW_SIGNAL_NAMES
                              : "signal: required, e.g. \"TERM\"%.0s",
                  in->signal);
        return;
    }
    Airlock__Vmhost__V1__SignalProcessRequest req = AIRLOCK__VMHOST__V1__SIGNAL_PROCESS_REQUEST__INIT;
    req.sandbox_id = in->id;
    req.pid = in->pid;
    req.signal = number;
    grpc_vmhost_call_empty(r, in->id, "signalling a process", VMHOST_METHOD("SignalProcess"),
                           &req.base);
}
