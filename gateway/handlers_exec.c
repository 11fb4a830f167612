/* POST /v1/sandboxes/{id}/exec: runs a command through the sandbox's
 * vmhost (gRPC Exec, directly — output bytes never pass the scheduler) and
 * answers either one JSON result or, with Accept: text/event-stream, SSE
 * events stdout / stderr / exit as the output is produced. */
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "json_input.h"
#include "reply.h"
#include "vmhost.pb-c.h"

#define EXEC_DEFAULT_TIMEOUT_S 60
#define EXEC_MAX_TIMEOUT_S 86400
/* JSON mode keeps at most this much of each stream (SSE has no limit). */
#define EXEC_JSON_OUTPUT_LIMIT (16u << 20)

typedef Airlock__Vmhost__V1__ExecEvent ExecEvent;

/* The vmhost ExecRequest and everything its pointers point into. */
struct exec_input {
    json_t *body;
    json_t *env;             /* sandbox env overlaid with the request's */
    Airlock__Vmhost__V1__ExecRequest req;
    ProtobufCBinaryData *argv;
    Airlock__Vmhost__V1__ExecRequest__EnvEntry *entries;
    Airlock__Vmhost__V1__ExecRequest__EnvEntry **entry_ptrs;
    uint64_t timeout_s;
};

static void exec_input_free(struct exec_input *in)
{
    json_decref(in->body);
    json_decref(in->env);
    free(in->argv);
    free(in->entries);
    free(in->entry_ptrs);
}

static int exec_input_parse(struct gw_request *r, struct exec_input *in, char *err, size_t errlen)
{
    static const struct json_field fields[] = {
        { "cmd", JF_STRING_ARRAY }, { "env", JF_STRING_MAP }, { "cwd", JF_STRING },
        { "stdin", JF_STRING },     { "timeout_s", JF_UINT },
    };
    memset(in, 0, sizeof(*in));
    if (json_input_parse(r->body.data, r->body.len, fields, sizeof(fields) / sizeof(*fields),
                         &in->body, err, errlen) < 0)
        return -1;
    json_t *cmd = json_object_get(in->body, "cmd");
    if (!cmd || json_array_size(cmd) == 0) {
        snprintf(err, errlen, "cmd: required, a non-empty array of strings");
        return -1;
    }
    if (json_input_uint(in->body, "timeout_s", EXEC_MAX_TIMEOUT_S, EXEC_DEFAULT_TIMEOUT_S,
                        &in->timeout_s, err, errlen) < 0)
        return -1;
    return 0;
}

/* Fills in->req for sandbox sb. */
static int exec_input_build(struct exec_input *in, const Airlock__Scheduler__V1__Sandbox *sb)
{
    Airlock__Vmhost__V1__ExecRequest *req = &in->req;
    airlock__vmhost__v1__exec_request__init(req);
    req->sandbox_id = sb->id;
    json_t *cmd = json_object_get(in->body, "cmd");
    size_t argc = json_array_size(cmd);
    in->argv = calloc(argc, sizeof(*in->argv));
    in->env = json_loads(sb->env_json, 0, NULL);
    if (!in->env)
        in->env = json_object();
    json_t *req_env = json_object_get(in->body, "env");
    if (req_env)
        json_object_update(in->env, req_env);
    size_t envc = json_object_size(in->env);
    in->entries = calloc(envc + 1, sizeof(*in->entries));
    in->entry_ptrs = calloc(envc + 1, sizeof(*in->entry_ptrs));
    if (!in->argv || !in->entries || !in->entry_ptrs)
        return -1;
    for (size_t i = 0; i < argc; i++) {
        json_t *a = json_array_get(cmd, i);
        in->argv[i].data = (uint8_t *)json_string_value(a);
        in->argv[i].len = json_string_length(a);
    }
    req->argv = in->argv;
    req->n_argv = argc;
    const char *key;
    json_t *v;
    size_t n = 0;
    json_object_foreach(in->env, key, v)
    {
        airlock__vmhost__v1__exec_request__env_entry__init(&in->entries[n]);
        in->entries[n].key = (char *)key;
        in->entries[n].value = (char *)json_string_value(v);
        in->entry_ptrs[n] = &in->entries[n];
        n++;
    }
    req->env = in->entry_ptrs;
    req->n_env = n;
    const char *cwd = json_input_string(in->body, "cwd", NULL);
    if (cwd) {
        req->cwd.data = (uint8_t *)cwd;
        req->cwd.len = strlen(cwd);
    }
    json_t *stdin_text = json_object_get(in->body, "stdin");
    if (stdin_text) {
        req->stdin.data = (uint8_t *)json_string_value(stdin_text);
        req->stdin.len = json_string_length(stdin_text);
    }
    req->timeout_ms = (uint32_t)(in->timeout_s * 1000);
    return 0;
}

/* {"data":"…"} for UTF-8 bytes, {"data_b64":"…"} otherwise. */
static json_t *output_json(const ProtobufCBinaryData *d)
{
    json_t *s = reply_utf8_string(d->data, d->len);
    if (s)
        return json_pack("{s:o}", "data", s);
    return json_pack("{s:o}", "data_b64", reply_base64(d->data, d->len));
}

static json_t *exit_json(const Airlock__Vmhost__V1__ExecExit *x)
{
    return json_pack("{s:i,s:i,s:b}", "exit_code", (json_int_t)x->exit_code, "signal",
                     (json_int_t)x->signal, "timed_out", x->timed_out);
}

/* ---- SSE mode ---- */

struct exec_sse {
    struct rpc_stream *stream;   /* NULL once finished */
    struct strbuf pending;       /* formatted events not yet handed to MHD */
    size_t off;
    char request_id[40];
};

static void sse_append(struct exec_sse *x, const char *event, json_t *data)
{
    char *text = data ? json_dumps(data, JSON_COMPACT) : NULL;
    json_decref(data);
    strbuf_appendf(&x->pending, "event: %s\ndata: %s\n\n", event, text ? text : "{}");
    free(text);
}

/* Appends the SSE form of ev; true for the last event (exit). */
static bool sse_format(struct exec_sse *x, const ExecEvent *ev)
{
    switch (ev->event_case) {
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT:
        sse_append(x, ev->output->fd == 2 ? "stderr" : "stdout", output_json(&ev->output->data));
        return false;
    case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT:
        sse_append(x, "exit", exit_json(ev->exit));
        return true;
    default:
        return false; /* started: nothing a REST client needs */
    }
}

/* Ends the gRPC call; a stream that stopped before its exit event becomes
 * a final "error" event naming why. */
static void sse_finish(struct exec_sse *x, bool exited)
{
    char *details = NULL;
    grpc_status_code st = rpc_stream_finish(x->stream, &details);
    x->stream = NULL;
    if (!exited) {
        const char *code;
        reply_http_status(st == GRPC_STATUS_OK ? GRPC_STATUS_UNAVAILABLE : st, &code);
        sse_append(x, "error",
                   json_pack("{s:{s:s,s:s}}", "error", "code", code, "message",
                             details && *details ? details : "the exec stream ended without an exit event"));
    }
    free(details);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct exec_sse *x = cls;
    while (x->off >= x->pending.len) {
        if (!x->stream)
            return MHD_CONTENT_READER_END_OF_STREAM;
        x->pending.len = 0;
        x->off = 0;
        ExecEvent *ev = NULL;
        if (rpc_stream_recv(x->stream, &airlock__vmhost__v1__exec_event__descriptor,
                            (ProtobufCMessage **)&ev) != 1) {
            sse_finish(x, false);
            continue;
        }
        bool last = sse_format(x, ev);
        protobuf_c_message_free_unpacked(&ev->base, NULL);
        if (last)
            sse_finish(x, true);
        if (strbuf_failed(&x->pending))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = x->pending.len - x->off;
    if (n > max)
        n = max;
    memcpy(buf, x->pending.data + x->off, n);
    x->off += n;
    return (ssize_t)n;
}

static void sse_free(void *cls)
{
    struct exec_sse *x = cls;
    if (x->stream) {
        /* The client went away: the cancel reaches vmhost, which kills
         * the command's process group. */
        rpc_stream_cancel(x->stream);
        rpc_stream_finish(x->stream, NULL);
    }
    strbuf_free(&x->pending);
    free(x);
}

static enum MHD_Result exec_sse(struct gw_request *r, struct rpc_stream *s)
{
    /* The first event (started) decides the status: an exec that cannot
     * start (no such program, VM gone) is a plain JSON error, not a 200. */
    ExecEvent *first = NULL;
    if (rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor,
                        (ProtobufCMessage **)&first) != 1) {
        char *details = NULL;
        grpc_status_code st = rpc_stream_finish(s, &details);
        enum MHD_Result rc = reply_grpc_error(r, st == GRPC_STATUS_OK ? GRPC_STATUS_INTERNAL : st,
                                              details);
        free(details);
        return rc;
    }
    struct exec_sse *x = calloc(1, sizeof(*x));
    if (!x) {
        protobuf_c_message_free_unpacked(&first->base, NULL);
        rpc_stream_cancel(s);
        rpc_stream_finish(s, NULL);
        return reply_error(r, 500, "internal", "out of memory");
    }
    x->stream = s;
    if (sse_format(x, first))
        sse_finish(x, true);
    protobuf_c_message_free_unpacked(&first->base, NULL);
    snprintf(x->request_id, sizeof(x->request_id), "%s", r->id);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, sse_read, x, sse_free);
    if (!resp) {
        sse_free(x);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/event-stream");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    return reply_queue(r, 200, resp);
}

/* ---- JSON mode ---- */

struct exec_output {
    struct strbuf bytes;
    bool truncated;
};

static void output_add(struct exec_output *o, const ProtobufCBinaryData *d)
{
    size_t room = EXEC_JSON_OUTPUT_LIMIT - o->bytes.len;
    if (d->len > room)
        o->truncated = true;
    strbuf_append_n(&o->bytes, (const char *)d->data, d->len > room ? room : d->len);
}

static void output_put(json_t *result, const char *name, const struct exec_output *o)
{
    json_t *s = reply_utf8_string(o->bytes.data ? o->bytes.data : "", o->bytes.len);
    char b64_name[32];
    snprintf(b64_name, sizeof(b64_name), "%s_b64", name);
    if (s)
        json_object_set_new(result, name, s);
    else
        json_object_set_new(result, b64_name, reply_base64(o->bytes.data, o->bytes.len));
    if (o->truncated)
        json_object_set_new(result, "truncated", json_true());
}

static enum MHD_Result exec_json(struct gw_request *r, struct rpc_stream *s)
{
    struct exec_output out = { 0 }, err = { 0 };
    json_t *result = NULL;
    ExecEvent *ev = NULL;
    while (rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor,
                           (ProtobufCMessage **)&ev) == 1) {
        if (ev->event_case == AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT)
            output_add(ev->output->fd == 2 ? &err : &out, &ev->output->data);
        else if (ev->event_case == AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT)
            result = exit_json(ev->exit);
        protobuf_c_message_free_unpacked(&ev->base, NULL);
    }
    char *details = NULL;
    grpc_status_code st = rpc_stream_finish(s, &details);
    enum MHD_Result rc;
    if (st != GRPC_STATUS_OK || !result || strbuf_failed(&out.bytes) || strbuf_failed(&err.bytes)) {
        json_decref(result);
        rc = st != GRPC_STATUS_OK ? reply_grpc_error(r, st, details)
                                  : reply_error(r, 502, "internal", "exec ended without an exit status");
    } else {
        output_put(result, "stdout", &out);
        output_put(result, "stderr", &err);
        rc = reply_json(r, 200, result);
    }
    free(details);
    strbuf_free(&out.bytes);
    strbuf_free(&err.bytes);
    return rc;
}

static bool wants_event_stream(struct gw_request *r)
{
    const char *accept = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Accept");
    return accept && strstr(accept, "text/event-stream");
}

enum MHD_Result handle_exec(struct gw_request *r)
{
    struct exec_input in;
    char err[512];
    enum MHD_Result rc = MHD_NO;
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    if (exec_input_parse(r, &in, err, sizeof(err)) < 0) {
        rc = reply_error(r, 400, "invalid_argument", "%s", err);
        goto out;
    }
    sb = gw_sandbox_lookup(r, &rc);
    if (!sb)
        goto out;
    struct rpc_channel *ch = gw_sandbox_vmhost(r, sb, "exec", &rc);
    if (!ch)
        goto out;
    if (exec_input_build(&in, sb) < 0) {
        rc = reply_error(r, 500, "internal", "out of memory");
        goto out;
    }
    /* The command's own timeout is enforced by vmhost; the call's deadline
     * is a backstop a little later. */
    int deadline_ms = in.timeout_s ? (int)(in.timeout_s + 30) * 1000 : 0;
    struct rpc_stream *s = rpc_stream_open(ch, VMHOST_METHOD("Exec"), deadline_ms);
    if (!s) {
        rc = reply_error(r, 500, "internal", "out of memory");
        goto out;
    }
    rpc_stream_send(s, &in.req.base);
    rpc_stream_close_send(s);
    rc = wants_event_stream(r) ? exec_sse(r, s) : exec_json(r, s);
out:
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    exec_input_free(&in);
    return rc;
}
