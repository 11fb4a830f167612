/* ForkSandbox, stages of service_op.c's pipeline: the node makes the forks
 * (airlock.node.<id>.fork), then each is recorded as a running sandbox of
 * the same project on the same node. */
#include <stdio.h>
#include <stdlib.h>

#include "events.h"
#include "log.h"
#include "sandbox_store.h"
#include "scheduler_service.h"
#include "service_op.h"

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

static const Airlock__Scheduler__V1__ForkSandboxRequest *fork_req(const struct op_run *r)
{
    return (const void *)r->req; /* the table gives ForkSandbox this request */
}

static unsigned fork_count(const Airlock__Scheduler__V1__ForkSandboxRequest *req)
{
    return req->count ? req->count : 1;
}

bool fork_valid(struct op_run *r)
{
    unsigned count = fork_count(fork_req(r));
    if (count <= FORK_MAX_COUNT)
        return true;
    snprintf(r->err, sizeof(r->err), "count: %u is outside 1..%d", count, FORK_MAX_COUNT);
    return false;
}

grpc_status_code fork_request(struct op_run *r, union op_node_request *u)
{
    const Airlock__Scheduler__V1__ForkSandboxRequest *req = fork_req(r);
    u->fork.sandbox_id = req->sandbox_id;
    u->fork.count = fork_count(req);
    u->fork.checkpoint = req->checkpoint;
    /* The forks get the parent's egress policy, the one its row records
     * (and store_fork_insert copies): a fork is no way around it. */
    grpc_status_code st = store_sandbox_msg(r->row, 0, &r->parent, r->err, sizeof(r->err));
    u->fork.policy = r->parent.msg.network;
    return st;
}

/* Each fork the node made recorded, and all of them answered. */
grpc_status_code fork_done(struct op_run *r)
{
    size_t n = r->reply->n_forks;
    PGresult **rows = calloc(n + 1, sizeof(*rows));
    if (!rows) {
        snprintf(r->err, sizeof(r->err), "out of memory");
        return GRPC_STATUS_RESOURCE_EXHAUSTED;
    }
    grpc_status_code st = record_forks(r->s, r->row, r->reply, &r->note, rows, r->err,
                                       sizeof(r->err));
    if (st == GRPC_STATUS_OK)
        st = reply_forks(r->call, rows, n, r->err, sizeof(r->err));
    for (size_t i = 0; i < n; i++)
        PQclear(rows[i]);
    free(rows);
    return st;
}
