/* CreateSandbox, GetSandbox, ListSandboxes and the lifecycle operations
 * (Delete, Pause, Resume, Suspend): the state machine decides, PostgreSQL
 * records, the node acts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint_store.h"
#include "clock.h"
#include "events.h"
#include "log.h"
#include "node_store.h"
#include "nodes.h"
#include "random_id.h"
#include "rpc_client.h"
#include "rpc_err.h"
#include "sandbox_store.h"
#include "scheduler_service.h"
#include "service_resume.h"
#include "volume_attach.h"
#include "volume_store.h"

/* A create that times out is sent once more with the same sandbox id: the
 * node answers a duplicate with the sandbox it already has, never a second
 * VM. */
#define CREATE_ATTEMPTS 2

/* store_transition (ask: the quotas it needs, NULL for none), and its
 * event once committed. */
static int transition(struct scheduler *s, const char *id, enum sandbox_state from,
                      enum sandbox_state to, const struct transition_note *note,
                      const struct quota_ask *ask, PGresult **row, struct airlock_error *e)
{
    struct sandbox_event ev;
    int rc = store_transition(&s->db, id, from, to, note, ask, &ev, row, e);
    if (rc == 0)
        events_publish(s->nc, &ev);
    return rc;
}

int service_transition(struct scheduler *s, const char *id, enum sandbox_state from,
                       enum sandbox_state to, const struct transition_note *note,
                       struct airlock_error *e)
{
    return transition(s, id, from, to, note, NULL, NULL, e);
}

int service_transition_admitted(struct scheduler *s, const char *id, enum sandbox_state from,
                                enum sandbox_state to, const struct transition_note *note,
                                const struct quota_ask *ask, struct airlock_error *e)
{
    return transition(s, id, from, to, note, ask, NULL, e);
}

int service_transition_row(struct scheduler *s, const char *id, enum sandbox_state from,
                           enum sandbox_state to, const struct transition_note *note,
                           PGresult **row, struct airlock_error *e)
{
    return transition(s, id, from, to, note, NULL, row, e);
}

/* Fills the defaults into req, a shallow copy of the received request (its
 * strings stay owned by the original, so literals may replace them); false
 * with e naming the field that is invalid. */
static bool create_request_valid(const struct scheduler_config *cfg,
                                 Airlock__Scheduler__V1__CreateSandboxRequest *req,
                                 struct airlock_error *e)
{
    if (!*req->project_id) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "project_id: required");
        return false;
    }
    if (!*req->template_)
        req->template_ = "default";
    if (req->cpus == 0)
        req->cpus = 1;
    if (req->memory_mb == 0)
        req->memory_mb = 512;
    /* The defaults are stored with the sandbox: a later change of the
     * flags applies to new sandboxes only. 0 stored = never. */
    if (req->idle_timeout_s == 0)
        req->idle_timeout_s = (uint32_t)cfg->idle_timeout_s;
    if (req->ttl_s == 0)
        req->ttl_s = (uint32_t)cfg->ttl_s;
    if (req->cpus > 16) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "cpus: %u is more than 16", req->cpus);
        return false;
    }
    if (req->memory_mb < 128 || req->memory_mb > 65536) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "memory_mb: %u is not in 128..65536",
                          req->memory_mb);
        return false;
    }
    /* A full checkpoint stops the VM for its migration and uploads it:
     * not more often than every 10 s. */
    if (req->checkpoint_every_s != 0 &&
        (req->checkpoint_every_s < CHECKPOINT_EVERY_MIN_S ||
         req->checkpoint_every_s > CHECKPOINT_EVERY_MAX_S)) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "checkpoint_every_s: %u is not 0 or %d..%d",
                          req->checkpoint_every_s, CHECKPOINT_EVERY_MIN_S,
                          CHECKPOINT_EVERY_MAX_S);
        return false;
    }
    if (*req->on_timeout && strcmp(req->on_timeout, "delete") != 0 &&
        strcmp(req->on_timeout, "suspend") != 0) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "on_timeout: \"%s\" is not delete or suspend",
                          req->on_timeout);
        return false;
    }
    if (strlen(req->idempotency_key) > 200) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "idempotency_key: longer than 200 bytes");
        return false;
    }
    /* env, metadata and network are checked as they are stored
     * (store_sandbox_insert); egress judges the policy's values when the
     * node attaches. */
    return true;
}

/* Where a create's time went, in µs (the "sandbox created" log line). */
struct create_timing {
    int64_t started, inserted, node_answered, committed;
};

/* Records a create that failed on the node: creating → error when the node
 * may still have it, else creating → deleting → deleted with the reason. */
static void create_failed(struct scheduler *s, const char *id, bool maybe_made,
                          const struct transition_note *failed)
{
    struct airlock_error e;
    /* A node that refused the create (egress down or refusing the policy,
     * no capacity, ...) undid everything, and so did a create no node could
     * be asked for: the sandbox never was. It leaves only its audit rows
     * (creating → deleting → deleted with the reason) and frees its
     * idempotency key for a retry. A node that did not answer (in time, or
     * at all: it died meanwhile) may still have it: that one is an error
     * for a delete (or the reconciler) to clean up. */
    int recorded = service_transition(s, id, SANDBOX_CREATING,
                                      maybe_made ? SANDBOX_ERROR : SANDBOX_DELETING, failed, &e);
    if (recorded == 0 && !maybe_made &&
        (recorded = service_transition(s, id, SANDBOX_DELETING, SANDBOX_DELETED, failed, &e)) == 0)
        recorded = store_sandbox_release_key(&s->db, id, &e);
    if (recorded < 0)
        log_warn("failed create not recorded", "sandbox=%s error=\"%s\"", id, e.message);
}

/* The node for sandbox id, which has none yet: any with room, or only
 * the node of its volumes (unavailable naming it when that one is down or
 * full: the volumes are there and nowhere else). */
static int create_place(struct scheduler *s, const char *id, const struct volume_attach *volumes,
                        char *node, size_t nodelen, struct airlock_error *e)
{
    if (!*volumes->node)
        return nodes_place(s, id, node, nodelen, e);
    return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                             "volumes: %s is on node %s, which is not live, is draining or has "
                             "no room for the sandbox; a sandbox with it runs only there",
                             volumes->why_node, volumes->node);
}

/* The node's attachments from the stored volumes; the volumes it makes
 * (their first use) are recorded as on that node first, so that no later
 * sandbox of theirs goes elsewhere even when this create fails after the
 * node made them. */
static int create_volumes(struct scheduler *s, const char *id, const char *node,
                          const char *stored, struct volume_node_list *out,
                          struct airlock_error *e)
{
    int rc = volume_node_list(stored, out, e);
    if (rc == 0 && out->n > 0)
        rc = store_volumes_first_use(&s->db, id, node, e);
    return rc;
}

/* Boots the creating sandbox in *row (placing it first if it has no node
 * yet), then commits creating → running, answered with the running
 * sandbox in *row; or creating → error/deleted with the reason. */
static int create_on_node(struct scheduler *s, PGresult **row,
                          const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                          const struct volume_attach *volumes,
                          const struct transition_note *note, struct create_timing *t,
                          struct airlock_error *e)
{
    char id[72], node[128];
    snprintf(id, sizeof(id), "%s", PQgetvalue(*row, 0, 0));
    snprintf(node, sizeof(node), "%s", store_sandbox_node(*row, 0));
    struct sandbox_msg stored;
    int rc = store_sandbox_msg(*row, 0, &stored, e);
    Airlock__Vmhost__V1__CreateSandboxRequest creq = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    creq.id = id;
    creq.template_ = (char *)store_sandbox_template_id(*row, 0); /* the node's name for it */
    creq.vcpus = stored.msg.cpus;
    creq.memory_mb = stored.msg.memory_mb;
    /* egress injects this project's credentials (vault). */
    creq.project_id = (char *)req->project_id;
    /* The stored policy, not the request's: a retry may carry none. */
    creq.policy = stored.msg.network;
    /* A node that lacks a published template fetches it from there. */
    char tmpl_set[TEMPLATE_ID_SIZE] = "";
    if (rc == 0 && strcmp(creq.template_, TEMPLATE_DEFAULT_NAME) != 0)
        rc = store_template_object_of(&s->db, creq.template_, tmpl_set, sizeof(tmpl_set), e);
    creq.template_store_object = tmpl_set;
    if (rc == 0 && !node[0] && (rc = create_place(s, id, volumes, node, sizeof(node), e)) < 0)
        metric_add(s->metrics.placement_failures, METRIC_LABELS("create"), 1);
    struct volume_node_list attach = { 0 };
    if (rc == 0)
        rc = create_volumes(s, id, node, store_sandbox_volumes(*row, 0), &attach, e);
    creq.volumes = attach.ptrs;
    creq.n_volumes = attach.n;
    Airlock__Node__V1__NodeReply *reply = NULL;
    bool maybe_made = false; /* an attempt went out unanswered */
    for (int attempt = 1; rc == 0 && attempt <= CREATE_ATTEMPTS; attempt++) {
        rc = nodes_call(s, node, NODE_OP(CREATE), &creq.base, s->cfg.node_timeout_ms, &reply, e);
        maybe_made = maybe_made || rc == NODES_UNANSWERED;
        if (rc == 0 || e->class != AIRLOCK_ERR_TIMEOUT)
            break;
        log_warn("create timed out, retrying", "request=%s sandbox=%s node=%s attempt=%d",
                 note->request_id, id, node, attempt);
    }
    t->node_answered = clock_monotonic_us();
    volume_node_list_free(&attach);
    store_sandbox_msg_free(&stored);
    PQclear(*row); /* creq and stored pointed into it */
    *row = NULL;
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    if (rc == 0)
        return service_transition_row(s, id, SANDBOX_CREATING, SANDBOX_RUNNING, note, row, e);
    /* The reason, recorded with the failed create; the caller is told
     * whose create it was too. */
    airlock_error_prefix(e, "create on node %s failed: ", node[0] ? node : "(none)");
    struct transition_note failed = { note->who, e->message, note->request_id };
    create_failed(s, id, maybe_made, &failed);
    if (maybe_made) /* what the caller can do about it */
        airlock_error_suffix(e, "; the sandbox is left in error: delete it (a VM the node may "
                                "have made is removed when the node is reconciled)");
    return airlock_error_prefix(e, "sandbox %s: ", id);
}

void service_sandbox_create(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__CreateSandboxRequest *received = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__create_sandbox_request__descriptor);
    if (!received)
        return;
    Airlock__Scheduler__V1__CreateSandboxRequest effective = *received, *req = &effective;
    struct create_timing t = { .started = clock_monotonic_us() };
    struct airlock_error e;
    char id[64];
    PGresult *row = NULL;
    struct transition_note note = { service_actor(req->actor), "create", req->request_id };
    struct template_choice tc;
    struct volume_attach volumes = { 0 };
    int rc = service_template_for_create(s, req, &tc, &e);
    if (rc < 0)
        goto out;
    rc = -1;
    if (!create_request_valid(&s->cfg, req, &e))
        goto out;
    if (random_id("sb_", 10, id, sizeof(id)) < 0) {
        airlock_error_set(&e, AIRLOCK_ERR_INTERNAL, "cannot generate an id");
        goto out;
    }
    rc = volume_attach_resolve(s, req, &volumes, &e);
    if (rc < 0)
        goto out;
    struct sandbox_event created;
    bool existing;
    rc = store_sandbox_insert(&s->db, req, id, &volumes, s->cfg.node_dead_after_s,
                              &s->cfg.quota_defaults, &note, &created, &row, &existing, &e);
    t.inserted = clock_monotonic_us();
    if (rc < 0 && volume_attach_claim_failed(&e))
        rc = volume_attach_refused(s, req, &e);
    if (rc < 0)
        goto out;
    if (!existing) {
        events_publish(s->nc, &created);
    } else {
        /* A retry: report the sandbox the first attempt made, and finish
         * its creation if that attempt did not get to. */
        snprintf(id, sizeof(id), "%s", PQgetvalue(row, 0, 0));
        log_info("create retried", "request=%s sandbox=%s state=%s", req->request_id, id,
                 store_sandbox_state(row, 0));
        if (strcmp(store_sandbox_state(row, 0), "creating") != 0)
            goto out;
    }
    rc = create_on_node(s, &row, req, &volumes, &note, &t, &e);
    t.committed = clock_monotonic_us();
    if (rc < 0 && e.class == AIRLOCK_ERR_STATE) {
        /* A concurrent retry finished it first. */
        rc = store_sandbox_get(&s->db, req->project_id, id, &row, &e);
    }
out:
    if (rc == 0) {
        int64_t done = clock_monotonic_us();
        /* Where the time went: the insert (template check, placement,
         * sandbox and audit rows: one statement), the node (NATS request,
         * vmhost's create), the commit of running, and the whole call. */
        log_info("sandbox created",
                 "request=%s project=%s sandbox=%s node=%s state=%s ms=%lld us=%lld "
                 "insert_us=%lld node_us=%lld commit_us=%lld",
                 req->request_id, req->project_id, id, store_sandbox_node(row, 0),
                 store_sandbox_state(row, 0), (long long)((done - t.started) / 1000),
                 (long long)(done - t.started),
                 (long long)(t.inserted - t.started),
                 (long long)(t.node_answered ? t.node_answered - t.inserted : 0),
                 (long long)(t.node_answered ? t.committed - t.node_answered : 0));
        service_reply_sandbox(call, row);
    } else {
        log_warn("create failed", "request=%s project=%s status=%s error=\"%s\"", req->request_id,
                 req->project_id, airlock_error_status_name(&e), e.message);
        rpc_call_finish_error(call, &e);
    }
    volume_attach_free(&volumes);
    PQclear(row);
    protobuf_c_message_free_unpacked(&received->base, NULL);
}

void service_sandbox_get(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__SandboxRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    if (service_reply_sandbox_now(call, s, req->project_id, req->id, &e) < 0)
        rpc_call_finish_error(call, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_sandbox_get_for_ingress(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__SandboxRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    PGresult *row = NULL;
    struct airlock_error e;
    if (store_sandbox_get_any_project(&s->db, req->id, &row, &e) == 0)
        service_reply_sandbox(call, row);
    else
        rpc_call_finish_error(call, &e);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_sandbox_list(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__ListSandboxesRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__list_sandboxes_request__descriptor);
    if (!req)
        return;
    PGresult *rows = NULL;
    struct airlock_error e;
    int rc = store_sandbox_list(&s->db, req->project_id, &rows, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
    if (rc < 0) {
        rpc_call_finish_error(call, &e);
        return;
    }
    struct sandbox_msgs list;
    rc = service_sandbox_msgs(&rows, 1, &list, &e);
    if (rc == 0) {
        Airlock__Scheduler__V1__ListSandboxesResponse resp =
            AIRLOCK__SCHEDULER__V1__LIST_SANDBOXES_RESPONSE__INIT;
        resp.n_sandboxes = list.n;
        resp.sandboxes = list.ptrs;
        rpc_call_send(call, &resp.base);
    }
    rpc_call_finish_result(call, rc, &e);
    service_sandbox_msgs_free(&list);
    PQclear(rows);
}

/* The node operation of a lifecycle op (the node has no others of them). */
static node_op lifecycle_node_op(enum sandbox_op op)
{
    switch (op) {
    case SANDBOX_OP_PAUSE: return NODE_OP(PAUSE);
    case SANDBOX_OP_RESUME: return NODE_OP(RESUME);
    case SANDBOX_OP_SUSPEND: return NODE_OP(SUSPEND);
    case SANDBOX_OP_DELETE: return NODE_OP(DELETE);
    default: return NODE_OP(UNSPECIFIED); /* nodes_call refuses it */
    }
}

/* The node's part of op; not found on delete means already gone. A
 * suspend's snapshot in the shared store goes into stored ("" when the
 * node has no store). */
static int lifecycle_on_node(struct scheduler *s, enum sandbox_op op, const char *id,
                             const char *node, char *stored, size_t storedlen,
                             struct airlock_error *e)
{
    stored[0] = '\0';
    if (!*node)
        return 0; /* never placed: nothing runs anywhere */
    Airlock__Vmhost__V1__SandboxRef nreq = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    nreq.id = (char *)id;
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc =
        nodes_call(s, node, lifecycle_node_op(op), &nreq.base, s->cfg.node_timeout_ms, &reply, e);
    if (rc == 0 && op == SANDBOX_OP_SUSPEND && reply->sandbox && reply->sandbox->store_object)
        snprintf(stored, storedlen, "%s", reply->sandbox->store_object);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    if (rc < 0 && op == SANDBOX_OP_DELETE && e->class == AIRLOCK_ERR_NOT_FOUND)
        return 0;
    return rc;
}

/* A delete whose node did not answer (refused) may still go ahead when
 * that node is gone (silent past --node-dead-after-s): its sandboxes
 * cannot be reached, and users must be able to get rid of them. why says
 * so. */
static bool node_gone_for_delete(struct scheduler *s, const struct airlock_error *refused,
                                 const char *node, char *why, size_t whylen)
{
    struct airlock_error e;
    char since[64];
    if ((refused->class != AIRLOCK_ERR_UNAVAILABLE && refused->class != AIRLOCK_ERR_TIMEOUT) ||
        !nodes_gone(s, node, since, sizeof(since), &e))
        return false;
    snprintf(why, whylen,
             "delete while node %s is gone (no heartbeat since %s): its VM is removed if the "
             "node returns",
             node, since[0] ? since : "ever");
    return true;
}

int service_sandbox_op(struct scheduler *s, const char *project_id, const char *id,
                       enum sandbox_op op, const struct transition_note *note, char *node,
                       size_t nodelen, struct airlock_error *e)
{
    PGresult *row = NULL;
    node[0] = '\0';
    int rc = store_sandbox_get(&s->db, project_id, id, &row, e);
    if (rc < 0)
        return rc;
    enum sandbox_state from;
    struct sandbox_plan plan;
    if (sandbox_state_parse(store_sandbox_state(row, 0), &from) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "sandbox %s has an unknown state %s", id,
                          store_sandbox_state(row, 0));
        PQclear(row);
        return -1;
    }
    snprintf(node, nodelen, "%s", store_sandbox_node(row, 0));
    char stored[256];
    snprintf(stored, sizeof(stored), "%s", store_sandbox_store_object(row, 0));
    /* What a resume of a suspended sandbox takes again. */
    struct quota_ask ask = { project_id, { { 0 } }, &s->cfg.quota_defaults };
    store_sandbox_ask(row, 0, 1, &ask.request);
    PQclear(row);
    if (sandbox_op_plan(op, from, id, &plan, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_STATE);
    /* A suspended sandbox resuming takes its node's vCPUs and memory
     * again: new work, which a draining node takes no more (one whose
     * suspend is in the shared store resumes elsewhere: service_resume.h). */
    if (sandbox_transition_admitted(from, plan.first) && *node && !*stored &&
        store_node_takes_work(&s->db, node, "no suspended sandbox resumes there", e) < 0)
        return airlock_error_prefix(e, "sandbox %s: ", id);
    bool two_step = plan.first != plan.done;
    /* Two-step operations are recorded before the node acts (a crash in
     * between leaves "deleting"/"suspending", which a retry or the
     * reconciler finishes); one-step ones once the node has done it. */
    if (two_step && plan.record_first) {
        rc = transition(s, id, from, plan.first, note,
                        sandbox_transition_admitted(from, plan.first) ? &ask : NULL, NULL, e);
        if (rc < 0)
            return rc;
    }
    if (op == SANDBOX_OP_RESUME && from == SANDBOX_SUSPENDED && *stored) {
        rc = service_resume_stored(s, id, stored, node, nodelen, e);
    } else {
        rc = lifecycle_on_node(s, op, id, node, stored, sizeof(stored), e);
        /* Without its suspend in the store it resumes on its node alone:
         * that node's "no room" is the resume's failed placement (from the
         * store, nodes_place_elsewhere counts it). */
        if (rc < 0 && op == SANDBOX_OP_RESUME && from == SANDBOX_SUSPENDED &&
            e->class == AIRLOCK_ERR_CAPACITY)
            metric_add(s->metrics.placement_failures, METRIC_LABELS("resume"), 1);
        /* Where any node resumes it from (a failure leaves it to its node). */
        struct airlock_error store_e;
        if (rc == 0 && op == SANDBOX_OP_SUSPEND && *stored &&
            store_sandbox_set_stored(&s->db, id, node, stored, &store_e) < 0)
            log_warn("suspend not recorded as in the snapshot store: only its node resumes it",
                     "sandbox=%s error=\"%s\"", id, store_e.message);
    }
    struct transition_note gone_note = *note;
    char why[600];
    if (rc < 0 && op == SANDBOX_OP_DELETE && node_gone_for_delete(s, e, node, why, sizeof(why))) {
        /* The VM goes with its node: if that node ever comes back, the
         * reconciler deletes what the row says is deleted. */
        log_warn("sandbox deleted without its node", "sandbox=%s node=%s why=\"%s\"", id, node,
                 why);
        gone_note.why = why;
        note = &gone_note;
        rc = 0;
    }
    if (rc == NODES_UNANSWERED && two_step) {
        /* The node may have done it: the row stays in the state recorded
         * first, which reconciliation finishes the way the node shows
         * it once the node answers again. */
        return airlock_error_suffix(e, "; the sandbox stays %s until the node is reconciled",
                                    sandbox_state_name(plan.first));
    }
    if (rc < 0) {
        if (two_step && op != SANDBOX_OP_DELETE) {
            /* Nothing changed on the node: back to where it was. */
            struct transition_note undo = { note->who, e->message, note->request_id };
            struct airlock_error undo_error; /* e is what the caller is answered */
            if (service_transition(s, id, plan.first, from, &undo, &undo_error) < 0)
                log_warn("undo not recorded", "sandbox=%s error=\"%s\"", id, undo_error.message);
        }
        return rc;
    }
    return service_transition(s, id, two_step ? plan.first : from, plan.done, note, e);
}

static void sandbox_lifecycle(struct rpc_call *call, struct scheduler *s, enum sandbox_op op)
{
    Airlock__Scheduler__V1__SandboxRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    PGresult *row = NULL;
    struct airlock_error e;
    char node[128];
    struct transition_note note = { service_actor(req->actor), sandbox_op_name(op), req->request_id };
    int rc = service_sandbox_op(s, req->project_id, req->id, op, &note, node, sizeof(node), &e);
    if (rc < 0)
        goto out;
    /* A deleted sandbox is no longer visible to Get: answer directly. */
    if (op == SANDBOX_OP_DELETE) {
        Airlock__Scheduler__V1__Sandbox gone = AIRLOCK__SCHEDULER__V1__SANDBOX__INIT;
        gone.id = req->id;
        gone.project_id = req->project_id;
        gone.state = "deleted";
        log_info("sandbox deleted", "request=%s sandbox=%s node=%s", req->request_id, req->id,
                 node);
        rpc_call_send(call, &gone.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
        protobuf_c_message_free_unpacked(&req->base, NULL);
        return;
    }
    rc = store_sandbox_get(&s->db, req->project_id, req->id, &row, &e);
out:
    if (rc == 0) {
        log_info("sandbox lifecycle", "request=%s sandbox=%s op=%s state=%s", req->request_id,
                 req->id, sandbox_op_name(op), store_sandbox_state(row, 0));
        service_reply_sandbox(call, row);
    } else {
        log_info("sandbox lifecycle refused", "request=%s sandbox=%s op=%s status=%s error=\"%s\"",
                 req->request_id, req->id, sandbox_op_name(op), airlock_error_status_name(&e),
                 e.message);
        rpc_call_finish_error(call, &e);
    }
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_sandbox_delete(struct rpc_call *call, void *ctx)
{
    sandbox_lifecycle(call, ctx, SANDBOX_OP_DELETE);
}

void service_sandbox_pause(struct rpc_call *call, void *ctx)
{
    sandbox_lifecycle(call, ctx, SANDBOX_OP_PAUSE);
}

void service_sandbox_resume(struct rpc_call *call, void *ctx)
{
    sandbox_lifecycle(call, ctx, SANDBOX_OP_RESUME);
}

void service_sandbox_suspend(struct rpc_call *call, void *ctx)
{
    sandbox_lifecycle(call, ctx, SANDBOX_OP_SUSPEND);
}
