/* Draining: drain_step (node_drain.h) on every node that is draining or
 * drained, each pass. */
#include "controller_jobs.h"
#include "log.h"
#include "node_drain.h"

void controller_drain_pass(struct scheduler *s)
{
    struct airlock_error e;
    PGresult *rows = db_query(&s->db,
                              "SELECT id FROM nodes WHERE drain IN ('draining', 'drained')"
                              " ORDER BY id",
                              0, NULL, AIRLOCK_ERROR_MSG(&e));
    if (!rows) {
        log_warn("drain controller: database", "error=\"%s\"", e.message);
        return;
    }
    for (int i = 0; i < PQntuples(rows); i++)
        if (drain_step(s, PQgetvalue(rows, i, 0), true, &e) < 0)
            log_warn("drain step failed", "node=%s error=\"%s\"", PQgetvalue(rows, i, 0),
                     e.message);
    PQclear(rows);
}
