/* CreateCheckpoint, ListCheckpoints, DeleteCheckpoint and
 * RestoreCheckpoint: the state machine decides (sandbox_state.c), the node
 * acts (airlock.node.<id>.checkpoint|checkpoint_delete|restore), and
 * PostgreSQL records the checkpoints. All but the listing are stages of
 * service_op.c's pipeline, which declares them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint_store.h"
#include "log.h"
#include "sandbox_store.h"
#include "scheduler_service.h"
#include "service_op.h"

/* field: how the caller named it ("name", "checkpoint"). */
static bool checkpoint_name_valid(const char *field, const char *name, char *err, size_t errlen)
{
    size_t n = strlen(name);
    if (n >= 1 && n <= 64 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n)
        return true;
    snprintf(err, errlen, "%s: \"%.80s\" is not 1..64 of [a-z0-9_-]", field, name);
    return false;
}

static const Airlock__Scheduler__V1__CheckpointRequest *checkpoint_req(const struct op_run *r)
{
    return (const void *)r->req; /* the table gives these ops CheckpointRequest */
}

/* CreateCheckpoint's kind, once checkpoint_create_valid passed it. */
static bool kind_full(const Airlock__Scheduler__V1__CheckpointRequest *req)
{
    return strcmp(req->kind, "full") == 0;
}

bool checkpoint_create_valid(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    if (!checkpoint_name_valid("name", req->name, r->err, sizeof(r->err)))
        return false;
    if (!kind_full(req) && strcmp(req->kind, "disk") != 0) {
        snprintf(r->err, sizeof(r->err), "kind: \"%.40s\" is not disk or full", req->kind);
        return false;
    }
    return true;
}

grpc_status_code checkpoint_create_request(struct op_run *r, union op_node_request *u)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    u->checkpoint.sandbox_id = req->sandbox_id;
    u->checkpoint.name = req->name;
    u->checkpoint.kind = kind_full(req)
                             ? AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL
                             : AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK;
    return GRPC_STATUS_OK;
}

/* The node's checkpoint recorded, and answered. */
grpc_status_code checkpoint_create_done(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    if (!r->reply->checkpoint) {
        snprintf(r->err, sizeof(r->err), "node %s answered checkpoint without one",
                 store_sandbox_node(r->row, 0));
        return GRPC_STATUS_INTERNAL;
    }
    Airlock__Scheduler__V1__Checkpoint c = AIRLOCK__SCHEDULER__V1__CHECKPOINT__INIT;
    c.sandbox_id = req->sandbox_id;
    c.name = req->name;
    c.kind = kind_full(req) ? "full" : "disk";
    c.created_unix_ms = r->reply->checkpoint->created_unix_ms;
    grpc_status_code st = store_checkpoint_insert(&r->s->db, req->sandbox_id, c.name, c.kind,
                                                  c.created_unix_ms, r->err, sizeof(r->err));
    if (st == GRPC_STATUS_OK)
        rpc_call_reply(r->call, &c.base);
    return st;
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

bool checkpoint_named_valid(struct op_run *r)
{
    return checkpoint_name_valid("name", checkpoint_req(r)->name, r->err, sizeof(r->err));
}

/* The sandbox in any state; one never placed has no checkpoints. */
grpc_status_code checkpoint_delete_lookup(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    grpc_status_code st = store_sandbox_get(&r->s->db, req->project_id, req->sandbox_id, &r->row,
                                            r->err, sizeof(r->err));
    if (st == GRPC_STATUS_OK && !*store_sandbox_node(r->row, 0)) {
        snprintf(r->err, sizeof(r->err), "checkpoint %.80s of sandbox %s not found", req->name,
                 req->sandbox_id);
        st = GRPC_STATUS_NOT_FOUND;
    }
    return st;
}

/* DeleteCheckpoint's and RestoreCheckpoint's: the checkpoint by name. */
grpc_status_code checkpoint_named_request(struct op_run *r, union op_node_request *u)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    u->named_checkpoint.sandbox_id = req->sandbox_id;
    u->named_checkpoint.name = req->name;
    return GRPC_STATUS_OK;
}

/* Gone from the node (deleted, or never there): the record goes too. */
static void checkpoint_record_drop(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    char derr[256];
    if (store_checkpoint_delete(&r->s->db, req->sandbox_id, req->name, derr, sizeof(derr)) !=
        GRPC_STATUS_OK)
        log_warn("checkpoint record not deleted", "sandbox=%s checkpoint=%s error=\"%s\"",
                 req->sandbox_id, req->name, derr);
}

void checkpoint_delete_refused(struct op_run *r, grpc_status_code st)
{
    if (st == GRPC_STATUS_NOT_FOUND)
        checkpoint_record_drop(r);
}

grpc_status_code checkpoint_delete_done(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    checkpoint_record_drop(r);
    Airlock__Scheduler__V1__Checkpoint c = AIRLOCK__SCHEDULER__V1__CHECKPOINT__INIT;
    c.sandbox_id = req->sandbox_id;
    c.name = req->name;
    rpc_call_reply(r->call, &c.base);
    return GRPC_STATUS_OK;
}

bool checkpoint_restore_valid(struct op_run *r)
{
    return checkpoint_name_valid("checkpoint", checkpoint_req(r)->name, r->err, sizeof(r->err));
}

/* INTERNAL: the node stopped the VM and could not bring it back. */
void checkpoint_restore_refused(struct op_run *r, grpc_status_code st)
{
    if (st != GRPC_STATUS_INTERNAL)
        return;
    struct transition_note failed = { r->note.who, r->err, r->note.request_id };
    char terr[256];
    if (service_transition(r->s, r->sandbox_id, r->from, SANDBOX_ERROR, &failed, terr,
                           sizeof(terr)) != GRPC_STATUS_OK)
        log_warn("error state not recorded", "sandbox=%s error=\"%s\"", r->sandbox_id, terr);
}

/* The state the plan ends in, answered with the sandbox as it is now. */
grpc_status_code checkpoint_restore_done(struct op_run *r)
{
    grpc_status_code st = GRPC_STATUS_OK;
    if (r->plan.done != r->from)
        st = service_transition(r->s, r->sandbox_id, r->from, r->plan.done, &r->note, r->err,
                                sizeof(r->err));
    if (st == GRPC_STATUS_OK)
        st = service_reply_sandbox_now(r->call, r->s, r->project_id, r->sandbox_id, r->err,
                                       sizeof(r->err));
    return st;
}
