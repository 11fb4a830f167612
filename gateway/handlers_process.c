/* Background processes: start (vmhost StartProcess), list, re-attach to
 * the output (AttachProcess relayed as SSE), stdin and signals. Like exec,
 * these go straight to the sandbox's vmhost. */
#include <stdlib.h>
#include <string.h>

#include "exec_events.h"
#include "exec_request.h"
#include "reply.h"
#include "route_handlers.h"
#include "vmhost_names.h"

/* argv as "cmd" (strings), or "cmd_b64" when some argument is not UTF-8. */
static void put_cmd(json_t *obj, const ProtobufCBinaryData *argv, size_t argc)
{
    json_t *text = json_array();
    for (size_t i = 0; i < argc && text; i++) {
        json_t *s = reply_utf8_string(argv[i].data, argv[i].len);
        if (!s) {
            json_decref(text);
            text = NULL;
        } else {
            json_array_append_new(text, s);
        }
    }
    if (text) {
        json_object_set_new(obj, "cmd", text);
        return;
    }
    json_t *b64 = json_array();
    for (size_t i = 0; i < argc; i++)
        json_array_append_new(b64, reply_base64(argv[i].data, argv[i].len));
    json_object_set_new(obj, "cmd_b64", b64);
}

static json_t *process_json(const Airlock__Guest__V1__ProcessInfo *p)
{
    char started[40];
    reply_rfc3339(p->started_unix_ms, started, sizeof(started));
    json_t *j = json_pack("{s:i,s:b,s:b,s:s}", "pid", (json_int_t)p->pid, "running", p->running,
                          "tty", p->pty, "started_at", started);
    put_cmd(j, p->argv, p->n_argv);
    if (!p->running) {
        json_object_set_new(j, "exit_code", json_integer(p->exit_code));
        json_object_set_new(j, "signal", json_integer(p->signal));
    }
    return j;
}

/* The {pid} path segment as a process id; 0 after answering 400. */
static int32_t path_pid(struct gw_request *r, enum MHD_Result *rc)
{
    char *end;
    long pid = strtol(r->path_pid, &end, 10);
    if (*end || pid <= 0 || pid > INT32_MAX) {
        *rc = reply_error(r, 400, "invalid_argument", "pid: \"%.40s\" is not a process id",
                          r->path_pid);
        return 0;
    }
    return (int32_t)pid;
}

/* The {pid} segment and the JSON body (fields) of a request to a
 * process; NULL after answering 400. */
static json_t *pid_body(struct gw_request *r, const struct json_field *fields, size_t n_fields,
                        int32_t *pid, enum MHD_Result *rc)
{
    *pid = path_pid(r, rc);
    return *pid ? gw_json_body(r, fields, n_fields, rc) : NULL;
}

enum MHD_Result handle_process_start(struct gw_request *r)
{
    struct exec_request in;
    enum MHD_Result rc = MHD_NO;
    Airlock__Scheduler__V1__Sandbox *sb;
    Airlock__Guest__V1__ProcessInfo *info = NULL;
    char *details = NULL;
    struct rpc_channel *ch =
        gw_exec_target(r, EXEC_BACKGROUND, "starting a process", &in, &sb, &rc);
    if (!ch)
        goto out;
    grpc_status_code st = rpc_unary(ch, VMHOST_METHOD("StartProcess"), &in.req.base,
                                    &airlock__guest__v1__process_info__descriptor,
                                    (ProtobufCMessage **)&info, &details, GW_SCHEDULER_TIMEOUT_MS);
    rc = st == GRPC_STATUS_OK ? reply_json(r, 201, process_json(info))
                              : reply_grpc_error(r, st, details);
out:
    free(details);
    if (info)
        protobuf_c_message_free_unpacked(&info->base, NULL);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    exec_request_free(&in);
    return rc;
}

/* The sandbox's processes; NULL after answering. */
static Airlock__Vmhost__V1__ListProcessesResponse *
list_processes(struct gw_request *r, struct rpc_channel *ch, const char *sandbox_id,
               enum MHD_Result *rc)
{
    Airlock__Vmhost__V1__ListProcessesRequest req =
        AIRLOCK__VMHOST__V1__LIST_PROCESSES_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
    Airlock__Vmhost__V1__ListProcessesResponse *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(ch, VMHOST_METHOD("ListProcesses"), &req.base,
                                    &airlock__vmhost__v1__list_processes_response__descriptor,
                                    (ProtobufCMessage **)&resp, &details, GW_SCHEDULER_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        *rc = reply_grpc_error(r, st, details);
    free(details);
    return resp;
}

enum MHD_Result handle_process_list(struct gw_request *r)
{
    enum MHD_Result rc = MHD_NO;
    Airlock__Scheduler__V1__Sandbox *sb = gw_sandbox_lookup(r, &rc);
    if (!sb)
        return rc;
    struct rpc_channel *ch = gw_sandbox_vmhost(r, sb, "listing processes", &rc);
    Airlock__Vmhost__V1__ListProcessesResponse *resp = ch ? list_processes(r, ch, sb->id, &rc) : NULL;
    if (resp) {
        json_t *list = json_array();
        for (size_t i = 0; i < resp->n_processes; i++)
            json_array_append_new(list, process_json(resp->processes[i]));
        rc = reply_json(r, 200, json_pack("{s:o}", "processes", list));
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

/* Whether the sandbox has (or had) process pid; answers 404 when not. */
static bool process_known(struct gw_request *r, struct rpc_channel *ch, const char *sandbox_id,
                          int32_t pid, enum MHD_Result *rc)
{
    Airlock__Vmhost__V1__ListProcessesResponse *resp = list_processes(r, ch, sandbox_id, rc);
    if (!resp)
        return false;
    bool found = false;
    for (size_t i = 0; i < resp->n_processes && !found; i++)
        found = resp->processes[i]->pid == pid;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    if (!found)
        *rc = reply_error(r, 404, "not_found", "sandbox %s has no background process %d",
                          sandbox_id, pid);
    return found;
}

enum MHD_Result handle_process_output(struct gw_request *r)
{
    enum MHD_Result rc = MHD_NO;
    int32_t pid = path_pid(r, &rc);
    if (!pid)
        return rc;
    Airlock__Scheduler__V1__Sandbox *sb = gw_sandbox_lookup(r, &rc);
    if (!sb)
        return rc;
    struct rpc_channel *ch = gw_sandbox_vmhost(r, sb, "attaching to a process", &rc);
    /* Checked first: the stream itself answers only with the process's
     * first output, which a quiet process may never produce. */
    if (!ch || !process_known(r, ch, sb->id, pid, &rc))
        goto out;
    struct rpc_stream *s = rpc_stream_open(ch, VMHOST_METHOD("AttachProcess"), 0);
    if (!s) {
        rc = reply_error(r, 500, "internal", "out of memory");
        goto out;
    }
    Airlock__Vmhost__V1__AttachProcessRequest req = AIRLOCK__VMHOST__V1__ATTACH_PROCESS_REQUEST__INIT;
    req.sandbox_id = sb->id;
    req.pid = pid;
    req.follow = true;
    rpc_stream_send(s, &req.base);
    rpc_stream_close_send(s);
    rc = exec_events_reply_sse(r, s, NULL);
out:
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

enum MHD_Result handle_process_stdin(struct gw_request *r)
{
    static const struct json_field fields[] = {
        { "data", JF_STRING }, { "data_b64", JF_STRING }, { "eof", JF_BOOL }
    };
    enum MHD_Result rc = MHD_NO;
    int32_t pid;
    json_t *body = pid_body(r, fields, sizeof(fields) / sizeof(*fields), &pid, &rc);
    if (!body)
        return rc;
    json_t *data = json_object_get(body, "data");
    json_t *data_b64 = json_object_get(body, "data_b64");
    bool eof = json_is_true(json_object_get(body, "eof"));
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct airlock_error e;
    if (data && data_b64) {
        rc = reply_error(r, 400, "invalid_argument", "data_b64: not together with \"data\"");
        goto out;
    }
    if (!data && !data_b64 && !eof) {
        rc = reply_error(r, 400, "invalid_argument", "data: required unless \"eof\" is true");
        goto out;
    }
    if (data_b64 && json_input_base64(json_string_value(data_b64), &bytes, &len, &e) < 0) {
        airlock_error_prefix(&e, "data_b64: ");
        rc = reply_airlock_error(r, &e);
        goto out;
    }
    Airlock__Vmhost__V1__ProcessStdinRequest req = AIRLOCK__VMHOST__V1__PROCESS_STDIN_REQUEST__INIT;
    req.pid = pid;
    req.data.data = data ? (uint8_t *)json_string_value(data) : bytes;
    req.data.len = data ? json_string_length(data) : len;
    req.eof = eof;
    rc = gw_vmhost_call_no_content(r, "writing to a process", VMHOST_METHOD("WriteProcessStdin"),
                                   &req.base, &req.sandbox_id);
out:
    free(bytes);
    json_decref(body);
    return rc;
}

enum MHD_Result handle_process_signal(struct gw_request *r)
{
    static const struct json_field fields[] = { { "signal", JF_STRING } };
    enum MHD_Result rc = MHD_NO;
    int32_t pid;
    json_t *body = pid_body(r, fields, sizeof(fields) / sizeof(*fields), &pid, &rc);
    if (!body)
        return rc;
    const char *name = json_input_string(body, "signal", NULL);
    int number = name ? gw_signal_number(name) : 0;
    if (!name) {
        json_decref(body);
        return reply_error(r, 400, "invalid_argument", "signal: required, e.g. \"TERM\"");
    }
    if (!number) {
        rc = reply_error(r, 400, "invalid_argument",
                         "signal: \"%.40s\" is not one of " GW_SIGNAL_NAMES,
                         name);
        json_decref(body);
        return rc;
    }
    Airlock__Vmhost__V1__SignalProcessRequest req = AIRLOCK__VMHOST__V1__SIGNAL_PROCESS_REQUEST__INIT;
    req.pid = pid;
    req.signal = number;
    rc = gw_vmhost_call_no_content(r, "signalling a process", VMHOST_METHOD("SignalProcess"),
                                   &req.base, &req.sandbox_id);
    json_decref(body);
    return rc;
}

enum MHD_Result handle_process_resize(struct gw_request *r)
{
    static const struct json_field fields[] = { { "rows", JF_UINT }, { "cols", JF_UINT } };
    enum MHD_Result rc = MHD_NO;
    int32_t pid;
    json_t *body = pid_body(r, fields, sizeof(fields) / sizeof(*fields), &pid, &rc);
    if (!body)
        return rc;
    uint64_t rows = 0, cols = 0;
    struct airlock_error e;
    if (json_input_uint(body, "rows", 65535, 0, &rows, &e) < 0 ||
        json_input_uint(body, "cols", 65535, 0, &cols, &e) < 0) {
        rc = reply_airlock_error(r, &e);
    } else if (rows == 0 || cols == 0) {
        rc = reply_error(r, 400, "invalid_argument", "%s: required, 1..65535",
                         rows == 0 ? "rows" : "cols");
    } else {
        Airlock__Vmhost__V1__ResizeProcessRequest req =
            AIRLOCK__VMHOST__V1__RESIZE_PROCESS_REQUEST__INIT;
        req.pid = pid;
        req.rows = (uint32_t)rows;
        req.cols = (uint32_t)cols;
        rc = gw_vmhost_call_no_content(r, "resizing a process", VMHOST_METHOD("ResizeProcess"),
                                       &req.base, &req.sandbox_id);
    }
    json_decref(body);
    return rc;
}
