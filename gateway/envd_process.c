/* envd's process.Process on airlock's background processes: Start is
 * vmhost StartProcess (the process outlives the call, as envd's do) and
 * then AttachProcess relayed as the call's event stream; Connect
 * re-attaches by pid or tag; List, SendInput, CloseStdin, SendSignal and
 * Update are ListProcesses, WriteProcessStdin, SignalProcess and
 * ResizeProcess. E2B's pids are the guest's. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "connect_protocol.h"
#include "envd_routes.h"
#include "envd_stream.h"
#include "exec_request.h"
#include "reply.h"
#include "rpc_err.h"
#include "sandbox_access.h"
#include "vmhost.pb-c.h"

typedef Airlock__Guest__V1__ProcessInfo ProcessInfo;
typedef Airlock__Vmhost__V1__ListProcessesResponse ProcessList;

#define ENVD_TAG_MAX 256

static const struct json_field selector_field[] = { { "process", JF_OBJECT } };

static ProcessList *list_processes(struct envd_call *c)
{
    Airlock__Vmhost__V1__ListProcessesRequest req =
        AIRLOCK__VMHOST__V1__LIST_PROCESSES_REQUEST__INIT;
    req.sandbox_id = c->sb->id;
    ProcessList *list = NULL;
    gw_unary(c->ch, VMHOST_METHOD("ListProcesses"), &req.base,
             &airlock__vmhost__v1__list_processes_response__descriptor,
             (ProtobufCMessage **)&list, GW_SCHEDULER_TIMEOUT_MS, &c->e);
    return list;
}

/* The process a ProcessSelector ({"pid":N} or {"tag":"…"}) names: its pid
 * and whether it runs on a PTY. A tag names the newest running process
 * with it; a pid a running process, or with any_state one that exited
 * too (Connect replays its output and end). -1 with c->e (not_found
 * naming it) otherwise. */
static int select_process(struct envd_call *c, json_t *selector, bool any_state, int32_t *pid,
                          bool *pty)
{
    static const struct json_field fields[] = { { "pid", JF_UINT }, { "tag", JF_STRING } };
    if (!json_is_object(selector))
        return airlock_error_set(&c->e, AIRLOCK_ERR_INVALID, "process: required, {pid} or {tag}");
    if (json_input_check(selector, fields, 2, &c->e) < 0)
        return airlock_error_prefix(&c->e, "process: ");
    json_t *want_pid = json_object_get(selector, "pid");
    const char *tag = json_string_value(json_object_get(selector, "tag"));
    if (!want_pid == !tag)
        return airlock_error_set(&c->e, AIRLOCK_ERR_INVALID,
                                 "process: one of pid and tag is required");
    ProcessList *list = list_processes(c);
    if (!list)
        return -1;
    const ProcessInfo *found = NULL;
    for (size_t i = 0; i < list->n_processes; i++) {
        const ProcessInfo *p = list->processes[i];
        if ((p->running || (any_state && want_pid)) &&
            (want_pid ? p->pid == json_integer_value(want_pid) : strcmp(p->tag, tag) == 0))
            found = p; /* oldest first: the last match is the newest */
    }
    int rc = 0;
    if (found) {
        *pid = found->pid;
        *pty = found->pty;
    } else if (want_pid) {
        rc = airlock_error_set(&c->e, AIRLOCK_ERR_NOT_FOUND, "%s with pid %lld not found",
                               any_state ? "process" : "running process",
                               (long long)json_integer_value(want_pid));
    } else {
        rc = airlock_error_set(&c->e, AIRLOCK_ERR_NOT_FOUND, "running process with tag %.256s not found",
                               tag);
    }
    protobuf_c_message_free_unpacked(&list->base, NULL);
    return rc;
}

/* ---- event streams (Start, Connect) ---- */

static const struct envd_stream_kind process_kind;

/* Go's os.ProcessState wording, which envd reports: "exit status 1",
 * "signal: killed". */
static json_t *end_event(const Airlock__Vmhost__V1__ExecExit *x)
{
    char status[64];
    if (x->signal) {
        const char *name = strsignal(x->signal);
        snprintf(status, sizeof(status), "signal: %c%s", tolower((unsigned char)name[0]), name + 1);
    } else {
        snprintf(status, sizeof(status), "exit status %d", x->exit_code);
    }
    json_t *end = json_pack("{s:i,s:b,s:s}", "exitCode", x->signal ? -1 : x->exit_code, "exited",
                            x->signal == 0, "status", status);
    if (x->timed_out)
        json_object_set_new(end, "error", json_string("the process ran past its timeout"));
    return envd_event(&process_kind, "end", end);
}

/* owner: whether the process has a PTY (its output is "pty" data). */
static bool append_event(struct strbuf *out, const ProtobufCMessage *msg, void *owner)
{
    const Airlock__Vmhost__V1__ExecEvent *ev = (const void *)msg;
    const bool *pty = owner;
    switch (ev->event_case) {
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT: {
        const char *fd = *pty ? "pty" : ev->output->fd == 2 ? "stderr" : "stdout";
        json_t *data = json_pack("{s:o}", fd,
                                 reply_base64(ev->output->data.data, ev->output->data.len));
        connect_envelope_json(out, envd_event(&process_kind, "data", data));
        return false;
    }
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT:
        connect_envelope_json(out, end_event(ev->exit));
        return true;
    default:
        return false;
    }
}

static const struct envd_stream_kind process_kind = {
    .desc = &airlock__vmhost__v1__exec_event__descriptor,
    .in_event_field = true,
    .append = append_event,
    .stopping = "the gateway is shutting down; the process goes on: Connect to it again",
    .unfinished = "the process's stream ended without its end event",
    .release = free,
};

/* Answers the call with process pid's events: start{pid}, then its
 * output and end as AttachProcess relays them (the output ring from its
 * start, so a fast process loses nothing). */
static enum MHD_Result reply_events(struct gw_request *r, struct envd_call *c, int32_t pid, bool pty)
{
    bool *owner = malloc(sizeof(*owner));
    struct rpc_stream *s = owner ? rpc_stream_open(c->ch, VMHOST_METHOD("AttachProcess"), 0) : NULL;
    if (!s) {
        free(owner);
        airlock_error_set(&c->e, AIRLOCK_ERR_INTERNAL, "out of memory");
        return envd_call_end(r, c, NULL);
    }
    *owner = pty;
    Airlock__Vmhost__V1__AttachProcessRequest req = AIRLOCK__VMHOST__V1__ATTACH_PROCESS_REQUEST__INIT;
    req.sandbox_id = c->sb->id;
    req.pid = pid;
    req.follow = true;
    rpc_stream_send(s, &req.base);
    rpc_stream_close_send(s);
    envd_call_free(c);
    return envd_stream_reply(r, s, &process_kind, envd_event(&process_kind, "start", json_pack("{s:i}", "pid", pid)),
                             owner);
}

/* {"cmd":[cmd,args…],"env":…,"cwd":…,"tty":…,"rows":…,"cols":…,
 * "stdin_open":…}: a StartRequest as the REST body exec_request.c
 * checks and builds, so both APIs start processes alike. */
static json_t *start_as_exec_body(json_t *msg, struct airlock_error *e)
{
    static const struct json_field config_fields[] = {
        { "cmd", JF_STRING }, { "args", JF_STRING_ARRAY }, { "envs", JF_STRING_MAP },
        { "cwd", JF_STRING },
    };
    static const struct json_field pty_fields[] = { { "size", JF_OBJECT } };
    static const struct json_field size_fields[] = { { "cols", JF_UINT }, { "rows", JF_UINT } };
    json_t *config = json_object_get(msg, "process");
    json_t *pty = json_object_get(msg, "pty");
    json_t *size = pty ? json_object_get(pty, "size") : NULL;
    const char *cmd;
    if (!config) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "process: required, {cmd, args, envs, cwd}");
        return NULL;
    }
    if (json_input_check(config, config_fields, 4, e) < 0 ||
        envd_string(config, "cmd", true, &cmd, e) < 0) {
        airlock_error_prefix(e, "process.");
        return NULL;
    }
    if (pty && (json_input_check(pty, pty_fields, 1, e) < 0 ||
                (size && json_input_check(size, size_fields, 2, e) < 0))) {
        airlock_error_prefix(e, "pty: ");
        return NULL;
    }
    json_t *argv = json_pack("[s]", cmd);
    if (json_object_get(config, "args"))
        json_array_extend(argv, json_object_get(config, "args"));
    json_t *body = json_pack("{s:o,s:b}", "cmd", argv, "tty", pty != NULL);
    if (json_object_get(config, "envs"))
        json_object_set(body, "env", json_object_get(config, "envs"));
    if (json_object_get(config, "cwd"))
        json_object_set(body, "cwd", json_object_get(config, "cwd"));
    if (size && json_object_get(size, "rows"))
        json_object_set(body, "rows", json_object_get(size, "rows"));
    if (size && json_object_get(size, "cols"))
        json_object_set(body, "cols", json_object_get(size, "cols"));
    /* envd keeps stdin open unless told not to; a PTY always takes input. */
    json_t *stdin_flag = json_object_get(msg, "stdin");
    json_object_set_new(body, "stdin_open", json_boolean(pty || !stdin_flag ||
                                                         json_is_true(stdin_flag)));
    return body;
}

enum MHD_Result envd_process_start(struct gw_request *r)
{
    static const struct json_field fields[] = {
        { "process", JF_OBJECT }, { "pty", JF_OBJECT }, { "tag", JF_STRING }, { "stdin", JF_BOOL },
    };
    struct envd_call c;
    struct exec_request in = { 0 };
    ProcessInfo *info = NULL;
    enum MHD_Result rc;
    if (envd_call_begin(r, "starting a process", fields, 4, &c) < 0)
        goto fail;
    const char *tag = json_string_value(json_object_get(c.msg, "tag"));
    if (tag && strlen(tag) > ENVD_TAG_MAX) {
        airlock_error_set(&c.e, AIRLOCK_ERR_INVALID, "tag: at most %d bytes", ENVD_TAG_MAX);
        goto fail;
    }
    json_t *body = start_as_exec_body(c.msg, &c.e);
    if (!body || exec_request_from_json(&in, body, EXEC_BACKGROUND, &c.e) < 0)
        goto fail;
    if (exec_request_build(&in, c.sb) < 0) {
        airlock_error_set(&c.e, AIRLOCK_ERR_INTERNAL, "out of memory");
        goto fail;
    }
    char user[64];
    envd_request_user(r, user, sizeof(user));
    in.req.user = user;
    in.req.tag = (char *)(tag ? tag : "");
    if (gw_unary(c.ch, VMHOST_METHOD("StartProcess"), &in.req.base,
                 &airlock__guest__v1__process_info__descriptor, (ProtobufCMessage **)&info,
                 GW_SCHEDULER_TIMEOUT_MS, &c.e) < 0)
        goto fail;
    rc = reply_events(r, &c, info->pid, info->pty);
    protobuf_c_message_free_unpacked(&info->base, NULL);
    exec_request_free(&in);
    return rc;
fail:
    exec_request_free(&in);
    return envd_call_end(r, &c, NULL);
}

enum MHD_Result envd_process_connect(struct gw_request *r)
{
    struct envd_call c;
    int32_t pid;
    bool pty;
    if (envd_call_begin(r, "connecting to a process", selector_field, 1, &c) < 0 ||
        select_process(&c, json_object_get(c.msg, "process"), true, &pid, &pty) < 0)
        return envd_call_end(r, &c, NULL);
    return reply_events(r, &c, pid, pty);
}

/* An argument as a string (envd's are; one that is not UTF-8 shows
 * as ""). */
static json_t *arg_json(const ProcessInfo *p, size_t i)
{
    json_t *s = i < p->n_argv ? reply_utf8_string(p->argv[i].data, p->argv[i].len) : NULL;
    return s ? s : json_string("");
}

/* envd's ProcessInfo: argv as cmd + args (airlock keeps no env or cwd of
 * a process). */
static json_t *process_json(const ProcessInfo *p)
{
    json_t *args = json_array();
    for (size_t i = 1; i < p->n_argv; i++)
        json_array_append_new(args, arg_json(p, i));
    json_t *config = json_pack("{s:o,s:o,s:{}}", "cmd", arg_json(p, 0), "args", args, "envs");
    json_t *j = json_pack("{s:o,s:i}", "config", config, "pid", p->pid);
    if (*p->tag)
        json_object_set_new(j, "tag", json_string(p->tag));
    return j;
}

enum MHD_Result envd_process_list(struct gw_request *r)
{
    struct envd_call c;
    if (envd_call_begin(r, "listing processes", selector_field, 0, &c) < 0)
        return envd_call_end(r, &c, NULL);
    ProcessList *list = list_processes(&c);
    if (!list)
        return envd_call_end(r, &c, NULL);
    json_t *procs = json_array();
    for (size_t i = 0; i < list->n_processes; i++)
        if (list->processes[i]->running) /* envd lists the processes that run */
            json_array_append_new(procs, process_json(list->processes[i]));
    protobuf_c_message_free_unpacked(&list->base, NULL);
    return envd_call_end(r, &c, json_pack("{s:o}", "processes", procs));
}

/* Bytes or end of input for the selected process's stdin (or PTY). */
static int write_stdin(struct envd_call *c, int32_t pid, const uint8_t *data, size_t len, bool eof)
{
    Airlock__Vmhost__V1__ProcessStdinRequest req = AIRLOCK__VMHOST__V1__PROCESS_STDIN_REQUEST__INIT;
    req.sandbox_id = c->sb->id;
    req.pid = pid;
    req.data.data = (uint8_t *)data;
    req.data.len = len;
    req.eof = eof;
    return envd_vmhost_empty(c, VMHOST_METHOD("WriteProcessStdin"), &req.base);
}

enum MHD_Result envd_process_send_input(struct gw_request *r)
{
    static const struct json_field fields[] = { { "process", JF_OBJECT }, { "input", JF_OBJECT } };
    static const struct json_field input_fields[] = { { "stdin", JF_STRING }, { "pty", JF_STRING } };
    struct envd_call c;
    int32_t pid;
    bool pty;
    if (envd_call_begin(r, "sending input to a process", fields, 2, &c) < 0)
        return envd_call_end(r, &c, NULL);
    json_t *input = json_object_get(c.msg, "input");
    const char *b64 = NULL;
    if (!input || json_input_check(input, input_fields, 2, &c.e) < 0 ||
        !((b64 = json_string_value(json_object_get(input, "stdin"))) ||
          (b64 = json_string_value(json_object_get(input, "pty"))))) {
        if (!airlock_error_is_set(&c.e))
            airlock_error_set(&c.e, AIRLOCK_ERR_INVALID, "input: required, {stdin} or {pty}");
        return envd_call_end(r, &c, NULL);
    }
    uint8_t *bytes = NULL;
    size_t len = 0;
    json_t *ok = NULL;
    if (json_input_base64(b64, &bytes, &len, &c.e) < 0)
        airlock_error_prefix(&c.e, "input: ");
    else if (select_process(&c, json_object_get(c.msg, "process"), false, &pid, &pty) == 0 &&
             write_stdin(&c, pid, bytes, len, false) == 0)
        ok = json_object();
    free(bytes);
    return envd_call_end(r, &c, ok);
}

enum MHD_Result envd_process_close_stdin(struct gw_request *r)
{
    struct envd_call c;
    int32_t pid;
    bool pty;
    if (envd_call_begin(r, "closing a process's stdin", selector_field, 1, &c) < 0 ||
        select_process(&c, json_object_get(c.msg, "process"), false, &pid, &pty) < 0 ||
        write_stdin(&c, pid, NULL, 0, true) < 0)
        return envd_call_end(r, &c, NULL);
    return envd_call_end(r, &c, json_object());
}

/* envd's Signal enum: its name or number; SIGKILL and SIGTERM only. */
static int signal_number(json_t *v)
{
    const char *name = json_string_value(v);
    long n = name ? 0 : (long)json_integer_value(v);
    if (name && strcmp(name, "SIGNAL_SIGKILL") == 0)
        n = 9;
    else if (name && strcmp(name, "SIGNAL_SIGTERM") == 0)
        n = 15;
    return n == 9 || n == 15 ? (int)n : 0;
}

enum MHD_Result envd_process_send_signal(struct gw_request *r)
{
    struct envd_call c;
    int32_t pid;
    bool pty;
    /* Fields checked here: the signal may be a name or a number. */
    if (envd_call_begin(r, "signalling a process", NULL, 0, &c) < 0)
        return envd_call_end(r, &c, NULL);
    int number = signal_number(json_object_get(c.msg, "signal"));
    if (!number) {
        airlock_error_set(&c.e, AIRLOCK_ERR_INVALID,
                          "signal: required, SIGNAL_SIGKILL or SIGNAL_SIGTERM");
        return envd_call_end(r, &c, NULL);
    }
    if (select_process(&c, json_object_get(c.msg, "process"), false, &pid, &pty) < 0)
        return envd_call_end(r, &c, NULL);
    Airlock__Vmhost__V1__SignalProcessRequest req = AIRLOCK__VMHOST__V1__SIGNAL_PROCESS_REQUEST__INIT;
    req.sandbox_id = c.sb->id;
    req.pid = pid;
    req.signal = number;
    return envd_call_end(r, &c, envd_vmhost_empty(&c, VMHOST_METHOD("SignalProcess"), &req.base)
                                        ? NULL
                                        : json_object());
}

enum MHD_Result envd_process_update(struct gw_request *r)
{
    static const struct json_field fields[] = { { "process", JF_OBJECT }, { "pty", JF_OBJECT } };
    struct envd_call c;
    int32_t pid;
    bool pty;
    if (envd_call_begin(r, "resizing a process's terminal", fields, 2, &c) < 0 ||
        select_process(&c, json_object_get(c.msg, "process"), false, &pid, &pty) < 0)
        return envd_call_end(r, &c, NULL);
    json_t *size = json_object_get(json_object_get(c.msg, "pty"), "size");
    if (!size)
        return envd_call_end(r, &c, json_object()); /* nothing to change */
    uint64_t rows = 0, cols = 0;
    if (json_input_uint(size, "rows", 65535, 0, &rows, &c.e) < 0 ||
        json_input_uint(size, "cols", 65535, 0, &cols, &c.e) < 0)
        return envd_call_end(r, &c, NULL);
    if (!pty || !rows || !cols) {
        airlock_error_set(&c.e, AIRLOCK_ERR_INVALID,
                          !pty ? "process %d has no PTY to resize" : "pty.size: rows and cols "
                                                                     "are required, 1..65535",
                          pid);
        return envd_call_end(r, &c, NULL);
    }
    Airlock__Vmhost__V1__ResizeProcessRequest req = AIRLOCK__VMHOST__V1__RESIZE_PROCESS_REQUEST__INIT;
    req.sandbox_id = c.sb->id;
    req.pid = pid;
    req.rows = (uint32_t)rows;
    req.cols = (uint32_t)cols;
    return envd_call_end(r, &c, envd_vmhost_empty(&c, VMHOST_METHOD("ResizeProcess"), &req.base)
                                        ? NULL
                                        : json_object());
}
