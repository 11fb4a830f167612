/* ForkSandbox: the node makes the forks (airlock.node.<id>.fork), then each
 * is recorded as a running sandbox of the same project on the same node. */
#include <stdio.h>
#include <stdlib.h>

#include "events.h"
#include "log.h"
#include "sandbox_store.h"
#include "scheduler_service.h"

#define FORK_MAX_COUNT 16

/* Records the node's forks of sandbox row 0 of parent; rows[i] gets fork
 * i's row. On failure the forks not yet recorded are deleted on the node
 * (all or nothing there; a recorded one is left for the caller to see). */
static grpc_status_code record_forks(struct scheduler *s, PGresult *parent,
                                     const Airlock__Node__V1__NodeReply *reply,
                                     const struct transition_note *note, PGresult **rows,
                                     char *err, size_t errlen)
{
    grpc_status_code st = GRPC_STATUS_OK;
    const char *project_id = PQgetvalue(parent, 0, 1);
    size_t i = 0;
    for (; st == GRPC_STATUS_OK && i < reply->n_forks; i++) {
        struct sandbox_event created;
        st = store_fork_insert(&s->db, parent, reply->forks[i]->id, note, &created, err, errlen);
        if (st == GRPC_STATUS_OK) {
            events_publish(s->nc, &created);
            st = store_sandbox_get(&s->db, project_id, reply->forks[i]->id, &rows[i], err, errlen);
        }
    }
    for (size_t j = st == GRPC_STATUS_OK ? i : i - 1; j < reply->n_forks; j++) {
        Airlock__Vmhost__V1__SandboxRef del = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
        del.id = reply->forks[j]->id;
        char derr[256];
        if (service_call_node(s, parent, NODE_OP(DELETE), &del.base, NULL, derr, sizeof(derr)) !=
            GRPC_STATUS_OK)
            log_warn("unrecorded fork not deleted", "sandbox=%s error=\"%s\"", del.id, derr);
    }
    return st;
}

static grpc_status_code reply_forks(struct rpc_call *call, PGresult **rows, size_t n, char *err,
                                    size_t errlen)
{
    struct sandbox_msgs forks;
    grpc_status_code st = service_sandbox_msgs(rows, n, &forks, err, errlen);
    if (st == GRPC_STATUS_OK) {
        Airlock__Scheduler__V1__ForkSandboxResponse resp =
            AIRLOCK__SCHEDULER__V1__FORK_SANDBOX_RESPONSE__INIT;
        resp.n_sandboxes = forks.n;
        resp.sandboxes = forks.ptrs;
        rpc_call_send(call, &resp.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    }
    service_sandbox_msgs_free(&forks);
    return st;
}

void service_sandbox_fork(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__ForkSandboxRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__fork_sandbox_request__descriptor);
    if (!req)
        return;
    PGresult *parent = NULL, **rows = NULL;
    Airlock__Node__V1__NodeReply *reply = NULL;
    char err[2048];
    struct sandbox_plan plan;
    enum sandbox_state from;
    struct transition_note note = { service_actor(req->actor), "fork", req->request_id };
    struct sandbox_msg stored = { 0 };
    unsigned count = req->count ? req->count : 1;
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    if (count > FORK_MAX_COUNT) {
        snprintf(err, sizeof(err), "count: %u is outside 1..%d", count, FORK_MAX_COUNT);
        goto out;
    }
    st = service_sandbox_for_op(s, req->project_id, req->sandbox_id, SANDBOX_OP_FORK, &parent,
                                &plan, &from, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    Airlock__Vmhost__V1__ForkSandboxRequest nreq = AIRLOCK__VMHOST__V1__FORK_SANDBOX_REQUEST__INIT;
    nreq.sandbox_id = req->sandbox_id;
    nreq.count = count;
    nreq.checkpoint = req->checkpoint;
    /* The forks get the parent's egress policy, the one its row records
     * (and store_fork_insert copies): a fork is no way around it. */
    st = store_sandbox_msg(parent, 0, &stored, err, sizeof(err));
    nreq.policy = stored.msg.network;
    if (st == GRPC_STATUS_OK)
        st = service_call_node(s, parent, NODE_OP(FORK), &nreq.base, &reply, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    rows = calloc(reply->n_forks + 1, sizeof(*rows));
    if (!rows) {
        st = GRPC_STATUS_RESOURCE_EXHAUSTED;
        snprintf(err, sizeof(err), "out of memory");
        goto out;
    }
    st = record_forks(s, parent, reply, &note, rows, err, sizeof(err));
    if (st == GRPC_STATUS_OK)
        st = reply_forks(call, rows, reply->n_forks, err, sizeof(err));
out:
    service_finish_checkpoint_op(call, "fork", req->request_id, req->sandbox_id, st, err);
    for (size_t i = 0; rows && i < reply->n_forks; i++)
        PQclear(rows[i]);
    free(rows);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    store_sandbox_msg_free(&stored);
    PQclear(parent);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
