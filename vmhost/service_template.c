/* BuildTemplate (the build log streamed), ListTemplates, GetTemplate
 * (docs/templates.md); DeleteTemplate is ops.h's. */
#include <stdlib.h>
#include <string.h>

#include "template_named.h"
#include "vmhost_service.h"
#include "warm_pool.h"

typedef Airlock__Vmhost__V1__Template__EnvEntry EnvEntry;

void template_view_take(struct vmhost *vh, struct template_version *t, struct template_view *v)
{
    memset(v, 0, sizeof(*v));
    airlock__vmhost__v1__template__init(&v->msg);
    Airlock__Vmhost__V1__Template *m = &v->msg;
    m->name = t->name;
    m->version = t->version;
    m->ref = t->ref;
    m->cpus = t->snap.vcpus;
    m->memory_mb = t->snap.memory_mb;
    m->image_hash = t->image_hash;
    m->sandboxes = template_sandboxes(vh, t);
    struct warm_pool_stats ps;
    warm_pool_get_stats(t->pool, &ps);
    m->pool_target = ps.target;
    m->pool_ready = ps.ready;
    m->pool_taken = ps.taken;
    m->pool_missed = ps.missed;
    json_t *tj = json_object_get(t->manifest, "template");
    if (!tj)
        return; /* the default template: no spec */
    m->workdir = (char *)t->workdir;
    const char *stored = json_string_value(json_object_get(t->manifest, "store_object"));
    m->store_object = (char *)(stored ? stored : "");
    const char *start = json_string_value(json_object_get(tj, "start_cmd"));
    m->start_cmd = (char *)(start ? start : "");
    json_int_t built = json_integer_value(json_object_get(t->manifest, "built_unix_ms"));
    json_int_t began = json_integer_value(json_object_get(tj, "build_started_unix_ms"));
    m->built_unix_ms = built;
    m->build_ms = built > began && began > 0 ? (uint32_t)(built - began) : 0;
    json_t *env = json_object_get(tj, "env"), *packages = json_object_get(tj, "packages");
    size_t n_env = json_object_size(env), n_packages = json_array_size(packages);
    v->env = calloc(n_env ? n_env : 1, sizeof(*v->env));
    v->env_ptrs = calloc(n_env ? n_env : 1, sizeof(*v->env_ptrs));
    v->packages = calloc(n_packages ? n_packages : 1, sizeof(*v->packages));
    if (!v->env || !v->env_ptrs || !v->packages)
        return; /* out of memory: the view goes without its lists */
    const char *key;
    json_t *val;
    json_object_foreach(env, key, val) {
        EnvEntry *e = &v->env[m->n_env];
        airlock__vmhost__v1__template__env_entry__init(e);
        e->key = (char *)key;
        e->value = (char *)(json_string_value(val) ? json_string_value(val) : "");
        v->env_ptrs[m->n_env++] = e;
    }
    m->env = v->env_ptrs;
    for (size_t i = 0; i < n_packages; i++) {
        const char *p = json_string_value(json_array_get(packages, i));
        if (p)
            v->packages[m->n_packages++] = (char *)p;
    }
    m->packages = v->packages;
}

void template_view_free(struct template_view *v)
{
    free(v->env);
    free(v->env_ptrs);
    free(v->packages);
}

static void send_template(struct rpc_call *call, struct vmhost *vh, struct template_version *t)
{
    struct template_view v;
    template_view_take(vh, t, &v);
    rpc_call_send(call, &v.msg.base);
    template_view_free(&v);
}

/* A build log line as one BuildTemplateEvent; a client that went away
 * does not stop the build (its result stays on the node). */
static void build_log(void *arg, const char *line)
{
    Airlock__Vmhost__V1__BuildTemplateEvent ev = AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_EVENT__INIT;
    ev.event_case = AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_EVENT__EVENT_LOG;
    ev.log = (char *)line;
    rpc_call_send(arg, &ev.base);
}

void service_build_template(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__BuildTemplateRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__build_template_request__descriptor);
    if (!req)
        return;
    struct template_version *t = NULL;
    struct airlock_error e = { 0 };
    int rc = template_build_named(vh, req, build_log, call, &t, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
    if (rc < 0) {
        rpc_call_finish_error(call, &e);
        return;
    }
    struct template_view v;
    template_view_take(vh, t, &v);
    Airlock__Vmhost__V1__BuildTemplateEvent ev = AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_EVENT__INIT;
    ev.event_case = AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_EVENT__EVENT_DONE;
    ev.done = &v.msg;
    rpc_call_send(call, &ev.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    template_view_free(&v);
    template_release(t);
}

void service_list_templates(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    ProtobufCMessage *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__list_templates_request__descriptor);
    if (!req)
        return;
    protobuf_c_message_free_unpacked(req, NULL);
    size_t n;
    struct template_version **all = template_list(vh, &n);
    struct template_view *views = calloc(n ? n : 1, sizeof(*views));
    Airlock__Vmhost__V1__Template **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    if (!all || !views || !ptrs) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        template_view_take(vh, all[i], &views[i]);
        ptrs[i] = &views[i].msg;
    }
    Airlock__Vmhost__V1__ListTemplatesResponse resp =
        AIRLOCK__VMHOST__V1__LIST_TEMPLATES_RESPONSE__INIT;
    resp.n_templates = n;
    resp.templates = ptrs;
    rpc_call_send(call, &resp.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    for (size_t i = 0; i < n; i++)
        template_view_free(&views[i]);
out:
    for (size_t i = 0; all && i < n; i++)
        template_release(all[i]);
    free(all);
    free(views);
    free(ptrs);
}

void service_get_template(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__TemplateRef *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__template_ref__descriptor);
    if (!req)
        return;
    struct airlock_error e = { 0 };
    struct template_version *t = template_lookup(vh, req->name, &e);
    if (t) {
        send_template(call, vh, t);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
        template_release(t);
    } else {
        rpc_call_finish_error(call, &e);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
