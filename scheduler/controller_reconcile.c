/* Reconciliation: the database against each node's own list of sandboxes
 * (node op "list"), for nodes flagged by a restart, a heartbeat gap, a new
 * leader or the periodic sweep. The database rows are read before the node
 * is asked, so a sandbox created in between cannot look lost; each change
 * is a compare-and-set transition, so one that raced with a request fails
 * harmlessly. reconcile_plan.c decides; this file reads and acts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "controller_jobs.h"
#include "log.h"
#include "nodes.h"
#include "reconcile_plan.h"
#include "rpc_client.h"
#include "rpc_err.h"
#include "scheduler_service.h"

#define WHO "controller:reconcile"

/* The node's view of sandbox id, from its list. */
static struct reconcile_node_view node_view(Airlock__Node__V1__NodeReply *list, const char *id,
                                            const char **node_error)
{
    struct reconcile_node_view v = { 0 };
    *node_error = "";
    for (size_t i = 0; i < list->n_sandboxes; i++) {
        Airlock__Vmhost__V1__Sandbox *sb = list->sandboxes[i];
        if (strcmp(sb->id, id) != 0)
            continue;
        v.present = true;
        *node_error = sb->error;
        switch (sb->state) {
        case AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_CREATING: v.state = SANDBOX_CREATING; break;
        case AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_RUNNING: v.state = SANDBOX_RUNNING; break;
        case AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_PAUSED: v.state = SANDBOX_PAUSED; break;
        case AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_SUSPENDING: v.state = SANDBOX_SUSPENDING; break;
        case AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_SUSPENDED: v.state = SANDBOX_SUSPENDED; break;
        case AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_RESUMING: v.state = SANDBOX_RESUMING; break;
        case AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_DELETING: v.state = SANDBOX_DELETING; break;
        case AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_ERROR: v.state = SANDBOX_ERROR; break;
        default: v.busy = true; break; /* checkpointing, restoring, migrating */
        }
        break;
    }
    return v;
}

/* One database row of the node against the node's list; 1 when it
 * changed the sandbox, else 0. */
static int reconcile_row(struct scheduler *s, const char *node, Airlock__Node__V1__NodeReply *list,
                          const char *id, const char *state_name, bool past_node_timeout,
                          bool past_settled)
{
    enum sandbox_state db_state;
    if (sandbox_state_parse(state_name, &db_state) < 0)
        return 0;
    const char *node_error;
    struct reconcile_node_view view = node_view(list, id, &node_error);
    bool stuck = reconcile_stuck(db_state, past_node_timeout, past_settled, &view);
    struct reconcile_step step = reconcile_plan(db_state, stuck, &view);
    if (step.kind == RECONCILE_KEEP)
        return 0;
    struct airlock_error e;
    char why[1400];
    snprintf(why, sizeof(why), "%s (node %s)%s%.1000s", step.why, node, *node_error ? ": " : "",
             node_error);
    bool row_stays = step.to != SANDBOX_DELETED; /* and keeps its checkpoints in the store */
    if (step.kind == RECONCILE_DELETE_ON_NODE &&
        nodes_delete_sandbox(s, node, id, NULL, row_stays, &e) < 0) {
        log_warn("reconcile: delete on node failed", "sandbox=%s node=%s error=\"%s\"", id, node,
                 e.message);
        return 0;
    }
    if (step.to == db_state) {
        log_warn("reconciled", "sandbox=%s node=%s state=%s why=\"%s\"", id, node, state_name,
                 why);
        return 1;
    }
    struct transition_note note = { WHO, why, "" };
    int rc = service_transition(s, id, db_state, step.to, &note, &e);
    if (rc < 0) {
        log_info("reconcile skipped", "sandbox=%s error=\"%s\"", id,
                 e.message); /* moved meanwhile */
        return 0;
    }
    log_warn("reconciled", "sandbox=%s node=%s from=%s to=%s why=\"%s\"", id, node, state_name,
             sandbox_state_name(step.to), why);
    return 1;
}

/* creating, suspending, resuming, deleting, migrating: a request may be
 * at work. */
static bool transient(enum sandbox_state s)
{
    return s == SANDBOX_CREATING || s == SANDBOX_SUSPENDING || s == SANDBOX_RESUMING ||
           s == SANDBOX_DELETING || s == SANDBOX_MIGRATING;
}

/* A VM on the node without a live row of this node: deleted when its row
 * says deleted, when the row has settled on another node (a copy left by
 * a move through the snapshot store: service_resume.h), or when it has
 * none and is older than --reconcile-grace-s (a fork's VM exists on its
 * node a moment before its row does). */
static int reconcile_unknown_vm(struct scheduler *s, const char *node,
                                const Airlock__Vmhost__V1__Sandbox *vm)
{
    const char *params[] = { vm->id };
    struct airlock_error e;
    PGresult *res = db_query(&s->db, "SELECT state, coalesce(node_id, ''), store_object"
                             " FROM sandboxes WHERE id = $1", 1, params, AIRLOCK_ERROR_MSG(&e));
    if (!res)
        return 0;
    bool known = PQntuples(res) == 1;
    bool deleted = known && strcmp(PQgetvalue(res, 0, 0), "deleted") == 0;
    enum sandbox_state state = SANDBOX_CREATING;
    bool moved = known && !deleted && sandbox_state_parse(PQgetvalue(res, 0, 0), &state) == 0 &&
                 !transient(state) && strcmp(PQgetvalue(res, 0, 1), node) != 0;
    /* A moved sandbox may live on from its suspend in the store, and from
     * its checkpoints there (a lost one restored elsewhere). */
    char keep[256] = "";
    if (moved)
        snprintf(keep, sizeof(keep), "%s", PQgetvalue(res, 0, 2));
    PQclear(res);
    if (known && !deleted && !moved)
        return 0; /* another node's, being moved: not this node's to judge yet */
    if (!known && clock_realtime_ms() - vm->created_unix_ms < (int64_t)s->cfg.reconcile_grace_s * 1000)
        return 0;
    if (nodes_delete_sandbox(s, node, vm->id, keep, moved, &e) < 0) {
        log_warn("reconcile: delete on node failed", "sandbox=%s node=%s error=\"%s\"", vm->id,
                 node, e.message);
        return 0;
    }
    log_warn("reconcile: deleted a VM the database does not have", "sandbox=%s node=%s row=%s",
             vm->id, node, deleted ? "deleted" : moved ? "on another node" : "none");
    return 1;
}

/* 0 when the node answered its list (and was compared), else -1. */
static int reconcile_node(struct scheduler *s, const char *node)
{
    struct airlock_error e;
    char stuck_after[16], settled_after[16];
    /* Longer than a create may take with its retry. */
    snprintf(stuck_after, sizeof(stuck_after), "%d", 2 * s->cfg.node_timeout_ms / 1000 + 30);
    snprintf(settled_after, sizeof(settled_after), "%d", RECONCILE_SETTLED_AFTER_S);
    const char *params[] = { node, stuck_after, settled_after };
    PGresult *rows = db_query(&s->db,
                              "SELECT id, state, updated_at < now() - make_interval(secs => $2::integer),"
                              " updated_at < now() - make_interval(secs => $3::integer)"
                              " FROM sandboxes WHERE node_id = $1 AND state <> 'deleted'",
                              3, params, AIRLOCK_ERROR_MSG(&e));
    if (!rows) {
        log_warn("reconcile: database", "node=%s error=\"%s\"", node, e.message);
        return -1;
    }
    Airlock__Vmhost__V1__Empty req = AIRLOCK__VMHOST__V1__EMPTY__INIT;
    Airlock__Node__V1__NodeReply *list = NULL;
    int rc = nodes_call(s, node, NODE_OP(LIST), &req.base, s->cfg.node_timeout_ms, &list, &e);
    if (rc < 0) {
        log_warn("reconcile: node did not list its sandboxes", "node=%s status=%s error=\"%s\"",
                 node, airlock_error_status_name(&e), e.message);
        PQclear(rows);
        return -1;
    }
    int n = PQntuples(rows), changed = 0;
    for (int i = 0; i < n; i++)
        changed += reconcile_row(s, node, list, PQgetvalue(rows, i, 0), PQgetvalue(rows, i, 1),
                                 PQgetvalue(rows, i, 2)[0] == 't',
                                 PQgetvalue(rows, i, 3)[0] == 't');
    for (size_t v = 0; v < list->n_sandboxes; v++) {
        bool in_rows = false;
        for (int i = 0; i < n && !in_rows; i++)
            in_rows = strcmp(PQgetvalue(rows, i, 0), list->sandboxes[v]->id) == 0;
        if (!in_rows)
            changed += reconcile_unknown_vm(s, node, list->sandboxes[v]);
    }
    /* Periodic and usually uneventful: loud only when it changed something. */
    if (changed)
        log_info("node reconciled", "node=%s db_sandboxes=%d node_sandboxes=%zu changed=%d", node,
                 n, list->n_sandboxes, changed);
    else
        log_debug("node reconciled", "node=%s db_sandboxes=%d node_sandboxes=%zu", node, n,
                  list->n_sandboxes);
    PQclear(rows);
    protobuf_c_message_free_unpacked(&list->base, NULL);
    return 0;
}

void controller_reconcile_flag_all(struct scheduler *s)
{
    struct airlock_error e;
    PGresult *res =
        db_query(&s->db, "UPDATE nodes SET reconcile = true", 0, NULL, AIRLOCK_ERROR_MSG(&e));
    if (!res)
        log_warn("reconcile: cannot flag nodes", "error=\"%s\"", e.message);
    PQclear(res);
}

void controller_reconcile_pass(struct scheduler *s)
{
    struct airlock_error e;
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", s->cfg.node_dead_after_s);
    const char *params[] = { dead_after };
    PGresult *nodes = db_query(&s->db,
                               "SELECT id, started_unix_ms FROM nodes WHERE reconcile"
                               " AND last_seen > now() - make_interval(secs => $1::integer)",
                               1, params, AIRLOCK_ERROR_MSG(&e));
    if (!nodes) {
        log_warn("reconcile: database", "error=\"%s\"", e.message);
        return;
    }
    for (int i = 0; i < PQntuples(nodes); i++) {
        const char *node = PQgetvalue(nodes, i, 0);
        if (reconcile_node(s, node) < 0)
            continue;
        /* Unless it restarted again meanwhile (then it is compared again). */
        const char *done[] = { node, PQgetvalue(nodes, i, 1) };
        PGresult *res = db_query(&s->db,
                                 "UPDATE nodes SET reconcile = false"
                                 " WHERE id = $1 AND started_unix_ms = $2::bigint",
                                 2, done, AIRLOCK_ERROR_MSG(&e));
        PQclear(res);
    }
    PQclear(nodes);
}
