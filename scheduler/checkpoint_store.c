#include "checkpoint_store.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

int store_checkpoint_insert(struct db *db, const char *sandbox_id, const char *name,
                            const char *kind, int64_t created_unix_ms, struct airlock_error *e)
{
    char created[32];
    snprintf(created, sizeof(created), "%lld", (long long)created_unix_ms);
    const char *params[] = { sandbox_id, name, kind, created };
    PGresult *res = db_query(db,
                             "INSERT INTO checkpoints (sandbox_id, name, kind, created_at)"
                             " VALUES ($1, $2, $3, to_timestamp($4::bigint / 1000.0))"
                             " ON CONFLICT (sandbox_id, name) DO UPDATE"
                             " SET kind = EXCLUDED.kind, created_at = EXCLUDED.created_at",
                             4, params, AIRLOCK_ERROR_MSG(e));
    bool done = res != NULL;
    PQclear(res);
    return done ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
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
                    " (extract(epoch from created_at) * 1000)::bigint"
                    " FROM checkpoints WHERE sandbox_id = $1 ORDER BY name",
                    1, params, AIRLOCK_ERROR_MSG(e));
    return *out ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

void store_checkpoint_msg(PGresult *res, int row, Airlock__Scheduler__V1__Checkpoint *msg)
{
    airlock__scheduler__v1__checkpoint__init(msg);
    msg->sandbox_id = PQgetvalue(res, row, 0);
    msg->name = PQgetvalue(res, row, 1);
    msg->kind = PQgetvalue(res, row, 2);
    msg->created_unix_ms = atoll(PQgetvalue(res, row, 3));
}
