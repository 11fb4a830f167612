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
static int record_forks(struct scheduler *s, PGresult *parent,
                        const Airlock__Node__V1__NodeReply *reply,
                        const struct transition_note *note, PGresult **rows,
                        struct airlock_error *e)
{
    int rc = 0;
    const char *project_id = PQgetvalue(parent, 0, 1);
    size_t i = 0;
    for (; rc == 0 && i < reply->n_forks; i++) {
        struct sandbox_event created;
        rc = store_fork_insert(&s->db, parent, reply->forks[i]->id, note, &created, e);
        if (rc == 0) {
            events_publish(s->nc, &created);
            rc = store_sandbox_get(&s->db, project_id, reply->forks[i]->id, &rows[i], e);
        }
    }
    for (size_t j = rc == 0 ? i : i - 1; j < reply->n_forks; j++) {
        Airlock__Vmhost__V1__SandboxRef del = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
        del.id = reply->forks[j]->id;
        struct airlock_error del_error; /* e is what the caller is answered */
        if (service_call_node(s, parent, NODE_OP(DELETE), &del.base, NULL, &del_error) < 0)
            log_warn("unrecorded fork not deleted", "sandbox=%s error=\"%s\"", del.id,
                     del_error.message);
    }
    return rc;
}

static int reply_forks(struct rpc_call *call, PGresult **rows, size_t n, struct airlock_error *e)
{
    struct sandbox_msgs forks;
    int rc = service_sandbox_msgs(rows, n, &forks, e);
    if (rc == 0) {
        Airlock__Scheduler__V1__ForkSandboxResponse resp =
            AIRLOCK__SCHEDULER__V1__FORK_SANDBOX_RESPONSE__INIT;
        resp.n_sandboxes = forks.n;
        resp.sandboxes = forks.ptrs;
        rpc_call_send(call, &resp.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    }
    service_sandbox_msgs_free(&forks);
    return rc;
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
    airlock_error_set(&r->err, AIRLOCK_ERR_INVALID, "count: %u is outside 1..%d", count,
                      FORK_MAX_COUNT);
    return false;
}

int fork_request(struct op_run *r, union op_node_request *u)
{
    const Airlock__Scheduler__V1__ForkSandboxRequest *req = fork_req(r);
    u->fork.sandbox_id = req->sandbox_id;
    u->fork.count = fork_count(req);
    u->fork.checkpoint = req->checkpoint;
    /* The forks get the parent's egress policy, the one its row records
     * (and store_fork_insert copies): a fork is no way around it. */
    int rc = store_sandbox_msg(r->row, 0, &r->parent, &r->err);
    u->fork.policy = r->parent.msg.network;
    return rc;
}

/* Each fork the node made recorded, and all of them answered. */
int fork_done(struct op_run *r)
{
    size_t n = r->reply->n_forks;
    PGresult **rows = calloc(n + 1, sizeof(*rows));
    if (!rows)
        return airlock_error_set(&r->err, AIRLOCK_ERR_CAPACITY, "out of memory");
    int rc = record_forks(r->s, r->row, r->reply, &r->note, rows, &r->err);
    if (rc == 0)
        rc = reply_forks(r->call, rows, n, &r->err);
    for (size_t i = 0; i < n; i++)
        PQclear(rows[i]);
    free(rows);
    return rc;
}
