/* CreateCheckpoint, ListCheckpoints, DeleteCheckpoint, RestoreCheckpoint
 * and ForkSandbox: the state machine decides (sandbox_state.c), the node
 * acts (airlock.node.<id>.checkpoint|checkpoint_delete|restore|fork), and
 * PostgreSQL records the checkpoints and the forks as sandboxes of the same
 * project on the same node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint_store.h"
#include "events.h"
#include "log.h"
#include "rpc_client.h"
#include "sandbox_store.h"
#include "scheduler_service.h"

/* field: how the caller named it ("name", "checkpoint"). */
static bool checkpoint_name_valid(const char *field, const char *name, char *err, size_t errlen)
{
    size_t n = strlen(name);
    if (n >= 1 && n <= 64 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n)
        return true;
    snprintf(err, errlen, "%s: \"%.80s\" is not 1..64 of [a-z0-9_-]", field, name);
    return false;
}

void service_finish_checkpoint_op(struct rpc_call *call, const char *what, const char *request_id,
                   const char *sandbox_id, grpc_status_code st, const char *err)
{
    if (st == GRPC_STATUS_OK) {
        log_info("sandbox checkpoint op", "request=%s sandbox=%s op=%s", request_id, sandbox_id,
                 what);
        return;
    }
    log_info("sandbox checkpoint op refused", "request=%s sandbox=%s op=%s status=%s error=\"%s\"",
             request_id, sandbox_id, what, rpc_status_name(st), err);
    rpc_call_finish(call, st, err);
}

void service_checkpoint_create(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__CheckpointRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__checkpoint_request__descriptor);
    if (!req)
        return;
    PGresult *row = NULL;
    Airlock__Node__V1__NodeReply *reply = NULL;
    char err[2048];
    struct sandbox_plan plan;
    enum sandbox_state from;
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    bool full = strcmp(req->kind, "full") == 0;
    if (!checkpoint_name_valid("name", req->name, err, sizeof(err)))
        goto out;
    if (!full && strcmp(req->kind, "disk") != 0) {
        snprintf(err, sizeof(err), "kind: \"%.40s\" is not disk or full", req->kind);
        goto out;
    }
    st = service_sandbox_for_op(s, req->project_id, req->sandbox_id, SANDBOX_OP_CHECKPOINT, &row, &plan,
                        &from, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    Airlock__Vmhost__V1__CreateCheckpointRequest nreq =
        AIRLOCK__VMHOST__V1__CREATE_CHECKPOINT_REQUEST__INIT;
    nreq.sandbox_id = req->sandbox_id;
    nreq.name = req->name;
    nreq.kind = full ? AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL
                     : AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK;
    st = service_call_node(s, row, NODE_OP(CHECKPOINT), &nreq.base, &reply, err, sizeof(err));
    if (st == GRPC_STATUS_OK && !reply->checkpoint) {
        snprintf(err, sizeof(err), "node %s answered checkpoint without one",
                 store_sandbox_node(row, 0));
        st = GRPC_STATUS_INTERNAL;
    }
    if (st != GRPC_STATUS_OK)
        goto out;
    Airlock__Scheduler__V1__Checkpoint c = AIRLOCK__SCHEDULER__V1__CHECKPOINT__INIT;
    c.sandbox_id = req->sandbox_id;
    c.name = req->name;
    c.kind = full ? "full" : "disk";
    c.created_unix_ms = reply->checkpoint->created_unix_ms;
    st = store_checkpoint_insert(&s->db, req->sandbox_id, c.name, c.kind, c.created_unix_ms, err,
                                 sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    rpc_call_send(call, &c.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    service_finish_checkpoint_op(call, "checkpoint", req->request_id, req->sandbox_id, st, err);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_checkpoint_list(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__SandboxRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__sandbox_ref__descriptor);
    if (!req)
        return;
    PGresult *row = NULL, *rows = NULL;
    Airlock__Scheduler__V1__Checkpoint *msgs = NULL, **ptrs = NULL;
    char err[512];
    grpc_status_code st = store_sandbox_get(&s->db, req->project_id, req->id, &row, err, sizeof(err));
    if (st == GRPC_STATUS_OK)
        st = store_checkpoint_list(&s->db, req->id, &rows, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    int n = PQntuples(rows);
    msgs = calloc((size_t)n + 1, sizeof(*msgs));
    ptrs = calloc((size_t)n + 1, sizeof(*ptrs));
    if (!msgs || !ptrs) {
        st = GRPC_STATUS_RESOURCE_EXHAUSTED;
        snprintf(err, sizeof(err), "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        store_checkpoint_msg(rows, i, &msgs[i]);
        ptrs[i] = &msgs[i];
    }
    Airlock__Scheduler__V1__ListCheckpointsResponse resp =
        AIRLOCK__SCHEDULER__V1__LIST_CHECKPOINTS_RESPONSE__INIT;
    resp.n_checkpoints = (size_t)n;
    resp.checkpoints = ptrs;
    rpc_call_send(call, &resp.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    if (st != GRPC_STATUS_OK)
        rpc_call_finish(call, st, err);
    free(msgs);
    free(ptrs);
    PQclear(rows);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_checkpoint_delete(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__CheckpointRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__checkpoint_request__descriptor);
    if (!req)
        return;
    PGresult *row = NULL;
    char err[2048];
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    if (!checkpoint_name_valid("name", req->name, err, sizeof(err)))
        goto out;
    st = store_sandbox_get(&s->db, req->project_id, req->sandbox_id, &row, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    if (!*store_sandbox_node(row, 0)) {
        snprintf(err, sizeof(err), "checkpoint %.80s of sandbox %s not found", req->name,
                 req->sandbox_id);
        st = GRPC_STATUS_NOT_FOUND;
        goto out;
    }
    Airlock__Vmhost__V1__CheckpointRequest nreq = AIRLOCK__VMHOST__V1__CHECKPOINT_REQUEST__INIT;
    nreq.sandbox_id = req->sandbox_id;
    nreq.name = req->name;
    st = service_call_node(s, row, NODE_OP(CHECKPOINT_DELETE), &nreq.base, NULL, err, sizeof(err));
    if (st == GRPC_STATUS_OK || st == GRPC_STATUS_NOT_FOUND) {
        /* Gone from the node either way: drop the record too. */
        char derr[256];
        if (store_checkpoint_delete(&s->db, req->sandbox_id, req->name, derr, sizeof(derr)) !=
            GRPC_STATUS_OK)
            log_warn("checkpoint record not deleted", "sandbox=%s checkpoint=%s error=\"%s\"",
                     req->sandbox_id, req->name, derr);
    }
    if (st != GRPC_STATUS_OK)
        goto out;
    Airlock__Scheduler__V1__Checkpoint c = AIRLOCK__SCHEDULER__V1__CHECKPOINT__INIT;
    c.sandbox_id = req->sandbox_id;
    c.name = req->name;
    rpc_call_send(call, &c.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    service_finish_checkpoint_op(call, "checkpoint_delete", req->request_id, req->sandbox_id, st, err);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_checkpoint_restore(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__CheckpointRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__checkpoint_request__descriptor);
    if (!req)
        return;
    PGresult *row = NULL;
    char err[2048];
    struct sandbox_plan plan;
    enum sandbox_state from;
    struct transition_note note = { service_actor(req->actor), "restore", req->request_id };
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    if (!checkpoint_name_valid("checkpoint", req->name, err, sizeof(err)))
        goto out;
    st = service_sandbox_for_op(s, req->project_id, req->sandbox_id, SANDBOX_OP_RESTORE, &row, &plan,
                        &from, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    Airlock__Vmhost__V1__CheckpointRequest nreq = AIRLOCK__VMHOST__V1__CHECKPOINT_REQUEST__INIT;
    nreq.sandbox_id = req->sandbox_id;
    nreq.name = req->name;
    st = service_call_node(s, row, NODE_OP(RESTORE), &nreq.base, NULL, err, sizeof(err));
    PQclear(row);
    row = NULL;
    if (st == GRPC_STATUS_INTERNAL) {
        /* The node stopped the VM and could not bring it back. */
        struct transition_note failed = { note.who, err, note.request_id };
        char terr[256];
        if (service_transition(s, req->sandbox_id, from, SANDBOX_ERROR, &failed, terr,
                               sizeof(terr)) != GRPC_STATUS_OK)
            log_warn("error state not recorded", "sandbox=%s error=\"%s\"", req->sandbox_id, terr);
    }
    if (st == GRPC_STATUS_OK && plan.done != from)
        st = service_transition(s, req->sandbox_id, from, plan.done, &note, err, sizeof(err));
    if (st == GRPC_STATUS_OK)
        st = store_sandbox_get(&s->db, req->project_id, req->sandbox_id, &row, err, sizeof(err));
    if (st == GRPC_STATUS_OK)
        service_reply_sandbox(call, row);
out:
    service_finish_checkpoint_op(call, "restore", req->request_id, req->sandbox_id, st, err);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
