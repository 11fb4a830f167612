/* Periodic checkpoints (CreateSandboxRequest.checkpoint_every_s): a
 * running sandbox gets a full checkpoint named auto-<unix ms> once its
 * newest periodic one (or its creation) is that old, and the older
 * periodic ones go. With a shared snapshot store on its node the
 * checkpoint is there too, so a node's loss costs the sandbox at most
 * that period (controller_lost.c). */
#include <stdio.h>
#include <string.h>

#include "checkpoint_store.h"
#include "clock.h"
#include "controller_jobs.h"
#include "log.h"
#include "nodes.h"
#include "quota_store.h"
#include "service_checkpoint.h"

/* Per pass: each checkpoint stops its VM for a moment and asks a node. */
#define CHECKPOINT_BATCH "10"

/* Deletes older (rows of store_checkpoint_older_auto) on node and in the
 * database; one that stays is tried again after the next checkpoint. */
static void drop_older(struct scheduler *s, const char *node, const char *id, PGresult *older)
{
    struct airlock_error e;
    for (int i = 0; i < PQntuples(older); i++) {
        const char *name = PQgetvalue(older, i, 0);
        int rc = service_checkpoint_drop_on_node(s, node, id, name, &e);
        if ((rc == 0 || e.class == AIRLOCK_ERR_NOT_FOUND) &&
            store_checkpoint_delete(&s->db, id, name, &e) == 0)
            continue;
        log_warn("older periodic checkpoint not deleted", "sandbox=%s checkpoint=%s error=\"%s\"",
                 id, name, e.message);
    }
}

/* A new periodic checkpoint replaces the older ones: the project's
 * checkpoints quota is asked for the difference only (none once there is
 * one), and before the node stops the VM, so a project at its limit is
 * not checkpointed (and the checkpoint deleted again) on every pass. */
static void checkpoint_one(struct scheduler *s, const char *id, const char *project_id,
                           const char *node)
{
    struct airlock_error e;
    PGresult *older;
    if (store_checkpoint_older_auto(&s->db, id, "", &older, &e) < 0) {
        log_warn("periodic checkpoints: database", "sandbox=%s error=\"%s\"", id, e.message);
        return;
    }
    struct quota_ask ask;
    store_checkpoint_ask(project_id, &s->cfg.quota_defaults, &ask);
    ask.request.v[QUOTA_CHECKPOINTS] = PQntuples(older) > 0 ? 0 : 1;
    char name[32];
    snprintf(name, sizeof(name), CHECKPOINT_AUTO_PREFIX "%lld", (long long)clock_realtime_ms());
    Airlock__Vmhost__V1__CreateCheckpointRequest req =
        AIRLOCK__VMHOST__V1__CREATE_CHECKPOINT_REQUEST__INIT;
    req.sandbox_id = (char *)id;
    req.name = name;
    req.kind = AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL;
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc = store_quota_admits(&s->db, &ask, &e);
    if (rc == 0)
        rc = nodes_call(s, node, NODE_OP(CHECKPOINT), &req.base, s->cfg.node_timeout_ms, &reply,
                        &e);
    if (rc == 0 && !reply->checkpoint)
        rc = airlock_error_set(&e, AIRLOCK_ERR_INTERNAL, "node %s answered without it", node);
    if (rc == 0)
        rc = service_checkpoint_record(s, &ask, node, reply->checkpoint, "full", &e);
    if (rc == 0) {
        log_info("periodic checkpoint", "sandbox=%s checkpoint=%s node=%s stored=%d", id, name,
                 node, *reply->checkpoint->store_object != '\0');
        drop_older(s, node, id, older);
    } else {
        log_warn("periodic checkpoint failed", "sandbox=%s checkpoint=%s node=%s error=\"%s\"",
                 id, name, node, e.message);
    }
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    PQclear(older);
}

void controller_checkpoint_pass(struct scheduler *s)
{
    struct airlock_error e;
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", s->cfg.node_dead_after_s);
    const char *params[] = { dead_after };
    /* Due: its newest periodic checkpoint (or, before the first, its
     * creation) at least checkpoint_every_s old; on a live node. */
    PGresult *rows = db_query(
        &s->db,
        "SELECT s.id, s.project_id, s.node_id FROM sandboxes s JOIN nodes n ON n.id = s.node_id"
        " WHERE s.checkpoint_every_s > 0 AND s.state = 'running'"
        " AND n.last_seen > now() - make_interval(secs => $1::integer)"
        " AND coalesce((SELECT max(c.created_at) FROM checkpoints c WHERE c.sandbox_id = s.id"
        "   AND c.name LIKE '" CHECKPOINT_AUTO_PREFIX "%'), s.created_at)"
        "   < now() - make_interval(secs => s.checkpoint_every_s)"
        " ORDER BY s.id LIMIT " CHECKPOINT_BATCH,
        1, params, AIRLOCK_ERROR_MSG(&e));
    if (!rows) {
        log_warn("periodic checkpoints: database", "error=\"%s\"", e.message);
        return;
    }
    for (int i = 0; i < PQntuples(rows); i++)
        checkpoint_one(s, PQgetvalue(rows, i, 0), PQgetvalue(rows, i, 1),
                       PQgetvalue(rows, i, 2));
    PQclear(rows);
}
