/* Hard TTL: a sandbox whose ttl_s has passed since its creation is
 * deleted, in whatever settled state it is (a transitional one is left to
 * its request, or to reconciliation when stuck). */
#include <stdio.h>

#include "controller_jobs.h"
#include "log.h"
#include "scheduler_service.h"

/* Per pass, oldest first: a delete asks a node, so bound the pass. */
#define TTL_BATCH "20"

void controller_ttl_pass(struct scheduler *s)
{
    struct airlock_error e;
    PGresult *rows = db_query(&s->db,
                              "SELECT id, project_id, ttl_s FROM sandboxes"
                              " WHERE ttl_s > 0 AND state IN ('running', 'paused', 'suspended', 'error', 'lost')"
                              " AND created_at < now() - make_interval(secs => ttl_s)"
                              " ORDER BY created_at LIMIT " TTL_BATCH,
                              0, NULL, AIRLOCK_ERROR_MSG(&e));
    if (!rows) {
        log_warn("ttl controller: database", "error=\"%s\"", e.message);
        return;
    }
    for (int i = 0; i < PQntuples(rows); i++) {
        const char *id = PQgetvalue(rows, i, 0);
        char why[64], node[128];
        snprintf(why, sizeof(why), "ttl_s=%s expired", PQgetvalue(rows, i, 2));
        struct transition_note note = { "controller:ttl", why, "" };
        int rc = service_sandbox_op(s, PQgetvalue(rows, i, 1), id, SANDBOX_OP_DELETE, &note, node,
                                    sizeof(node), &e);
        if (rc == 0)
            log_info("sandbox deleted: ttl expired", "sandbox=%s node=%s ttl_s=%s", id, node,
                     PQgetvalue(rows, i, 2));
        else
            log_warn("ttl delete failed", "sandbox=%s error=\"%s\"", id, e.message);
    }
    PQclear(rows);
}
