/* Deadlines (sandboxes.expires_at, E2B's timeout: docs/e2b.md): a running
 * or paused sandbox past its deadline is deleted, or suspended when its
 * on_timeout says so. A suspend drops the deadline (store_transition), so
 * a later resume sets no new one by itself (E2B's connect does). */
#include <stdio.h>
#include <string.h>

#include "controller_jobs.h"
#include "log.h"
#include "scheduler_service.h"

/* Per pass, the longest overdue first: each asks a node, so bound it. */
#define DEADLINE_BATCH "20"

void controller_deadline_pass(struct scheduler *s)
{
    struct airlock_error e;
    PGresult *rows = db_query(&s->db,
                              "SELECT id, project_id, on_timeout FROM sandboxes"
                              " WHERE expires_at < now() AND state IN ('running', 'paused')"
                              " ORDER BY expires_at LIMIT " DEADLINE_BATCH,
                              0, NULL, AIRLOCK_ERROR_MSG(&e));
    if (!rows) {
        log_warn("deadline controller: database", "error=\"%s\"", e.message);
        return;
    }
    for (int i = 0; i < PQntuples(rows); i++) {
        const char *id = PQgetvalue(rows, i, 0);
        bool suspend = strcmp(PQgetvalue(rows, i, 2), "suspend") == 0;
        struct transition_note note = { "controller:deadline", "timeout expired", "" };
        char node[128];
        int rc = service_sandbox_op(s, PQgetvalue(rows, i, 1), id,
                                    suspend ? SANDBOX_OP_SUSPEND : SANDBOX_OP_DELETE, &note, node,
                                    sizeof(node), &e);
        if (rc == 0)
            log_info("sandbox timed out", "sandbox=%s node=%s on_timeout=%s", id, node,
                     PQgetvalue(rows, i, 2));
        else
            log_warn("timeout action failed", "sandbox=%s error=\"%s\"", id, e.message);
    }
    PQclear(rows);
}
