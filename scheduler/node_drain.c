/* Draining a node: running sandboxes migrate live to other nodes
 * (node_migrate.h; with volumes: suspended first), paused and suspended
 * ones leave through the shared snapshot store (docs/snapshot-store.md),
 * then the node is judged drained or not. */
#include "node_drain.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "node_store.h"
#include "node_migrate.h"
#include "nodes.h"
#include "sandbox_store.h"
#include "scheduler_service.h"

#define DRAIN_ACTOR "scheduler (drain)"

/* A suspended sandbox whose suspend is in the store: another node takes
 * it (TakeSandbox) as its own, the row follows if nothing changed it
 * meanwhile, and the draining node lets go of its copy, the store keeping
 * the set. A move that lost to a resume or delete is undone on the taker
 * (keeping the set, which the winner owns). */
static void move_suspended(struct scheduler *s, const char *node_id, const char *id,
                           const char *stored)
{
    struct airlock_error e;
    char to[128];
    if (nodes_place_elsewhere(s, id, node_id, true, "move", to, sizeof(to), &e) < 0) {
        log_warn("drain: a suspended sandbox has nowhere to go", "node=%s sandbox=%s error=\"%s\"",
                 node_id, id, e.message);
        return;
    }
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = (char *)id;
    req.store_object = (char *)stored;
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc = nodes_call(s, to, NODE_OP(TAKE), &req.base, s->cfg.node_timeout_ms, &reply, &e);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    if (rc < 0) {
        log_warn("drain: another node did not take a suspended sandbox",
                 "node=%s sandbox=%s to=%s error=\"%s\"", node_id, id, to, e.message);
        return;
    }
    int moved = store_sandbox_move_suspended(&s->db, id, node_id, to, stored, &e);
    const char *left = moved == 0 ? node_id : to; /* who lets go of a copy */
    if (moved < 0)
        log_warn("drain: a moved sandbox not recorded: reconciliation settles it",
                 "sandbox=%s to=%s error=\"%s\"", id, to, e.message);
    else if (moved == 1)
        log_info("drain: a sandbox changed while it moved: the move is undone", "sandbox=%s",
                 id);
    else
        log_info("drain: suspended sandbox moved", "sandbox=%s from=%s to=%s", id, node_id, to);
    if (moved >= 0 && nodes_delete_sandbox(s, left, id, stored, true, &e) < 0)
        log_warn("drain: a copy stays until reconciliation", "sandbox=%s node=%s error=\"%s\"",
                 id, left, e.message);
}

/* A suspend by the drain: into the store, when the node has one, from
 * where move_suspended takes it on a later step. */
static void suspend(struct scheduler *s, const char *node_id, const char *project_id,
                    const char *id)
{
    struct transition_note note = { DRAIN_ACTOR, "its node is draining", "" };
    struct airlock_error e;
    char on[128];
    if (service_sandbox_op(s, project_id, id, SANDBOX_OP_SUSPEND, &note, on, sizeof(on), &e) < 0)
        log_warn("drain: a sandbox was not suspended", "node=%s sandbox=%s error=\"%s\"",
                 node_id, id, e.message);
}

/* A running sandbox with volumes: a live migration does not carry them,
 * a suspend's set in the store does. Suspended only when another node
 * could take it; else it runs on and holds the node in draining. */
static void suspend_to_move(struct scheduler *s, const char *node_id, const char *project_id,
                            const char *id)
{
    struct airlock_error e;
    char to[128];
    if (nodes_place_elsewhere(s, id, node_id, true, "move", to, sizeof(to), &e) < 0) {
        log_warn("drain: a running sandbox with volumes has nowhere to go",
                 "node=%s sandbox=%s error=\"%s\"", node_id, id, e.message);
        return;
    }
    suspend(s, node_id, project_id, id);
}

/* Moves what is on node_id: running sandboxes migrate live, paused ones
 * and running ones with volumes are suspended (into the store, when the
 * node has one), suspended ones with a suspend in the store go to other
 * nodes. What cannot move (no
 * room elsewhere, a node without a store) holds the node in draining. */
static void move_off(struct scheduler *s, const char *node_id)
{
    struct airlock_error e;
    const char *params[] = { node_id };
    PGresult *rows = db_query(&s->db,
                              "SELECT id, project_id, state, store_object, volumes <> '[]'"
                              " FROM sandboxes"
                              " WHERE node_id = $1 AND state IN ('running', 'paused', 'suspended')"
                              " ORDER BY id",
                              1, params, AIRLOCK_ERROR_MSG(&e));
    if (!rows) {
        log_warn("drain: database", "node=%s error=\"%s\"", node_id, e.message);
        return;
    }
    for (int i = 0; i < PQntuples(rows); i++) {
        const char *id = PQgetvalue(rows, i, 0);
        bool running = strcmp(PQgetvalue(rows, i, 2), "running") == 0;
        bool volumes = PQgetvalue(rows, i, 4)[0] == 't';
        if (running && !volumes)
            node_migrate_running(s, node_id, id);
        else if (running)
            suspend_to_move(s, node_id, PQgetvalue(rows, i, 1), id);
        else if (strcmp(PQgetvalue(rows, i, 2), "paused") == 0)
            suspend(s, node_id, PQgetvalue(rows, i, 1), id);
        else if (*PQgetvalue(rows, i, 3))
            move_suspended(s, node_id, id, PQgetvalue(rows, i, 3));
    }
    PQclear(rows);
}

int drain_step(struct scheduler *s, const char *node_id, bool move, struct airlock_error *e)
{
    struct node_msgs read;
    int rc = store_nodes_read(&s->db, node_id, s->cfg.node_dead_after_s, &read, e);
    /* One mover at a time (a step may outlast a controller pass): another
     * would work from rows read before the first moved them. */
    static pthread_mutex_t moving = PTHREAD_MUTEX_INITIALIZER;
    if (move && rc == 0 && read.nodes[0].drain == NODE_DRAINING && read.nodes[0].msg.live &&
        pthread_mutex_trylock(&moving) == 0) {
        move_off(s, node_id);
        pthread_mutex_unlock(&moving);
        node_msgs_free(&read);
        rc = store_nodes_read(&s->db, node_id, s->cfg.node_dead_after_s, &read, e);
    }
    if (rc == 0) {
        const struct node_msg *n = &read.nodes[0];
        enum node_drain to = node_drain_next(NODE_OP_STEP, n->drain, n->holds);
        if (to != n->drain) {
            rc = store_node_drain_set(&s->db, node_id, n->drain, to, NULL, false, 0, e);
            if (rc == 0)
                log_info("node drain state", "node=%s from=%s to=%s actor=scheduler", node_id,
                         node_drain_name(n->drain), node_drain_name(to));
        }
    }
    node_msgs_free(&read);
    return rc;
}
