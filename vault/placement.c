/* One read of the scheduler's row per injection: placement changes
 * (resume elsewhere, a node lost) take effect at once, and the row is
 * read by its primary key. */
#include "placement.h"

#include <string.h>

int placement_check(struct vault *v, const char *node, const char *project_id,
                    const char *sandbox_id, struct airlock_error *e)
{
    if (!*sandbox_id)
        return airlock_error_set(e, AIRLOCK_ERR_PERMISSION,
                                 "egress:%s must name the sandbox it asks for", node);
    const char *params[] = { sandbox_id };
    char why[512];
    PGresult *res = db_query_prepared(&v->db, "placement_check",
                                      "SELECT project_id, coalesce(node_id, '') FROM sandboxes"
                                      " WHERE id = $1 AND state <> 'deleted'",
                                      1, params, why, sizeof(why));
    if (!res)
        return airlock_error_set(e, AIRLOCK_ERR_PERMISSION,
                                 "placement of sandbox %s cannot be checked: %s", sandbox_id,
                                 why);
    int rc = 0;
    if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 1), node) != 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_PERMISSION,
                               "sandbox %s is not placed on node %s", sandbox_id, node);
    else if (strcmp(PQgetvalue(res, 0, 0), project_id) != 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_PERMISSION,
                               "sandbox %s is not in project %s", sandbox_id, project_id);
    PQclear(res);
    return rc;
}
