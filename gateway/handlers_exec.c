/* POST /v1/sandboxes/{id}/exec: runs a command through the sandbox's
 * vmhost (gRPC Exec, directly — output bytes never pass the scheduler) and
 * answers either one JSON result or, with Accept: text/event-stream, SSE
 * events stdout / stderr / exit as the output is produced
 * (exec_events.c). */
#include <stdlib.h>
#include <string.h>

#include "exec_events.h"
#include "exec_request.h"
#include "reply.h"
#include "route_handlers.h"

/* JSON mode keeps at most this much of each stream (SSE has no limit). */
#define EXEC_JSON_OUTPUT_LIMIT (16u << 20)

typedef Airlock__Vmhost__V1__ExecEvent ExecEvent;

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
            result = exec_exit_json(ev->exit);
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

struct rpc_channel *gw_exec_target(struct gw_request *r, enum exec_kind kind, const char *what,
                                   struct exec_request *in, Airlock__Scheduler__V1__Sandbox **sb,
                                   enum MHD_Result *rc)
{
    struct airlock_error e;
    *sb = NULL;
    if (exec_request_parse(in, &r->body, kind, &e) < 0) {
        *rc = reply_airlock_error(r, &e);
        return NULL;
    }
    *sb = gw_sandbox_lookup(r, rc);
    struct rpc_channel *ch = *sb ? gw_sandbox_vmhost(r, *sb, what, rc) : NULL;
    if (ch && exec_request_build(in, *sb) < 0) {
        *rc = reply_error(r, 500, "internal", "out of memory");
        return NULL;
    }
    return ch;
}

enum MHD_Result handle_exec(struct gw_request *r)
{
    struct exec_request in;
    enum MHD_Result rc = MHD_NO;
    Airlock__Scheduler__V1__Sandbox *sb;
    struct exec_slot slot;
    struct airlock_error e;
    struct rpc_channel *ch = gw_exec_target(r, EXEC_FOREGROUND, "exec", &in, &sb, &rc);
    if (!ch)
        goto out;
    if (exec_slot_take(&r->gw->execs, r->key_id, &slot, &e) < 0) {
        rc = reply_airlock_error(r, &e);
        goto out;
    }
    /* The command's own timeout is enforced by vmhost; the call's deadline
     * is a backstop a little later. */
    int deadline_ms = in.timeout_s ? (int)(in.timeout_s + 30) * 1000 : 0;
    struct rpc_stream *s = rpc_stream_open(ch, VMHOST_METHOD("Exec"), deadline_ms);
    if (!s) {
        exec_slot_give(&slot);
        rc = reply_error(r, 500, "internal", "out of memory");
        goto out;
    }
    rpc_stream_send(s, &in.req.base);
    rpc_stream_close_send(s);
    if (wants_event_stream(r)) {
        rc = exec_events_reply_sse(r, s, &slot);
    } else {
        rc = exec_json(r, s);
        exec_slot_give(&slot);
    }
out:
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    exec_request_free(&in);
    return rc;
}
