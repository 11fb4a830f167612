/* Templates.BuildTemplate, ListTemplates, GetTemplate, DeleteTemplate,
 * SetWarmPool and GetWarmPool: the calls of REST's /v1/templates routes on
 * the scheduler, which checks the spec (the same JSON REST sends, so the
 * same rules and messages) and scopes every call to the caller's project.
 * The warm-pool calls are admin-only (grpc_api.c checks the key). */
#include <stdlib.h>

#include "grpc_call.h"
#include "grpc_convert.h"
#include "grpc_relay.h"
#include "template_access.h"

typedef Airlock__Scheduler__V1__BuildTemplateEvent BuildEvent;

/* A scheduler build event as the public one: log lines, then done. */
static int forward_build_event(struct grpc_request *r, const ProtobufCMessage *msg)
{
    const BuildEvent *ev = (const void *)msg;
    Airlock__V1__BuildTemplateEvent out = AIRLOCK__V1__BUILD_TEMPLATE_EVENT__INIT;
    switch (ev->event_case) {
    case AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_EVENT__EVENT_LOG:
        out.event_case = AIRLOCK__V1__BUILD_TEMPLATE_EVENT__EVENT_LOG;
        out.log = ev->log;
        return grpc_send(r, &out.base) < 0 ? -1 : 0;
    case AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_EVENT__EVENT_DONE: {
        struct grpc_arena a = { 0 };
        out.event_case = AIRLOCK__V1__BUILD_TEMPLATE_EVENT__EVENT_DONE;
        out.done = grpc_template_msg(&a, ev->done);
        int sent = out.done && !a.failed ? grpc_send(r, &out.base) : -1;
        grpc_arena_free(&a);
        return sent < 0 ? -1 : 1;
    }
    default:
        return 0;
    }
}

/* A client that leaves mid-build cancels only its relay (grpc_relay.h):
 * the scheduler finishes the build and records it, as for REST. */
void grpc_build_template(struct grpc_request *r)
{
    const Airlock__V1__BuildTemplateRequest *in = (const void *)r->msg;
    char err[512];
    char *spec = grpc_template_spec_json(in->spec, err, sizeof(err));
    if (!spec) {
        grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT, "%s", err);
        return;
    }
    struct rpc_stream *s = gw_template_build_open(r->gw, &r->caller, spec);
    free(spec);
    if (!s) {
        grpc_fail(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    grpc_relay_stream(r, s, &airlock__scheduler__v1__build_template_event__descriptor,
                      forward_build_event, "the build ended without a result");
}

void grpc_list_templates(struct grpc_request *r)
{
    Airlock__Scheduler__V1__ListTemplatesRequest req =
        AIRLOCK__SCHEDULER__V1__LIST_TEMPLATES_REQUEST__INIT;
    req.request_id = r->id;
    req.project_id = r->project_id;
    Airlock__Scheduler__V1__ListTemplatesResponse *resp = NULL;
    if (!grpc_unary(r, r->gw->scheduler, SCHEDULER_METHOD("ListTemplates"), &req.base,
                    &airlock__scheduler__v1__list_templates_response__descriptor,
                    GW_SCHEDULER_TIMEOUT_MS, (ProtobufCMessage **)&resp))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__ListTemplatesResponse out = AIRLOCK__V1__LIST_TEMPLATES_RESPONSE__INIT;
    out.templates = grpc_template_list(&a, resp->templates, resp->n_templates);
    out.n_templates = resp->n_templates;
    grpc_reply_built(r, &a, &out.base, &resp->base);
}

/* Whether the string field `name` is set; false after failing the call. */
static bool check_required(struct grpc_request *r, const char *name, const char *value)
{
    if (*value)
        return true;
    grpc_fail(r, GRPC_STATUS_INVALID_ARGUMENT, "%s: required", name);
    return false;
}

/* GetTemplate or DeleteTemplate of the caller's template name: true with
 * the template (free it), false after failing the call. */
static bool template_ref_call(struct grpc_request *r, const char *method,
                              Airlock__Scheduler__V1__Template **t)
{
    const Airlock__V1__TemplateRequest *in = (const void *)r->msg;
    *t = NULL;
    if (!check_required(r, "name", in->name))
        return false;
    Airlock__Scheduler__V1__TemplateRef req = AIRLOCK__SCHEDULER__V1__TEMPLATE_REF__INIT;
    GW_CALLER_FILL(req, &r->caller);
    req.name = in->name;
    return grpc_unary(r, r->gw->scheduler, method, &req.base,
                      &airlock__scheduler__v1__template__descriptor, GW_SCHEDULER_TIMEOUT_MS,
                      (ProtobufCMessage **)t);
}

void grpc_get_template(struct grpc_request *r)
{
    Airlock__Scheduler__V1__Template *t;
    if (!template_ref_call(r, SCHEDULER_METHOD("GetTemplate"), &t))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__Template *msg = grpc_template_msg(&a, t);
    grpc_reply_built(r, &a, msg ? &msg->base : NULL, &t->base);
}

void grpc_delete_template(struct grpc_request *r)
{
    Airlock__Scheduler__V1__Template *t;
    if (!template_ref_call(r, SCHEDULER_METHOD("DeleteTemplate"), &t))
        return;
    protobuf_c_message_free_unpacked(&t->base, NULL);
    Airlock__V1__Empty nothing = AIRLOCK__V1__EMPTY__INIT;
    grpc_reply(r, &nothing.base);
}

/* One scheduler call answered by a WarmPoolStatus, answered as WarmPool. */
static void pool_call(struct grpc_request *r, const char *method, const ProtobufCMessage *req)
{
    Airlock__Scheduler__V1__WarmPoolStatus *pool = NULL;
    if (!grpc_unary(r, r->gw->scheduler, method, req,
                    &airlock__scheduler__v1__warm_pool_status__descriptor, GW_SCHEDULER_TIMEOUT_MS,
                    (ProtobufCMessage **)&pool))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__WarmPool out = AIRLOCK__V1__WARM_POOL__INIT;
    out.template_ = pool->template_;
    out.target = pool->target;
    out.target_set = pool->target_set;
    out.max = pool->max;
    out.n_nodes = pool->n_nodes;
    out.nodes = pool->n_nodes ? grpc_arena_alloc(&a, pool->n_nodes * sizeof(*out.nodes)) : NULL;
    for (size_t i = 0; out.nodes && i < pool->n_nodes; i++) {
        Airlock__V1__NodeWarmPool *n = grpc_arena_alloc(&a, sizeof(*n));
        if (!n)
            break;
        airlock__v1__node_warm_pool__init(n);
        n->node = pool->nodes[i]->node_id;
        n->target = pool->nodes[i]->target;
        n->ready = pool->nodes[i]->ready;
        n->min = pool->nodes[i]->min;
        n->max = pool->nodes[i]->max;
        n->memory_bytes = pool->nodes[i]->memory_bytes;
        n->demand_per_s = pool->nodes[i]->demand_per_s;
        out.nodes[i] = n;
    }
    grpc_reply_built(r, &a, &out.base, &pool->base);
}

void grpc_set_warm_pool(struct grpc_request *r)
{
    const Airlock__V1__SetWarmPoolRequest *in = (const void *)r->msg;
    if (!check_required(r, "template", in->template_))
        return;
    Airlock__Scheduler__V1__SetWarmPoolRequest req = AIRLOCK__SCHEDULER__V1__SET_WARM_POOL_REQUEST__INIT;
    req.request_id = r->id;
    req.template_ = in->template_;
    req.target = in->target; /* the scheduler bounds them */
    req.max = in->max;
    pool_call(r, SCHEDULER_METHOD("SetWarmPool"), &req.base);
}

void grpc_get_warm_pool(struct grpc_request *r)
{
    const Airlock__V1__GetWarmPoolRequest *in = (const void *)r->msg;
    if (!check_required(r, "template", in->template_))
        return;
    Airlock__Scheduler__V1__WarmPoolRef req = AIRLOCK__SCHEDULER__V1__WARM_POOL_REF__INIT;
    req.request_id = r->id;
    req.template_ = in->template_;
    pool_call(r, SCHEDULER_METHOD("GetWarmPool"), &req.base);
}
