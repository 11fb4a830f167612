/* ForkSandbox, stages of service_op.c's pipeline: the project's quotas
 * asked, the node makes the forks (airlock.node.<id>.fork), then they
 * are recorded as running sandboxes of the same project on the same node,
 * admitted by the quotas again (quota_store.h). */
#include <stdio.h>
#include <stdlib.h>

#include "events.h"
#include "log.h"
#include "node_store.h"
#include "sandbox_store.h"
#include "scheduler_service.h"
#include "service_op.h"

#define FORK_MAX_COUNT 16

/* Records the node's forks of sandbox row 0 of parent, all of them in
 * *rows, and publishes their events; when they cannot be recorded (the
 * quotas refuse them now: another request took the room since
 * fork_admit), they are deleted on the node, which makes them all or
 * nothing there too. */
static int record_forks(struct scheduler *s, PGresult *parent, const struct fork_volumes *fv,
                        const Airlock__Node__V1__NodeReply *reply,
                        const struct transition_note *note, PGresult **rows,
                        struct airlock_error *e)
{
    const char **ids = calloc(reply->n_forks + 1, sizeof(*ids));
    if (!ids)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    for (size_t i = 0; i < reply->n_forks; i++)
        ids[i] = reply->forks[i]->id;
    struct fork_volume_records vols = { 0 };
    struct quota_values taken = { { 0 } };
    fork_volumes_ask(fv, (unsigned)reply->n_forks, &taken);
    vols.volumes = taken.v[QUOTA_VOLUMES];
    vols.volume_mb = taken.v[QUOTA_VOLUME_MB];
    char *columns = NULL, *clones = NULL;
    int rc = fork_volumes_records(fv, ids, reply->n_forks, &columns, &clones, e);
    vols.columns = columns;
    vols.clones = clones;
    if (rc == 0)
        rc = store_forks_insert(&s->db, parent, ids, reply->n_forks, &vols,
                                &s->cfg.quota_defaults, note, rows, e);
    free(columns);
    free(clones);
    free(ids);
    for (int i = 0; rc == 0 && i < PQntuples(*rows); i++) {
        struct sandbox_event created;
        store_fork_event(*rows, i, &created);
        events_publish(s->nc, &created);
    }
    for (size_t j = 0; rc < 0 && j < reply->n_forks; j++) {
        Airlock__Vmhost__V1__SandboxRef del = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
        del.id = reply->forks[j]->id;
        struct airlock_error del_error; /* e is what the caller is answered */
        if (service_call_node(s, parent, NODE_OP(DELETE), &del.base, NULL, &del_error) < 0)
            log_warn("unrecorded fork not deleted", "sandbox=%s error=\"%s\"", del.id,
                     del_error.message);
    }
    /* Its clones, which no sandbox holds once the forks are gone. */
    for (size_t k = 0; rc < 0 && k < fv->n_ids; k++) {
        Airlock__Vmhost__V1__VolumeRef del = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
        del.volume_id = fv->ids[k];
        struct airlock_error del_error;
        if (service_call_node(s, parent, NODE_OP(VOLUME_DELETE), &del.base, NULL, &del_error) < 0)
            log_warn("unrecorded fork's clone not deleted", "volume=%s error=\"%s\"", del.volume_id,
                     del_error.message);
    }
    return rc;
}

static int reply_forks(struct rpc_call *call, PGresult *rows, struct airlock_error *e)
{
    struct sandbox_msgs forks;
    int rc = service_sandbox_msgs(&rows, 1, &forks, e);
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

/* The forks' sandboxes, vCPUs and memory, asked before the node makes
 * them; the parent's node must take new work (not draining). */
int fork_admit(struct op_run *r)
{
    if (store_node_takes_work(&r->s->db, store_sandbox_node(r->row, 0), "no forks are made there",
                              &r->err) < 0)
        return airlock_error_prefix(&r->err, "sandbox %s: ", r->sandbox_id);
    struct quota_ask ask = { r->project_id, { { 0 } }, &r->s->cfg.quota_defaults };
    store_sandbox_ask(r->row, 0, fork_count(fork_req(r)), &ask.request);
    if (fork_volumes_plan(&r->s->db, store_sandbox_volumes(r->row, 0), fork_count(fork_req(r)),
                          &r->fork_volumes, &r->err) < 0)
        return -1;
    fork_volumes_ask(&r->fork_volumes, fork_count(fork_req(r)), &ask.request);
    return store_quota_admits(&r->s->db, &ask, &r->err);
}

int fork_request(struct op_run *r, union op_node_request *u)
{
    const Airlock__Scheduler__V1__ForkSandboxRequest *req = fork_req(r);
    u->fork.sandbox_id = req->sandbox_id;
    u->fork.count = fork_count(req);
    u->fork.checkpoint = req->checkpoint;
    /* The forks get the parent's egress policy, the one its row records
     * (and store_forks_insert copies): a fork is no way around it. */
    int rc = store_sandbox_msg(r->row, 0, &r->parent, &r->err);
    u->fork.policy = r->parent.msg.network;
    u->fork.volume_ids = r->fork_volumes.ids;
    u->fork.n_volume_ids = r->fork_volumes.n_ids;
    return rc;
}

/* The forks the node made recorded, and answered. */
int fork_done(struct op_run *r)
{
    PGresult *rows = NULL;
    int rc = record_forks(r->s, r->row, &r->fork_volumes, r->reply, &r->note, &rows, &r->err);
    if (rc == 0)
        rc = reply_forks(r->call, rows, &r->err);
    PQclear(rows);
    return rc;
}
