/* Templates (docs/templates.md): POST /v1/templates builds one from the
 * spec in the body — with Accept: text/event-stream the build log as SSE
 * events `log` {"line":…} and a last `done` (the template) or `error`;
 * otherwise one 201 with the template once it is built. GET lists the
 * project's versions, GET/DELETE /v1/templates/{name} ("name" or
 * "name:version") show or delete. The scheduler does the work and scopes
 * every call to the key's project. */
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "route_handlers.h"
#include "rpc_err.h"
#include "sse.h"
#include "template_access.h"

typedef Airlock__Scheduler__V1__BuildTemplateEvent BuildEvent;

/* {"name","version","ref","cpus","memory_mb","node","created_at",
 * "build_ms","spec"} */
static json_t *template_json(const Airlock__Scheduler__V1__Template *t)
{
    char created[40], ref[200];
    reply_rfc3339(t->created_unix_ms, created, sizeof(created));
    snprintf(ref, sizeof(ref), "%s:%u", t->name, t->version);
    json_t *spec = json_loads(t->spec_json, 0, NULL);
    return json_pack("{s:s,s:i,s:s,s:i,s:i,s:s,s:s,s:i,s:o}", "name", t->name, "version",
                     (json_int_t)t->version, "ref", ref, "cpus", (json_int_t)t->cpus, "memory_mb",
                     (json_int_t)t->memory_mb, "node", t->node_id, "created_at", created,
                     "build_ms", (json_int_t)t->build_ms, "spec", spec ? spec : json_object());
}

/* The build call: the request is sent, the stream is the caller's. */
static struct rpc_stream *build_open(struct gw_request *r)
{
    struct gw_caller c = gw_request_caller(r);
    return gw_template_build_open(r->gw, &c, strbuf_str(&r->body));
}

/* The SSE form of a build. */
struct build_sse {
    struct rpc_stream *stream; /* NULL once finished */
    struct sse_buffer out;
};

/* Appends ev's event; true for the last one (done). */
static bool build_sse_format(struct build_sse *b, const BuildEvent *ev)
{
    if (ev->event_case == AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_EVENT__EVENT_LOG) {
        sse_append(&b->out, "log", json_pack("{s:s}", "line", ev->log));
        return false;
    }
    if (ev->event_case == AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_EVENT__EVENT_DONE) {
        sse_append(&b->out, "done", template_json(ev->done));
        return true;
    }
    return false;
}

/* Ends the call; one that stopped before done becomes an error event. */
static void build_sse_finish(struct build_sse *b, bool done)
{
    char *details = NULL;
    grpc_status_code st = rpc_stream_finish(b->stream, &details);
    b->stream = NULL;
    if (!done) {
        const char *code;
        reply_http_status(
            airlock_error_class_of(st == GRPC_STATUS_OK ? GRPC_STATUS_UNAVAILABLE : st), &code);
        sse_append(&b->out, "error",
                   json_pack("{s:{s:s,s:s}}", "error", "code", code, "message",
                             details && *details ? details : "the build ended without a result"));
    }
    free(details);
}

static ssize_t build_sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct build_sse *b = cls;
    while (sse_drained(&b->out)) {
        if (!b->stream)
            return MHD_CONTENT_READER_END_OF_STREAM;
        BuildEvent *ev = NULL;
        if (gw_template_build_next(b->stream, &ev) != 1) {
            build_sse_finish(b, false);
        } else {
            bool done = build_sse_format(b, ev);
            protobuf_c_message_free_unpacked(&ev->base, NULL);
            if (done)
                build_sse_finish(b, true);
        }
        if (strbuf_failed(&b->out.text))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    return sse_take(&b->out, buf, max);
}

/* A client that goes away leaves the build running: the scheduler records
 * its result. */
static void build_sse_free(void *cls)
{
    struct build_sse *b = cls;
    if (b->stream) {
        rpc_stream_cancel(b->stream);
        rpc_stream_finish(b->stream, NULL);
    }
    sse_buffer_free(&b->out);
    free(b);
}

/* The first event is awaited before answering, so a spec the scheduler
 * refuses is a plain JSON error (400 naming the field) rather than a 200. */
static enum MHD_Result build_reply_sse(struct gw_request *r, struct rpc_stream *s)
{
    BuildEvent *first = NULL;
    if (gw_template_build_next(s, &first) != 1) {
        char *details = NULL;
        grpc_status_code st = rpc_stream_finish(s, &details);
        enum MHD_Result rc =
            reply_grpc_error(r, st == GRPC_STATUS_OK ? GRPC_STATUS_INTERNAL : st, details);
        free(details);
        return rc;
    }
    struct build_sse *b = calloc(1, sizeof(*b));
    if (!b) {
        protobuf_c_message_free_unpacked(&first->base, NULL);
        rpc_stream_cancel(s);
        rpc_stream_finish(s, NULL);
        return reply_error(r, 500, "internal", "out of memory");
    }
    b->stream = s;
    if (build_sse_format(b, first))
        build_sse_finish(b, true);
    protobuf_c_message_free_unpacked(&first->base, NULL);
    return sse_reply(r, build_sse_read, b, build_sse_free);
}

static enum MHD_Result build_reply_json(struct gw_request *r, struct rpc_stream *s)
{
    json_t *done = NULL;
    BuildEvent *ev = NULL;
    while (gw_template_build_next(s, &ev) == 1) {
        if (ev->event_case == AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_EVENT__EVENT_DONE) {
            json_decref(done);
            done = template_json(ev->done);
        }
        protobuf_c_message_free_unpacked(&ev->base, NULL);
    }
    char *details = NULL;
    grpc_status_code st = rpc_stream_finish(s, &details);
    enum MHD_Result rc;
    if (st != GRPC_STATUS_OK || !done) {
        json_decref(done);
        rc = reply_grpc_error(r, st == GRPC_STATUS_OK ? GRPC_STATUS_INTERNAL : st, details);
    } else {
        rc = reply_json(r, 201, done);
    }
    free(details);
    return rc;
}

enum MHD_Result handle_template_build(struct gw_request *r)
{
    struct rpc_stream *s = build_open(r);
    if (!s)
        return reply_error(r, 500, "internal", "out of memory");
    const char *accept = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Accept");
    return accept && strstr(accept, "text/event-stream") ? build_reply_sse(r, s)
                                                         : build_reply_json(r, s);
}

static json_t *template_answer(const ProtobufCMessage *m)
{
    return template_json((const Airlock__Scheduler__V1__Template *)m);
}

static json_t *template_list_answer(const ProtobufCMessage *m)
{
    const Airlock__Scheduler__V1__ListTemplatesResponse *resp = (const void *)m;
    json_t *list = json_array();
    for (size_t i = 0; i < resp->n_templates; i++)
        json_array_append_new(list, template_json(resp->templates[i]));
    return json_pack("{s:o}", "templates", list);
}

/* Get and Delete of {name} ("name" or "name:version"). */
static enum MHD_Result template_ref_call(struct gw_request *r, const char *method,
                                         unsigned ok_status)
{
    Airlock__Scheduler__V1__TemplateRef req = AIRLOCK__SCHEDULER__V1__TEMPLATE_REF__INIT;
    req.request_id = r->id;
    req.project_id = r->project_id;
    req.actor = r->key_id;
    req.name = r->path_name;
    return gw_scheduler_call(r, method, &req.base, &airlock__scheduler__v1__template__descriptor,
                             GW_SCHEDULER_TIMEOUT_MS, template_answer, ok_status);
}

enum MHD_Result handle_template_get(struct gw_request *r)
{
    return template_ref_call(r, SCHEDULER_METHOD("GetTemplate"), 200);
}

enum MHD_Result handle_template_delete(struct gw_request *r)
{
    return template_ref_call(r, SCHEDULER_METHOD("DeleteTemplate"), 204);
}

enum MHD_Result handle_template_list(struct gw_request *r)
{
    Airlock__Scheduler__V1__ListTemplatesRequest req =
        AIRLOCK__SCHEDULER__V1__LIST_TEMPLATES_REQUEST__INIT;
    req.request_id = r->id;
    req.project_id = r->project_id;
    return gw_scheduler_call(r, SCHEDULER_METHOD("ListTemplates"), &req.base,
                             &airlock__scheduler__v1__list_templates_response__descriptor,
                             GW_SCHEDULER_TIMEOUT_MS, template_list_answer, 200);
}
