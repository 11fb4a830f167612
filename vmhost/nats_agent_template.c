/* The node's template build for the scheduler (protos/node.proto,
 * NODE_OP_TEMPLATE_BUILD): answered at once, then the build log and the
 * result published on the request's events subject; and the templates and
 * pools a heartbeat carries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nats_agent_ops.h"
#include "template_named.h"
#include "vmhost_service.h"
#include "warm_pool.h"

struct build_events {
    natsConnection *nc;
    char log_subject[300];
};

static void publish_log(void *arg, const char *line)
{
    struct build_events *e = arg;
    Airlock__Vmhost__V1__BuildTemplateEvent ev = AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_EVENT__INIT;
    ev.event_case = AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_EVENT__EVENT_LOG;
    ev.log = (char *)line;
    uint8_t buf[4096];
    size_t len = airlock__vmhost__v1__build_template_event__get_packed_size(&ev);
    if (len <= sizeof(buf)) /* log lines are short (template_guest.c) */
        natsConnection_Publish(e->nc, e->log_subject, buf,
                               (int)airlock__vmhost__v1__build_template_event__pack(&ev, buf));
}

static void publish_done(natsConnection *nc, const char *subject,
                         const Airlock__Node__V1__NodeReply *r)
{
    size_t len = airlock__node__v1__node_reply__get_packed_size(r);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return; /* the scheduler's build times out */
    airlock__node__v1__node_reply__pack(r, buf);
    natsConnection_Publish(nc, subject, buf, (int)len);
    natsConnection_Flush(nc);
    free(buf);
}

void node_op_template_build(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    Airlock__Node__V1__TemplateBuild *req = UNPACK(airlock__node__v1__template_build, msg);
    struct airlock_error e = { 0 };
    if (!req || !req->request || !req->request->spec || !*req->events_subject ||
        strlen(req->events_subject) > 200 || strpbrk(req->events_subject, " *>")) {
        airlock_error_set(&e, AIRLOCK_ERR_INVALID,
                          "template_build: a TemplateBuild with a spec and events subject");
        goto refuse;
    }
    if (template_spec_check(req->request->spec, AIRLOCK_ERROR_MSG(&e)) < 0) {
        airlock_error_classify(&e, AIRLOCK_ERR_INVALID);
        goto refuse;
    }
    if (!vh->have_template) {
        airlock_error_set(&e, AIRLOCK_ERR_STATE,
                          "this node runs with --cold-boot: it keeps no template snapshots");
        goto refuse;
    }
    node_reply_status(nc, msg, GRPC_STATUS_OK, NULL); /* started: the rest is events */

    struct build_events ev = { .nc = nc };
    char done_subject[300];
    snprintf(ev.log_subject, sizeof(ev.log_subject), "%s.log", req->events_subject);
    snprintf(done_subject, sizeof(done_subject), "%s.done", req->events_subject);
    struct template_version *t = NULL;
    int rc = template_build_named(vh, req->request, publish_log, &ev, &t, &e);
    Airlock__Node__V1__NodeReply r = AIRLOCK__NODE__V1__NODE_REPLY__INIT;
    r.status = rc == 0 ? GRPC_STATUS_OK : airlock_error_status(&e);
    r.message = rc == 0 ? "" : e.message;
    struct template_view view;
    if (t) {
        template_view_take(vh, t, &view);
        r.template_ = &view.msg;
    }
    publish_done(nc, done_subject, &r);
    if (t) {
        template_view_free(&view);
        template_release(t);
    }
    airlock__node__v1__template_build__free_unpacked(req, NULL);
    return;
refuse:
    node_reply_error(nc, msg, &e);
    if (req)
        airlock__node__v1__template_build__free_unpacked(req, NULL);
}

void heartbeat_templates_fill(struct vmhost *vh, Airlock__Node__V1__Heartbeat *hb,
                              struct heartbeat_templates *h)
{
    memset(h, 0, sizeof(*h));
    h->all = template_list(vh, &h->n);
    h->refs = calloc(h->n ? h->n : 1, sizeof(*h->refs));
    h->pools = calloc(h->n ? h->n : 1, sizeof(*h->pools));
    h->pool_ptrs = calloc(h->n ? h->n : 1, sizeof(*h->pool_ptrs));
    if (!h->all || !h->refs || !h->pools || !h->pool_ptrs)
        return; /* out of memory: this heartbeat goes without them */
    for (size_t i = 0; i < h->n; i++) {
        struct template_version *t = h->all[i];
        if (t->version)
            h->refs[hb->n_templates++] = t->ref;
        if (!t->pool)
            continue;
        struct warm_pool_stats ps;
        warm_pool_get_stats(t->pool, &ps);
        Airlock__Node__V1__WarmPool *p = &h->pools[hb->n_warm_pools];
        airlock__node__v1__warm_pool__init(p);
        p->template_ = t->ref;
        p->target = ps.min;
        p->ready = ps.ready;
        p->max = ps.max;
        p->filling_to = ps.target;
        p->memory_bytes = ps.memory_bytes;
        p->demand_per_s = ps.demand_per_s;
        h->pool_ptrs[hb->n_warm_pools++] = p;
    }
    hb->templates = h->refs;
    hb->warm_pools = h->pool_ptrs;
}

void heartbeat_templates_free(struct heartbeat_templates *h)
{
    for (size_t i = 0; h->all && i < h->n; i++)
        template_release(h->all[i]);
    free(h->all);
    free(h->refs);
    free(h->pools);
    free(h->pool_ptrs);
}
