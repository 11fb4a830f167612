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
#include "nodes.h"
#include "rpc_err.h"
#include "sandbox_store.h"
#include "scheduler_service.h"
#include "service_checkpoint.h"
#include "service_op.h"
#include "service_resume.h"

/* field: how the caller named it ("name", "checkpoint"). */
static bool checkpoint_name_valid(const char *field, const char *name, struct airlock_error *e)
{
    size_t n = strlen(name);
    if (n >= 1 && n <= 64 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n)
        return true;
    airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: \"%s\" is not 1..64 of [a-z0-9_-]", field, name);
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
    if (!checkpoint_name_valid("name", req->name, &r->err))
        return false;
    if (!kind_full(req) && strcmp(req->kind, "disk") != 0) {
        airlock_error_set(&r->err, AIRLOCK_ERR_INVALID, "kind: \"%s\" is not disk or full",
                          req->kind);
        return false;
    }
    return true;
}

int checkpoint_create_admit(struct op_run *r)
{
    struct quota_ask ask;
    store_checkpoint_ask(r->project_id, &r->s->cfg.quota_defaults, &ask);
    return store_quota_admits(&r->s->db, &ask, &r->err);
}

int checkpoint_create_request(struct op_run *r, union op_node_request *u)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    u->checkpoint.sandbox_id = req->sandbox_id;
    u->checkpoint.name = req->name;
    u->checkpoint.kind = kind_full(req)
                             ? AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL
                             : AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK;
    return 0;
}

int service_checkpoint_drop_on_node(struct scheduler *s, const char *node, const char *id,
                                    const char *name, struct airlock_error *e)
{
    Airlock__Vmhost__V1__CheckpointRequest del = AIRLOCK__VMHOST__V1__CHECKPOINT_REQUEST__INIT;
    del.sandbox_id = (char *)id;
    del.name = (char *)name;
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc = nodes_call(s, node, NODE_OP(CHECKPOINT_DELETE), &del.base, s->cfg.node_timeout_ms,
                        &reply, e);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    return rc;
}

int service_checkpoint_record(struct scheduler *s, const struct quota_ask *ask, const char *node,
                              const Airlock__Vmhost__V1__Checkpoint *c, const char *kind,
                              struct airlock_error *e)
{
    int rc = store_checkpoint_insert(&s->db, c->sandbox_id, c->name, kind, c->created_unix_ms,
                                     c->store_object, ask, e);
    struct airlock_error drop_e; /* e is the caller's answer */
    if (rc < 0 && e->class == AIRLOCK_ERR_QUOTA &&
        service_checkpoint_drop_on_node(s, node, c->sandbox_id, c->name, &drop_e) < 0)
        log_warn("unrecorded checkpoint not deleted", "sandbox=%s checkpoint=%s error=\"%s\"",
                 c->sandbox_id, c->name, drop_e.message);
    return rc;
}

/* The node's checkpoint recorded, and answered; one the quotas refuse now
 * (another request took the room since checkpoint_create_admit) is
 * deleted on the node again. */
int checkpoint_create_done(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    const Airlock__Vmhost__V1__Checkpoint *made = r->reply->checkpoint;
    if (!made || strcmp(made->sandbox_id, req->sandbox_id) != 0 ||
        strcmp(made->name, req->name) != 0)
        return airlock_error_set(&r->err, AIRLOCK_ERR_INTERNAL,
                                 "node %s answered checkpoint without this one",
                                 store_sandbox_node(r->row, 0));
    Airlock__Scheduler__V1__Checkpoint c = AIRLOCK__SCHEDULER__V1__CHECKPOINT__INIT;
    c.sandbox_id = req->sandbox_id;
    c.name = req->name;
    c.kind = kind_full(req) ? "full" : "disk";
    c.created_unix_ms = made->created_unix_ms;
    c.stored = *made->store_object != '\0';
    struct quota_ask ask;
    store_checkpoint_ask(r->project_id, &r->s->cfg.quota_defaults, &ask);
    int rc = service_checkpoint_record(r->s, &ask, store_sandbox_node(r->row, 0), made, c.kind,
                                       &r->err);
    if (rc == 0)
        rpc_call_reply(r->call, &c.base);
    return rc;
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
    struct airlock_error e;
    int rc = store_sandbox_get(&s->db, req->project_id, req->id, &row, &e);
    if (rc == 0)
        rc = store_checkpoint_list(&s->db, req->id, &rows, &e);
    if (rc < 0)
        goto out;
    int n = PQntuples(rows);
    msgs = calloc((size_t)n + 1, sizeof(*msgs));
    ptrs = calloc((size_t)n + 1, sizeof(*ptrs));
    if (!msgs || !ptrs) {
        rc = airlock_error_set(&e, AIRLOCK_ERR_CAPACITY, "out of memory");
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
    if (rc < 0)
        rpc_call_finish_error(call, &e);
    free(msgs);
    free(ptrs);
    PQclear(rows);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

bool checkpoint_named_valid(struct op_run *r)
{
    return checkpoint_name_valid("name", checkpoint_req(r)->name, &r->err);
}

/* The sandbox in any state; one never placed has no checkpoints. */
int checkpoint_delete_lookup(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    if (store_sandbox_get(&r->s->db, req->project_id, req->sandbox_id, &r->row, &r->err) < 0)
        return -1;
    if (!*store_sandbox_node(r->row, 0))
        return airlock_error_set(&r->err, AIRLOCK_ERR_NOT_FOUND,
                                 "checkpoint %s of sandbox %s not found", req->name,
                                 req->sandbox_id);
    return 0;
}

/* DeleteCheckpoint's and RestoreCheckpoint's: the checkpoint by name. */
int checkpoint_named_request(struct op_run *r, union op_node_request *u)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    u->named_checkpoint.sandbox_id = req->sandbox_id;
    u->named_checkpoint.name = req->name;
    return 0;
}

/* Gone from the node (deleted, or never there): the record goes too. */
static void checkpoint_record_drop(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    struct airlock_error e; /* r->err may hold the node's refusal, the call's answer */
    if (store_checkpoint_delete(&r->s->db, req->sandbox_id, req->name, &e) < 0)
        log_warn("checkpoint record not deleted", "sandbox=%s checkpoint=%s error=\"%s\"",
                 req->sandbox_id, req->name, e.message);
}

void checkpoint_delete_refused(struct op_run *r)
{
    if (r->err.class == AIRLOCK_ERR_NOT_FOUND)
        checkpoint_record_drop(r);
}

int checkpoint_delete_done(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    checkpoint_record_drop(r);
    Airlock__Scheduler__V1__Checkpoint c = AIRLOCK__SCHEDULER__V1__CHECKPOINT__INIT;
    c.sandbox_id = req->sandbox_id;
    c.name = req->name;
    rpc_call_reply(r->call, &c.base);
    return 0;
}

/* No checkpoint: a lost sandbox's newest in the store. */
bool checkpoint_restore_valid(struct op_run *r)
{
    const char *name = checkpoint_req(r)->name;
    return !*name || checkpoint_name_valid("checkpoint", name, &r->err);
}

int checkpoint_restore_request(struct op_run *r, union op_node_request *u)
{
    if (!*checkpoint_req(r)->name)
        return airlock_error_set(&r->err, AIRLOCK_ERR_INVALID,
                                 "checkpoint: required (only a lost sandbox is restored from its "
                                 "newest checkpoint without one)");
    return checkpoint_named_request(r, u);
}

/* Its node is gone: on another node, from the checkpoint's set in the
 * shared store (service_resume.h), through resuming; a failure leaves it
 * lost. */
int checkpoint_restore_lost(struct op_run *r)
{
    const Airlock__Scheduler__V1__CheckpointRequest *req = checkpoint_req(r);
    char set[256], name[72], node[128];
    snprintf(node, sizeof(node), "%s", store_sandbox_node(r->row, 0));
    if (store_checkpoint_stored(&r->s->db, r->sandbox_id, req->name, set, sizeof(set), name,
                                sizeof(name), &r->err) < 0)
        return -1;
    /* A lost sandbox counts for none of the project's vCPUs and memory. */
    struct quota_ask ask = { r->project_id, { { 0 } }, &r->s->cfg.quota_defaults };
    store_sandbox_ask(r->row, 0, 1, &ask.request);
    if (service_transition_admitted(r->s, r->sandbox_id, r->from, r->plan.first, &r->note, &ask,
                                    &r->err) < 0)
        return -1;
    int rc = service_restore_lost(r->s, r->sandbox_id, name, set, node, sizeof(node), &r->err);
    struct transition_note back = r->note;
    back.why = rc < 0 ? r->err.message : r->note.why;
    struct airlock_error e; /* r->err is the call's answer */
    if (service_transition(r->s, r->sandbox_id, r->plan.first,
                           rc < 0 ? SANDBOX_LOST : r->plan.done, &back, rc < 0 ? &e : &r->err) < 0) {
        if (rc < 0)
            log_warn("restore failed and the sandbox is not lost again", "sandbox=%s error=\"%s\"",
                     r->sandbox_id, e.message);
        return -1;
    }
    if (rc < 0)
        return -1;
    return service_reply_sandbox_now(r->call, r->s, r->project_id, r->sandbox_id, &r->err);
}

/* Internal (the class of the node's refusal): the node stopped the VM and
 * could not bring it back. */
void checkpoint_restore_refused(struct op_run *r)
{
    if (r->err.class != AIRLOCK_ERR_INTERNAL)
        return;
    struct transition_note failed = { r->note.who, r->err.message, r->note.request_id };
    struct airlock_error e; /* r->err is the call's answer */
    if (service_transition(r->s, r->sandbox_id, r->from, SANDBOX_ERROR, &failed, &e) < 0)
        log_warn("error state not recorded", "sandbox=%s error=\"%s\"", r->sandbox_id, e.message);
}

/* The state the plan ends in, answered with the sandbox as it is now. */
int checkpoint_restore_done(struct op_run *r)
{
    int rc = 0;
    if (r->plan.done != r->from)
        rc = service_transition(r->s, r->sandbox_id, r->from, r->plan.done, &r->note, &r->err);
    if (rc == 0)
        rc = service_reply_sandbox_now(r->call, r->s, r->project_id, r->sandbox_id, &r->err);
    return rc;
}
