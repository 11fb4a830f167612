/* A lost node (issue 16 item 4): the running and paused sandboxes of a
 * node silent past --node-dead-after-s become lost, so their owners see
 * it and restore them elsewhere from a checkpoint in the shared store
 * (RestoreCheckpoint, service_checkpoint.c). Suspended ones stay
 * suspended: a resume takes them elsewhere already (service_resume.h). A
 * node that comes back with the VM makes the sandbox what it shows again
 * (reconcile_plan.c). */
#include <stdio.h>

#include "controller_jobs.h"
#include "log.h"
#include "scheduler_service.h"

/* Per pass: each is one short statement. */
#define LOST_BATCH "100"

void controller_lost_pass(struct scheduler *s)
{
    struct airlock_error e;
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", s->cfg.node_dead_after_s);
    const char *params[] = { dead_after };
    PGresult *rows = db_query(&s->db,
                              "SELECT s.id, s.state, s.node_id,"
                              " to_char(n.last_seen AT TIME ZONE 'UTC',"
                              "   'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
                              " FROM sandboxes s JOIN nodes n ON n.id = s.node_id"
                              " WHERE s.state IN ('running', 'paused')"
                              " AND n.last_seen < now() - make_interval(secs => $1::integer)"
                              " ORDER BY s.id LIMIT " LOST_BATCH,
                              1, params, AIRLOCK_ERROR_MSG(&e));
    if (!rows) {
        log_warn("lost controller: database", "error=\"%s\"", e.message);
        return;
    }
    for (int i = 0; i < PQntuples(rows); i++) {
        const char *id = PQgetvalue(rows, i, 0), *node = PQgetvalue(rows, i, 2);
        enum sandbox_state from;
        if (sandbox_state_parse(PQgetvalue(rows, i, 1), &from) < 0)
            continue;
        char why[256];
        snprintf(why, sizeof(why), "its node %s is silent since %s (--node-dead-after-s %d)",
                 node, PQgetvalue(rows, i, 3), s->cfg.node_dead_after_s);
        struct transition_note note = { "controller:lost", why, "" };
        /* Compare-and-set: one that a request moved meanwhile is left. */
        if (service_transition(s, id, from, SANDBOX_LOST, &note, &e) == 0)
            log_warn("sandbox lost with its node", "sandbox=%s node=%s was=%s", id, node,
                     sandbox_state_name(from));
    }
    PQclear(rows);
}
