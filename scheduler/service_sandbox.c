/* CreateSandbox, GetSandbox, ListSandboxes and the lifecycle operations
 * (Delete, Pause, Resume, Suspend): the state machine decides, PostgreSQL
 * records, the node acts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "events.h"
#include "log.h"
#include "nodes.h"
#include "random_id.h"
#include "rpc_client.h"
#include "sandbox_store.h"
#include "scheduler_service.h"

/* A create that times out is sent once more with the same sandbox id: the
 * node answers a duplicate with the sandbox it already has, never a second
 * VM. */
#define CREATE_ATTEMPTS 2

grpc_status_code service_transition(struct scheduler *s, const char *id, enum sandbox_state from,
                                    enum sandbox_state to, const struct transition_note *note,
                                    char *err, size_t errlen)
{
    return service_transition_row(s, id, from, to, note, NULL, err, errlen);
}

grpc_status_code service_transition_row(struct scheduler *s, const char *id,
                                        enum sandbox_state from, enum sandbox_state to,
                                        const struct transition_note *note, PGresult **row,
                                        char *err, size_t errlen)
{
    struct sandbox_event ev;
    grpc_status_code st = store_transition(&s->db, id, from, to, note, &ev, row, err, errlen);
    if (st == GRPC_STATUS_OK)
        events_publish(s->nc, &ev);
    return st;
}

/* Fills the defaults into req, a shallow copy of the received request (its
 * strings stay owned by the original, so literals may replace them). */
static bool create_request_valid(const struct scheduler_config *cfg,
                                 Airlock__Scheduler__V1__CreateSandboxRequest *req, char *err,
                                 size_t errlen)
{
    if (!*req->project_id) {
        snprintf(err, errlen, "project_id: required");
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
        snprintf(err, errlen, "cpus: %u is more than 16", req->cpus);
        return false;
    }
    if (req->memory_mb < 128 || req->memory_mb > 65536) {
        snprintf(err, errlen, "memory_mb: %u is not in 128..65536", req->memory_mb);
        return false;
    }
    if (strlen(req->idempotency_key) > 200) {
        snprintf(err, errlen, "idempotency_key: longer than 200 bytes");
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
static void create_failed(struct scheduler *s, const char *id, grpc_status_code st,
                          const struct transition_note *failed)
{
    char terr[256];
    /* A node that refused the create (egress down or refusing the policy,
     * no capacity, ...) undid everything, and so did a create no node could
     * be asked for: the sandbox never was. It leaves only its audit rows
     * (creating → deleting → deleted with the reason) and frees its
     * idempotency key for a retry. A node that did not answer in time may
     * still have it: that one is an error for a delete (or the reconciler)
     * to clean up. */
    bool never_made = st != GRPC_STATUS_DEADLINE_EXCEEDED;
    grpc_status_code recorded =
        service_transition(s, id, SANDBOX_CREATING, never_made ? SANDBOX_DELETING : SANDBOX_ERROR,
                           failed, terr, sizeof(terr));
    if (recorded == GRPC_STATUS_OK && never_made &&
        (recorded = service_transition(s, id, SANDBOX_DELETING, SANDBOX_DELETED, failed, terr,
                                       sizeof(terr))) == GRPC_STATUS_OK)
        recorded = store_sandbox_release_key(&s->db, id, terr, sizeof(terr));
    if (recorded != GRPC_STATUS_OK)
        log_warn("failed create not recorded", "sandbox=%s error=\"%s\"", id, terr);
}

/* Boots the creating sandbox in *row (placing it first if it has no node
 * yet), then commits creating → running, answered with the running
 * sandbox in *row; or creating → error/deleted with the reason. */
static grpc_status_code create_on_node(struct scheduler *s, PGresult **row,
                                       const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                                       const struct transition_note *note,
                                       struct create_timing *t, char *err, size_t errlen)
{
    char id[72], node[128];
    snprintf(id, sizeof(id), "%s", PQgetvalue(*row, 0, 0));
    snprintf(node, sizeof(node), "%s", store_sandbox_node(*row, 0));
    struct sandbox_msg stored;
    grpc_status_code st = store_sandbox_msg(*row, 0, &stored, err, errlen);
    Airlock__Vmhost__V1__CreateSandboxRequest creq = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    creq.id = id;
    creq.template_ = (char *)store_sandbox_template_id(*row, 0); /* the node's name for it */
    creq.vcpus = stored.msg.cpus;
    creq.memory_mb = stored.msg.memory_mb;
    /* egress injects this project's credentials (vault). */
    creq.project_id = (char *)req->project_id;
    /* The stored policy, not the request's: a retry may carry none. */
    creq.policy = stored.msg.network;
    if (st == GRPC_STATUS_OK && !node[0])
        st = nodes_place(s, id, node, sizeof(node), err, errlen);
    Airlock__Node__V1__NodeReply *reply = NULL;
    for (int attempt = 1; st == GRPC_STATUS_OK && attempt <= CREATE_ATTEMPTS; attempt++) {
        st = nodes_call(s, node, NODE_OP(CREATE), &creq.base, s->cfg.node_timeout_ms, &reply, err, errlen);
        if (st != GRPC_STATUS_DEADLINE_EXCEEDED)
            break;
        log_warn("create timed out, retrying", "request=%s sandbox=%s node=%s attempt=%d",
                 note->request_id, id, node, attempt);
    }
    t->node_answered = clock_monotonic_us();
    store_sandbox_msg_free(&stored);
    PQclear(*row); /* creq and stored pointed into it */
    *row = NULL;
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    if (st == GRPC_STATUS_OK)
        return service_transition_row(s, id, SANDBOX_CREATING, SANDBOX_RUNNING, note, row, err,
                                      errlen);
    char why[1200];
    snprintf(why, sizeof(why), "create on node %s failed: %.900s", node[0] ? node : "(none)", err);
    snprintf(err, errlen, "sandbox %s: %s", id, why);
    struct transition_note failed = { note->who, why, note->request_id };
    create_failed(s, id, st, &failed);
    return st;
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
    char id[64], err[2048];
    PGresult *row = NULL;
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    struct transition_note note = { service_actor(req->actor), "create", req->request_id };
    struct template_choice tc;
    st = service_template_for_create(s, req, &tc, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    st = GRPC_STATUS_INVALID_ARGUMENT;
    if (!create_request_valid(&s->cfg, req, err, sizeof(err)))
        goto out;
    if (random_id("sb_", 10, id, sizeof(id)) < 0) {
        st = GRPC_STATUS_INTERNAL;
        snprintf(err, sizeof(err), "cannot generate an id");
        goto out;
    }
    struct sandbox_event created;
    bool existing;
    st = store_sandbox_insert(&s->db, req, id, s->cfg.node_dead_after_s, &note, &created, &row,
                              &existing, err, sizeof(err));
    t.inserted = clock_monotonic_us();
    if (st != GRPC_STATUS_OK)
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
    st = create_on_node(s, &row, req, &note, &t, err, sizeof(err));
    t.committed = clock_monotonic_us();
    if (st == GRPC_STATUS_FAILED_PRECONDITION) {
        /* A concurrent retry finished it first. */
        st = store_sandbox_get(&s->db, req->project_id, id, &row, err, sizeof(err));
    }
out:
    if (st == GRPC_STATUS_OK) {
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
                 req->project_id, rpc_status_name(st), err);
        rpc_call_finish(call, st, err);
    }
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
    char err[512];
    grpc_status_code st =
        service_reply_sandbox_now(call, s, req->project_id, req->id, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        rpc_call_finish(call, st, err);
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
    char err[512];
    grpc_status_code st = store_sandbox_list(&s->db, req->project_id, &rows, err, sizeof(err));
    protobuf_c_message_free_unpacked(&req->base, NULL);
    if (st != GRPC_STATUS_OK) {
        rpc_call_finish(call, st, err);
        return;
    }
    struct sandbox_msgs list;
    st = service_sandbox_msgs(&rows, 1, &list, err, sizeof(err));
    if (st == GRPC_STATUS_OK) {
        Airlock__Scheduler__V1__ListSandboxesResponse resp =
            AIRLOCK__SCHEDULER__V1__LIST_SANDBOXES_RESPONSE__INIT;
        resp.n_sandboxes = list.n;
        resp.sandboxes = list.ptrs;
        rpc_call_send(call, &resp.base);
    }
    rpc_call_finish(call, st, st == GRPC_STATUS_OK ? NULL : err);
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

/* The node's part of op; NOT_FOUND on delete means already gone. */
static grpc_status_code lifecycle_on_node(struct scheduler *s, enum sandbox_op op, const char *id,
                                          const char *node, char *err, size_t errlen)
{
    if (!*node)
        return GRPC_STATUS_OK; /* never placed: nothing runs anywhere */
    Airlock__Vmhost__V1__SandboxRef nreq = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    nreq.id = (char *)id;
    Airlock__Node__V1__NodeReply *reply = NULL;
    grpc_status_code st = nodes_call(s, node, lifecycle_node_op(op), &nreq.base,
                                     s->cfg.node_timeout_ms, &reply, err, errlen);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    if (op == SANDBOX_OP_DELETE && st == GRPC_STATUS_NOT_FOUND)
        return GRPC_STATUS_OK;
    return st;
}

/* A delete whose node did not answer may still go ahead when that node is
 * gone (silent past --node-dead-after-s): its sandboxes cannot be
 * reached, and users must be able to get rid of them. why says so. */
static bool node_gone_for_delete(struct scheduler *s, grpc_status_code st, const char *node,
                                 char *why, size_t whylen)
{
    char since[64], err[256];
    if ((st != GRPC_STATUS_UNAVAILABLE && st != GRPC_STATUS_DEADLINE_EXCEEDED) ||
        !nodes_gone(s, node, since, sizeof(since), err, sizeof(err)))
        return false;
    snprintf(why, whylen,
             "delete while node %s is gone (no heartbeat since %s): its VM is removed if the "
             "node returns",
             node, since[0] ? since : "ever");
    return true;
}

grpc_status_code service_sandbox_op(struct scheduler *s, const char *project_id, const char *id,
                                    enum sandbox_op op, const struct transition_note *note,
                                    char *node, size_t nodelen, char *err, size_t errlen)
{
    PGresult *row = NULL;
    node[0] = '\0';
    grpc_status_code st = store_sandbox_get(&s->db, project_id, id, &row, err, errlen);
    if (st != GRPC_STATUS_OK)
        return st;
    enum sandbox_state from;
    struct sandbox_plan plan;
    if (sandbox_state_parse(store_sandbox_state(row, 0), &from) < 0) {
        snprintf(err, errlen, "sandbox %s has an unknown state %s", id, store_sandbox_state(row, 0));
        PQclear(row);
        return GRPC_STATUS_INTERNAL;
    }
    snprintf(node, nodelen, "%s", store_sandbox_node(row, 0));
    PQclear(row);
    if (sandbox_op_plan(op, from, id, &plan, err, errlen) < 0)
        return GRPC_STATUS_FAILED_PRECONDITION;
    bool two_step = plan.first != plan.done;
    /* Two-step operations are recorded before the node acts (a crash in
     * between leaves "deleting"/"suspending", which a retry or the
     * reconciler finishes); one-step ones once the node has done it. */
    if (two_step && plan.record_first) {
        st = service_transition(s, id, from, plan.first, note, err, errlen);
        if (st != GRPC_STATUS_OK)
            return st;
    }
    st = lifecycle_on_node(s, op, id, node, err, errlen);
    struct transition_note gone_note = *note;
    char why[600];
    if (op == SANDBOX_OP_DELETE && node_gone_for_delete(s, st, node, why, sizeof(why))) {
        /* The VM goes with its node: if that node ever comes back, the
         * reconciler deletes what the row says is deleted. */
        log_warn("sandbox deleted without its node", "sandbox=%s node=%s why=\"%s\"", id, node,
                 why);
        gone_note.why = why;
        note = &gone_note;
        st = GRPC_STATUS_OK;
    }
    if (st != GRPC_STATUS_OK) {
        if (two_step && op != SANDBOX_OP_DELETE) {
            /* Nothing changed on the node: back to where it was. */
            struct transition_note undo = { note->who, err, note->request_id };
            char uerr[256];
            if (service_transition(s, id, plan.first, from, &undo, uerr, sizeof(uerr)) !=
                GRPC_STATUS_OK)
                log_warn("undo not recorded", "sandbox=%s error=\"%s\"", id, uerr);
        }
        return st;
    }
    return service_transition(s, id, two_step ? plan.first : from, plan.done, note, err, errlen);
}

static void sandbox_lifecycle(struct rpc_call *call, struct scheduler *s, enum sandbox_op op)
{
    Airlock__Scheduler__V1__SandboxRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    PGresult *row = NULL;
    char err[2048], node[128];
    struct transition_note note = { service_actor(req->actor), sandbox_op_name(op), req->request_id };
    grpc_status_code st = service_sandbox_op(s, req->project_id, req->id, op, &note, node,
                                             sizeof(node), err, sizeof(err));
    if (st != GRPC_STATUS_OK)
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
    st = store_sandbox_get(&s->db, req->project_id, req->id, &row, err, sizeof(err));
out:
    if (st == GRPC_STATUS_OK) {
        log_info("sandbox lifecycle", "request=%s sandbox=%s op=%s state=%s", req->request_id,
                 req->id, sandbox_op_name(op), store_sandbox_state(row, 0));
        service_reply_sandbox(call, row);
    } else {
        log_info("sandbox lifecycle refused", "request=%s sandbox=%s op=%s status=%s error=\"%s\"",
                 req->request_id, req->id, sandbox_op_name(op), rpc_status_name(st), err);
        rpc_call_finish(call, st, err);
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
