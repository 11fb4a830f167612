/* BuildTemplate (the node's build log relayed as a stream), ListTemplates,
 * GetTemplate, DeleteTemplate (docs/templates.md). A build goes to the
 * live node with the most free memory, which publishes its log and result
 * on a NATS subject of this call (protos/node.proto template_build);
 * sandboxes of the template are then placed on a node that has it, or on
 * any node when it was published to the shared snapshot store. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "rpc_err.h"
#include "node_request.h"
#include "nodes.h"
#include "rpc_client.h"
#include "scheduler_service.h"
#include "template_store.h"

/* How long any build may take; a quiet one is given up as soon as its node
 * or NATS is gone (node_request.h). */
#define BUILD_MAX_MS (TEMPLATE_BUILD_MAX_S * 1000)

typedef Airlock__Scheduler__V1__BuildTemplateEvent BuildEvent;

static void send_log(struct rpc_call *call, const char *line)
{
    BuildEvent ev = AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_EVENT__INIT;
    ev.event_case = AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_EVENT__EVENT_LOG;
    ev.log = (char *)line;
    rpc_call_send(call, &ev.base); /* a client gone does not stop the build */
}

/* A node's log line as the project sees it: the node knows the template
 * as "<project>.<name>", the project as "<name>". */
static void send_node_log(struct rpc_call *call, const char *project_id, const char *line)
{
    char shown[4096], prefix[80];
    snprintf(prefix, sizeof(prefix), "%s.", project_id);
    size_t o = 0, pl = strlen(prefix);
    for (const char *p = line; *p && o + 1 < sizeof(shown);) {
        if (strncmp(p, prefix, pl) == 0) {
            p += pl;
            continue;
        }
        shown[o++] = *p++;
    }
    shown[o] = '\0';
    send_log(call, shown);
}

/* The spec as stored and shown: file contents replaced by their sizes. */
static char *spec_summary(const char *spec_json, const Airlock__Vmhost__V1__TemplateSpec *spec)
{
    json_t *root = json_loads(spec_json, 0, NULL);
    json_t *files = json_object_get(root, "files");
    for (size_t i = 0; i < json_array_size(files) && i < spec->n_files; i++) {
        json_t *f = json_array_get(files, i);
        json_object_del(f, "content");
        json_object_del(f, "content_b64");
        json_object_set_new(f, "bytes", json_integer((json_int_t)spec->files[i]->content.len));
    }
    char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    return text;
}

struct build {
    struct scheduler *s;
    struct rpc_call *call;
    const char *project_id;
    char node[128];
    char id[TEMPLATE_ID_SIZE];
    unsigned version;
    natsSubscription *events;
    char subject[256];
};

/* Relays the node's events until its result: OK with *result (free it), or
 * the build's error. */
static int follow_build(struct build *b, Airlock__Node__V1__NodeReply **result,
                        struct airlock_error *e)
{
    int64_t deadline = clock_monotonic_ms() + BUILD_MAX_MS;
    struct node_watch watch;
    node_watch_begin(b->s, b->node, &watch);
    int rc = 1; /* until the build ends */
    char why[256];
    while (rc == 1 && clock_monotonic_ms() < deadline) {
        natsMsg *msg = NULL;
        natsStatus ns = natsSubscription_NextMsg(&msg, b->events, NODE_REQUEST_CHECK_MS);
        if (ns == NATS_TIMEOUT) {
            if (node_watch_lost(b->s, b->node, &watch, why, sizeof(why)))
                rc = airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "%s during the build", why);
            continue;
        }
        if (ns != NATS_OK) {
            rc = airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "nats: build events: %s",
                                   natsStatus_GetText(ns));
            continue;
        }
        const char *subject = natsMsg_GetSubject(msg);
        size_t sl = strlen(subject);
        bool done = sl > 5 && strcmp(subject + sl - 5, ".done") == 0;
        if (!done) {
            Airlock__Vmhost__V1__BuildTemplateEvent *ev =
                airlock__vmhost__v1__build_template_event__unpack(
                    NULL, (size_t)natsMsg_GetDataLength(msg),
                    (const uint8_t *)natsMsg_GetData(msg));
            if (ev && ev->event_case == AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_EVENT__EVENT_LOG)
                send_node_log(b->call, b->project_id, ev->log);
            if (ev)
                airlock__vmhost__v1__build_template_event__free_unpacked(ev, NULL);
            natsMsg_Destroy(msg);
            continue;
        }
        rc = nodes_reply_take(b->node, NODE_OP(TEMPLATE_BUILD), msg, result, e);
        if (rc == 0 && !(*result)->template_) {
            airlock__node__v1__node_reply__free_unpacked(*result, NULL);
            *result = NULL;
            rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL,
                                   "node %s sent a build result without the template", b->node);
        }
    }
    node_watch_end(&watch);
    if (rc == 1)
        rc = airlock_error_set(e, AIRLOCK_ERR_TIMEOUT,
                               "the build on node %s took longer than %d minutes", b->node,
                               BUILD_MAX_MS / 60000);
    return rc;
}

/* Sends the build to b->node and relays it; the row becomes ready. */
static int run_build(struct build *b, Airlock__Vmhost__V1__TemplateSpec *spec,
                     const char *user_name, struct airlock_error *e)
{
    char inbox[200], node_name[TEMPLATE_NAME_MAX + 1];
    natsInbox *nb = NULL;
    if (natsInbox_Create(&nb) != NATS_OK)
        return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "nats: cannot make an inbox");
    /* The inbox's unique token ("_INBOX.<nuid>") under the node's prefix. */
    snprintf(inbox, sizeof(inbox), NODE_BUILDS_SUBJECT_PREFIX "%s.%s", b->node,
             strchr((const char *)nb, '.') + 1);
    natsInbox_Destroy(nb);
    snprintf(b->subject, sizeof(b->subject), "%s.*", inbox);
    natsStatus ns = natsConnection_SubscribeSync(&b->events, b->s->nc, b->subject);
    /* The flush round trip means the server has the subscription before
     * the node can publish. */
    if (ns == NATS_OK)
        ns = natsConnection_FlushTimeout(b->s->nc, 5000);
    if (ns != NATS_OK)
        return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "nats: subscribe for build events: %s",
                                 natsStatus_GetText(ns));
    /* On the node the project's name is "<project>.<name>". */
    snprintf(node_name, sizeof(node_name), "%s.%s", b->project_id, user_name);
    spec->name = node_name;
    Airlock__Vmhost__V1__BuildTemplateRequest breq =
        AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_REQUEST__INIT;
    breq.spec = spec;
    breq.version = b->version;
    Airlock__Node__V1__TemplateBuild work = AIRLOCK__NODE__V1__TEMPLATE_BUILD__INIT;
    work.request = &breq;
    work.events_subject = inbox;
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc = nodes_call(b->s, b->node, NODE_OP(TEMPLATE_BUILD), &work.base,
                        b->s->cfg.node_timeout_ms, &reply, e);
    if (reply)
        airlock__node__v1__node_reply__free_unpacked(reply, NULL);
    if (rc < 0)
        return rc;
    char line[300];
    snprintf(line, sizeof(line), "building %s:%u on node %s", user_name, b->version, b->node);
    send_log(b->call, line);
    Airlock__Node__V1__NodeReply *result = NULL;
    rc = follow_build(b, &result, e);
    if (rc < 0)
        return rc;
    rc = store_template_ready(&b->s->db, b->id, result->template_->cpus,
                              result->template_->memory_mb, result->template_->build_ms,
                              result->template_->store_object, e);
    airlock__node__v1__node_reply__free_unpacked(result, NULL);
    return rc;
}

/* The build's answer: the done event with the stored row. */
static int send_done(struct build *b, const char *name, struct airlock_error *e)
{
    PGresult *res = NULL;
    int rc = store_template_find(&b->s->db, b->project_id, name, b->version, &res, e);
    if (rc < 0)
        return rc;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return airlock_error_set(e, AIRLOCK_ERR_ABORTED, "template %s:%u vanished after its build",
                                 name, b->version);
    }
    Airlock__Scheduler__V1__Template t;
    store_template_msg(res, 0, &t);
    BuildEvent ev = AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_EVENT__INIT;
    ev.event_case = AIRLOCK__SCHEDULER__V1__BUILD_TEMPLATE_EVENT__EVENT_DONE;
    ev.done = &t;
    rpc_call_send(b->call, &ev.base);
    PQclear(res);
    return 0;
}

void service_template_build(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__BuildTemplateRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__build_template_request__descriptor);
    if (!req)
        return;
    struct build b = { .s = s, .call = call, .project_id = req->project_id };
    struct template_spec_json spec;
    struct airlock_error e;
    char user_name[TEMPLATE_NAME_MAX + 1];
    char *summary = NULL;
    bool parsed = false;
    int64_t t0 = clock_monotonic_ms();
    int rc;
    if (template_spec_from_json(req->spec_json, strlen(req->spec_json), &spec,
                                AIRLOCK_ERROR_MSG(&e)) < 0) {
        rc = airlock_error_classify(&e, AIRLOCK_ERR_INVALID);
        goto out;
    }
    parsed = true;
    snprintf(user_name, sizeof(user_name), "%s", spec.msg.name);
    if (strlen(user_name) > TEMPLATE_USER_NAME_MAX) {
        rc = airlock_error_set(&e, AIRLOCK_ERR_INVALID, "name: longer than %d characters",
                               TEMPLATE_USER_NAME_MAX);
        goto out;
    }
    if (!(summary = spec_summary(req->spec_json, &spec.msg))) {
        rc = airlock_error_set(&e, AIRLOCK_ERR_CAPACITY, "out of memory");
        goto out;
    }
    rc = store_template_pick_node(&s->db, s->cfg.node_dead_after_s, b.node, sizeof(b.node), &e);
    if (rc < 0 && e.class == AIRLOCK_ERR_CAPACITY) /* no node, not a database error */
        metric_add(s->metrics.placement_failures, METRIC_LABELS("build"), 1);
    if (rc == 0)
        rc = store_template_begin(&s->db, req->project_id, user_name, b.node, summary,
                                  &s->cfg.quota_defaults, b.id, sizeof(b.id), &b.version, &e);
    if (rc < 0)
        goto out;
    log_info("template build started", "request=%s project=%s template=%s node=%s",
             req->request_id, req->project_id, b.id, b.node);
    rc = run_build(&b, &spec.msg, user_name, &e);
    if (rc == 0)
        rc = send_done(&b, user_name, &e);
    if (rc < 0)
        store_template_abort(&s->db, b.id);
out:
    if (b.events) {
        natsSubscription_Unsubscribe(b.events);
        natsSubscription_Destroy(b.events);
    }
    if (rc == 0) {
        log_info("template built", "request=%s template=%s ms=%lld", req->request_id, b.id,
                 (long long)(clock_monotonic_ms() - t0));
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    } else {
        log_warn("template build failed", "request=%s project=%s status=%s error=\"%s\"",
                 req->request_id, req->project_id, airlock_error_status_name(&e), e.message);
        rpc_call_finish_error(call, &e);
    }
    free(summary);
    if (parsed)
        template_spec_json_free(&spec);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* The versions ref names ("name" = all of them, "name:N" = one), or
 * not found naming it. */
static int find_ref(struct scheduler *s, const char *project_id, const char *ref, char *name,
                    size_t namelen, unsigned *version, PGresult **rows, struct airlock_error *e)
{
    *rows = NULL;
    if (!template_ref_parse(ref, name, namelen, version))
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND,
                                 "template \"%s\" not found (a name, or name:version)", ref);
    int rc = store_template_find(&s->db, project_id, name, *version, rows, e);
    if (rc == 0 && PQntuples(*rows) == 0) {
        PQclear(*rows);
        *rows = NULL;
        rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "template \"%s\" not found", ref);
    }
    return rc;
}

static void reply_template(struct rpc_call *call, PGresult *rows, int row)
{
    Airlock__Scheduler__V1__Template t;
    store_template_msg(rows, row, &t);
    rpc_call_send(call, &t.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
}

void service_template_get(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__TemplateRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__template_ref__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    char name[TEMPLATE_NAME_MAX + 1];
    unsigned version;
    PGresult *rows;
    int rc = find_ref(s, req->project_id, req->name, name, sizeof(name), &version, &rows, &e);
    if (rc == 0)
        reply_template(call, rows, PQntuples(rows) - 1); /* the newest */
    else
        rpc_call_finish_error(call, &e);
    PQclear(rows);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_template_list(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__ListTemplatesRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__list_templates_request__descriptor);
    if (!req)
        return;
    PGresult *rows = NULL;
    struct airlock_error e;
    int rc = store_template_find(&s->db, req->project_id, NULL, 0, &rows, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
    if (rc < 0) {
        rpc_call_finish_error(call, &e);
        return;
    }
    int n = PQntuples(rows);
    Airlock__Scheduler__V1__Template *msgs = calloc((size_t)n + 1, sizeof(*msgs));
    Airlock__Scheduler__V1__Template **ptrs = calloc((size_t)n + 1, sizeof(*ptrs));
    if (!msgs || !ptrs) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        for (int i = 0; i < n; i++) {
            store_template_msg(rows, i, &msgs[i]);
            ptrs[i] = &msgs[i];
        }
        Airlock__Scheduler__V1__ListTemplatesResponse resp =
            AIRLOCK__SCHEDULER__V1__LIST_TEMPLATES_RESPONSE__INIT;
        resp.n_templates = (size_t)n;
        resp.templates = ptrs;
        rpc_call_send(call, &resp.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    }
    free(msgs);
    free(ptrs);
    PQclear(rows);
}

/* Deletes template id on node, and its set from the shared store when
 * stored is not empty. A node that does not answer keeps its copy
 * (logged); one that has none is fine. */
static int delete_on_node(struct scheduler *s, const char *id, const char *node,
                          const char *stored, struct airlock_error *e)
{
    Airlock__Vmhost__V1__TemplateRef ref = AIRLOCK__VMHOST__V1__TEMPLATE_REF__INIT;
    ref.name = (char *)id;
    ref.store_object = (char *)stored;
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc = nodes_call(s, node, NODE_OP(TEMPLATE_DELETE), &ref.base, s->cfg.node_timeout_ms,
                        &reply, e);
    if (reply)
        airlock__node__v1__node_reply__free_unpacked(reply, NULL);
    if (rc < 0 && (e->class == AIRLOCK_ERR_UNAVAILABLE || e->class == AIRLOCK_ERR_TIMEOUT)) {
        log_warn("template left on an unreachable node", "template=%s node=%s error=\"%s\"", id,
                 node, e->message);
        return 1;
    }
    return rc < 0 && e->class != AIRLOCK_ERR_NOT_FOUND ? rc : 0;
}

/* Each version off the nodes that have it (the builder, those that
 * fetched it) and out of the shared store, then marked deleted. */
static int delete_versions(struct scheduler *s, PGresult *rows, struct airlock_error *e)
{
    for (int i = 0; i < PQntuples(rows); i++) {
        const char *id = store_template_id(rows, i), *node = store_template_node(rows, i);
        const char *stored = store_template_object(rows, i);
        PGresult *holders = NULL;
        int rc = store_template_holders(&s->db, id, node, &holders, e);
        bool forgotten = !*stored; /* whether a node took the set out of the store */
        for (int h = 0; rc >= 0 && h < PQntuples(holders); h++) {
            rc = delete_on_node(s, id, PQgetvalue(holders, h, 0), stored, e);
            forgotten = forgotten || rc == 0;
        }
        PQclear(holders);
        if (rc < 0)
            return rc;
        if (!forgotten)
            log_warn("template left in the snapshot store: no node that has it answered",
                     "template=%s set=%s", id, stored);
        rc = store_template_mark_deleted(&s->db, id, e);
        if (rc < 0)
            return rc;
        log_info("template deleted", "template=%s node=%s set=%s", id, node, stored);
    }
    return 0;
}

void service_template_delete(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__TemplateRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__template_ref__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    char name[TEMPLATE_NAME_MAX + 1], user[80];
    unsigned version;
    PGresult *rows;
    int rc = find_ref(s, req->project_id, req->name, name, sizeof(name), &version, &rows, &e);
    if (rc == 0)
        rc = store_template_user(&s->db, req->project_id, name, version, user, sizeof(user), &e);
    if (rc == 0 && *user) {
        rc = airlock_error_set(&e, AIRLOCK_ERR_STATE,
                               "template %s is used by sandbox %s (and maybe others); delete "
                               "them first",
                               req->name, user);
    }
    if (rc == 0)
        rc = delete_versions(s, rows, &e);
    if (rc == 0) {
        log_info("template delete", "request=%s project=%s template=%s", req->request_id,
                 req->project_id, req->name);
        reply_template(call, rows, PQntuples(rows) - 1);
    } else {
        rpc_call_finish_error(call, &e);
    }
    PQclear(rows);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

int service_template_for_create(struct scheduler *s,
                                Airlock__Scheduler__V1__CreateSandboxRequest *req,
                                struct template_choice *tc, struct airlock_error *e)
{
    int rc = store_template_choose(&s->db, req->project_id, req->template_, tc, e);
    if (rc < 0)
        return rc;
    const char *asked = req->template_;
    req->template_ = tc->id;
    if (!tc->cpus)
        return 0; /* the default template: any size */
    bool other_cpus = req->cpus && req->cpus != tc->cpus;
    if (other_cpus || (req->memory_mb && req->memory_mb != tc->memory_mb))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "%s: template %s has %u vCPUs and %u MiB; its sandboxes have "
                                 "its size (leave cpus and memory_mb unset)",
                                 other_cpus ? "cpus" : "memory_mb", asked, tc->cpus, tc->memory_mb);
    req->cpus = tc->cpus;
    req->memory_mb = tc->memory_mb;
    return 0;
}
