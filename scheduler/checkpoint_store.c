#include "checkpoint_store.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

void store_checkpoint_ask(const char *project_id, const struct quota_values *quota_defaults,
                          struct quota_ask *out)
{
    *out = (struct quota_ask){ project_id, { { 0 } }, quota_defaults };
    out->request.v[QUOTA_CHECKPOINTS] = 1;
}

int store_checkpoint_insert(struct db *db, const char *sandbox_id, const char *name,
                            const char *kind, int64_t created_unix_ms, const char *store_object,
                            const struct quota_ask *ask, struct airlock_error *e)
{
    char created[32];
    snprintf(created, sizeof(created), "%lld", (long long)created_unix_ms);
    struct quota_ask_params quota;
    quota_ask_params(ask, &quota);
    const char *params[] = { sandbox_id, name, kind, created, ask->project_id, quota.request,
                             quota.defaults, store_object };
    PGresult *res = db_query(db,
                             "WITH" QUOTA_GATE("$5", "$6", "$7") ","
                             " c AS (INSERT INTO checkpoints (sandbox_id, name, kind, created_at,"
                             "   store_object)"
                             "   SELECT $1, $2, $3, to_timestamp($4::bigint / 1000.0), $8"
                             "   WHERE" QUOTA_ADMITTED
                             "   ON CONFLICT (sandbox_id, name) DO UPDATE"
                             "   SET kind = EXCLUDED.kind, created_at = EXCLUDED.created_at,"
                             "   store_object = EXCLUDED.store_object"
                             "   RETURNING 1)"
                             " SELECT" QUOTA_ANSWER_COLUMNS " FROM q",
                             8, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = quota_ask_answer(ask, res, 0, 0, e);
    PQclear(res);
    return rc;
}

int store_checkpoint_delete(struct db *db, const char *sandbox_id, const char *name,
                            struct airlock_error *e)
{
    const char *params[] = { sandbox_id, name };
    PGresult *res = db_query(db, "DELETE FROM checkpoints WHERE sandbox_id = $1 AND name = $2", 2,
                             params, AIRLOCK_ERROR_MSG(e));
    bool done = res != NULL;
    PQclear(res);
    return done ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

int store_checkpoint_list(struct db *db, const char *sandbox_id, PGresult **out,
                          struct airlock_error *e)
{
    const char *params[] = { sandbox_id };
    *out = db_query(db,
                    "SELECT sandbox_id, name, kind,"
                    " (extract(epoch from created_at) * 1000)::bigint, store_object <> ''"
                    " FROM checkpoints WHERE sandbox_id = $1 ORDER BY name",
                    1, params, AIRLOCK_ERROR_MSG(e));
    return *out ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

int store_checkpoint_stored(struct db *db, const char *sandbox_id, const char *name, char *set,
                            size_t setlen, char *found, size_t foundlen, struct airlock_error *e)
{
    const char *params[] = { sandbox_id, name };
    PGresult *res = db_query(db,
                             "SELECT name, store_object FROM checkpoints"
                             " WHERE sandbox_id = $1 AND store_object <> ''"
                             " AND ($2 = '' OR name = $2)"
                             " ORDER BY created_at DESC, name DESC LIMIT 1",
                             2, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = 0;
    if (PQntuples(res) == 1) {
        snprintf(found, foundlen, "%s", PQgetvalue(res, 0, 0));
        snprintf(set, setlen, "%s", PQgetvalue(res, 0, 1));
    } else if (*name) {
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "sandbox %s is lost and its checkpoint %s is not in the shared "
                               "snapshot store (only a full checkpoint made on a node with "
                               "--snapshot-store is)",
                               sandbox_id, name);
    } else {
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "sandbox %s is lost and has no checkpoint in the shared snapshot "
                               "store to restore it from (make full checkpoints, or set "
                               "checkpoint_every_s, on nodes with --snapshot-store)",
                               sandbox_id);
    }
    PQclear(res);
    return rc;
}

int store_checkpoint_older_auto(struct db *db, const char *sandbox_id, const char *keep,
                               PGresult **older, struct airlock_error *e)
{
    const char *params[] = { sandbox_id, keep };
    *older = db_query(db,
                      "SELECT name FROM checkpoints WHERE sandbox_id = $1"
                      " AND name LIKE '" CHECKPOINT_AUTO_PREFIX "%' AND name <> $2 ORDER BY name",
                      2, params, AIRLOCK_ERROR_MSG(e));
    return *older ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

void store_checkpoint_msg(PGresult *res, int row, Airlock__Scheduler__V1__Checkpoint *msg)
{
    airlock__scheduler__v1__checkpoint__init(msg);
    msg->sandbox_id = PQgetvalue(res, row, 0);
    msg->name = PQgetvalue(res, row, 1);
    msg->kind = PQgetvalue(res, row, 2);
    msg->created_unix_ms = atoll(PQgetvalue(res, row, 3));
    msg->stored = PQgetvalue(res, row, 4)[0] == 't';
}
