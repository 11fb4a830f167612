#include "volume_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quota_store.h"

#define RFC3339(column) \
    "to_char(" column " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* A volume row as store_volume_row reads it (this order); $1 is always
 * --node-dead-after-s. The holder holds the volume itself; readers have
 * one of its snapshots. */
#define VOLUME_SELECT                                                                      \
    "SELECT v.id::text, v.name, v.size_mb, coalesce(v.node_id, ''), v.from_snapshot, "     \
    RFC3339("v.created_at") ","                                                            \
    " coalesce((SELECT a.sandbox_id FROM sandbox_volumes a"                                \
    "   WHERE a.volume_id = v.id AND a.snapshot_id IS NULL), ''),"                         \
    " coalesce((SELECT string_agg(DISTINCT a.sandbox_id, ',') FROM sandbox_volumes a"      \
    "   WHERE a.volume_id = v.id AND a.snapshot_id IS NOT NULL), ''),"                     \
    " coalesce((SELECT n.last_seen > now() - make_interval(secs => $1::integer)"           \
    "   FROM nodes n WHERE n.id = v.node_id), false)"                                      \
    " FROM volumes v"

#define SNAPSHOT_SELECT                                                                    \
    "SELECT id::text, name, " RFC3339("created_at") ", size_mb, coalesce(node_id, '')"     \
    " FROM volume_snapshots"

void store_volume_row(PGresult *res, int row, struct volume_row *out)
{
    out->id = PQgetvalue(res, row, 0);
    out->name = PQgetvalue(res, row, 1);
    out->size_mb = strtoull(PQgetvalue(res, row, 2), NULL, 10);
    out->node = PQgetvalue(res, row, 3);
    out->from_snapshot = PQgetvalue(res, row, 4);
    out->created_at = PQgetvalue(res, row, 5);
    out->holder = PQgetvalue(res, row, 6);
    out->readers = PQgetvalue(res, row, 7);
    out->node_live = PQgetvalue(res, row, 8)[0] == 't';
}

/* res, or unavailable when the statement failed. */
static int query_ok(PGresult *res, struct airlock_error *e)
{
    return res ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

int store_volume_get(struct db *db, const char *project_id, const char *name, int dead_after_s,
                     PGresult **out, struct airlock_error *e)
{
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", dead_after_s);
    const char *params[] = { dead_after, project_id, name };
    *out = db_query(db, VOLUME_SELECT " WHERE v.project_id = $2 AND v.name = $3", 3, params,
                    AIRLOCK_ERROR_MSG(e));
    if (query_ok(*out, e) < 0)
        return -1;
    if (PQntuples(*out) == 1)
        return 0;
    PQclear(*out);
    *out = NULL;
    return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "volume %s not found", name);
}

int store_volume_list(struct db *db, const char *project_id, int dead_after_s, PGresult **out,
                      struct airlock_error *e)
{
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", dead_after_s);
    const char *params[] = { dead_after, project_id };
    *out = db_query(db, VOLUME_SELECT " WHERE v.project_id = $2 ORDER BY v.name", 2, params,
                    AIRLOCK_ERROR_MSG(e));
    return query_ok(*out, e);
}

int store_volume_snapshots(struct db *db, const char *volume_id, PGresult **out,
                           struct airlock_error *e)
{
    const char *params[] = { volume_id };
    *out = db_query(db, SNAPSHOT_SELECT " WHERE volume_id = $1 ORDER BY name", 1, params,
                    AIRLOCK_ERROR_MSG(e));
    return query_ok(*out, e);
}

int store_volume_snapshot_get(struct db *db, const char *volume_id, const char *volume,
                              const char *name, PGresult **out, struct airlock_error *e)
{
    const char *params[] = { volume_id, name };
    *out = db_query(db, SNAPSHOT_SELECT " WHERE volume_id = $1 AND name = $2", 2, params,
                    AIRLOCK_ERROR_MSG(e));
    if (query_ok(*out, e) < 0)
        return -1;
    if (PQntuples(*out) == 1)
        return 0;
    PQclear(*out);
    *out = NULL;
    return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "snapshot %s@%s not found", volume, name);
}

/* The gate's verdict on a statement whose first column is what it wrote
 * (NULL: nothing) and whose QUOTA_ANSWER_COLUMNS follow: 1 when written,
 * 0 when the gate admitted it and nothing was written, -1 when refused. */
static int gated(const struct quota_ask *ask, PGresult *res, struct airlock_error *e)
{
    if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
        return 1;
    return quota_ask_answer(ask, res, 0, 1, e);
}

int store_volume_insert(struct db *db, const char *project_id, const char *name,
                        uint64_t size_mb, const char *node, const char *from_snapshot,
                        const struct quota_values *quota_defaults, char id[VOLUME_ID_SIZE],
                        struct airlock_error *e)
{
    struct quota_ask ask = { project_id, { { 0 } }, quota_defaults };
    ask.request.v[QUOTA_VOLUMES] = 1;
    ask.request.v[QUOTA_VOLUME_MB] = (int64_t)size_mb;
    struct quota_ask_params quota;
    quota_ask_params(&ask, &quota);
    char size[24];
    snprintf(size, sizeof(size), "%llu", (unsigned long long)size_mb);
    const char *params[] = { project_id, name, size, node ? node : "", from_snapshot,
                             quota.request, quota.defaults };
    /* The gate and the row in one statement: two creates of one project
     * are counted one after the other. */
    PGresult *res = db_query(
        db,
        "WITH" QUOTA_GATE("$1", "$6", "$7") ","
        " v AS (INSERT INTO volumes (id, project_id, name, size_mb, node_id, from_snapshot)"
        "   SELECT gen_random_uuid(), $1, $2, $3::bigint, NULLIF($4, ''), $5"
        "   WHERE" QUOTA_ADMITTED
        "   ON CONFLICT (project_id, name) DO NOTHING RETURNING id)"
        " SELECT (SELECT id::text FROM v)," QUOTA_ANSWER_COLUMNS " FROM q",
        7, params, AIRLOCK_ERROR_MSG(e));
    if (query_ok(res, e) < 0)
        return -1;
    int rc = gated(&ask, res, e);
    if (rc == 1)
        snprintf(id, VOLUME_ID_SIZE, "%s", PQgetvalue(res, 0, 0));
    else if (rc == 0)
        airlock_error_set(e, AIRLOCK_ERR_EXISTS, "volume %s already exists", name);
    PQclear(res);
    return rc == 1 ? 0 : -1;
}

int store_volume_resize(struct db *db, const char *project_id, const char *id, const char *name,
                        uint64_t size_mb, const struct quota_values *quota_defaults,
                        struct airlock_error *e)
{
    PGresult *res;
    const char *get[] = { id };
    res = db_query(db, "SELECT size_mb FROM volumes WHERE id = $1", 1, get, AIRLOCK_ERROR_MSG(e));
    if (query_ok(res, e) < 0)
        return -1;
    uint64_t now = PQntuples(res) == 1 ? strtoull(PQgetvalue(res, 0, 0), NULL, 10) : 0;
    PQclear(res);
    if (now == 0)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "volume %s not found", name);
    if (size_mb <= now)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "size_mb: volume %s is %llu MiB already; a volume only grows",
                                 name, (unsigned long long)now);
    struct quota_ask ask = { project_id, { { 0 } }, quota_defaults };
    ask.request.v[QUOTA_VOLUME_MB] = (int64_t)(size_mb - now);
    struct quota_ask_params quota;
    quota_ask_params(&ask, &quota);
    char size[24], was[24];
    snprintf(size, sizeof(size), "%llu", (unsigned long long)size_mb);
    snprintf(was, sizeof(was), "%llu", (unsigned long long)now);
    const char *params[] = { project_id, id, size, was, quota.request, quota.defaults };
    /* Only from the size the quota was asked for: a concurrent grow makes
     * this one write nothing (aborted, worth retrying). */
    res = db_query(db,
                   "WITH" QUOTA_GATE("$1", "$5", "$6") ","
                   " u AS (UPDATE volumes SET size_mb = $3::bigint"
                   "   WHERE id = $2::uuid AND size_mb = $4::bigint AND" QUOTA_ADMITTED
                   "   RETURNING id)"
                   " SELECT (SELECT id::text FROM u)," QUOTA_ANSWER_COLUMNS " FROM q",
                   6, params, AIRLOCK_ERROR_MSG(e));
    if (query_ok(res, e) < 0)
        return -1;
    int rc = gated(&ask, res, e);
    PQclear(res);
    if (rc == 0)
        return airlock_error_set(e, AIRLOCK_ERR_ABORTED, "volume %s changed meanwhile; retry",
                                 name);
    return rc == 1 ? 0 : -1;
}

int store_volume_size_set(struct db *db, const char *id, uint64_t size_mb,
                          struct airlock_error *e)
{
    char size[24];
    snprintf(size, sizeof(size), "%llu", (unsigned long long)size_mb);
    const char *params[] = { id, size };
    PGresult *res = db_query(db, "UPDATE volumes SET size_mb = $2::bigint WHERE id = $1::uuid", 2,
                             params, AIRLOCK_ERROR_MSG(e));
    if (query_ok(res, e) < 0)
        return -1;
    PQclear(res);
    return 0;
}

int store_volume_holder(struct db *db, const char *id, char *holder, size_t len,
                        struct airlock_error *e)
{
    const char *params[] = { id };
    PGresult *res = db_query(db,
                             "SELECT sandbox_id FROM sandbox_volumes WHERE volume_id = $1::uuid"
                             " ORDER BY snapshot_id IS NOT NULL, sandbox_id LIMIT 1",
                             1, params, AIRLOCK_ERROR_MSG(e));
    if (query_ok(res, e) < 0)
        return -1;
    snprintf(holder, len, "%s", PQntuples(res) ? PQgetvalue(res, 0, 0) : "");
    PQclear(res);
    return 0;
}

/* The refusal of a change to something a sandbox has attached: state
 * naming the sandbox. */
static int attached_refusal(struct db *db, const char *volume_id, const char *what,
                            struct airlock_error *e)
{
    char holder[72];
    if (store_volume_holder(db, volume_id, holder, sizeof(holder), e) < 0)
        return -1;
    return airlock_error_set(e, AIRLOCK_ERR_STATE,
                             "%s is attached to sandbox %s: delete that sandbox first", what,
                             *holder ? holder : "(gone meanwhile; retry)");
}

int store_volume_delete(struct db *db, const char *id, const char *name, PGresult **other_nodes,
                        struct airlock_error *e)
{
    const char *params[] = { id };
    /* The snapshots' rows as they were before the delete cascades. */
    PGresult *res = db_query(db,
                             "WITH d AS (DELETE FROM volumes WHERE id = $1::uuid AND NOT EXISTS"
                             "  (SELECT 1 FROM sandbox_volumes WHERE volume_id = $1::uuid)"
                             "  RETURNING id, node_id)"
                             " SELECT DISTINCT ON (n.node_id) d.id, n.node_id FROM d LEFT JOIN"
                             "  volume_snapshots n ON n.volume_id = d.id AND n.node_id IS NOT NULL"
                             "  AND n.node_id IS DISTINCT FROM d.node_id",
                             1, params, AIRLOCK_ERROR_MSG(e));
    if (query_ok(res, e) < 0)
        return -1;
    int deleted = PQntuples(res);
    if (other_nodes)
        *other_nodes = NULL;
    /* None elsewhere: the left join's one row, without a node. */
    if (deleted && other_nodes && !PQgetisnull(res, 0, 1)) {
        *other_nodes = res;
        return 0;
    }
    PQclear(res);
    if (deleted)
        return 0;
    char what[96];
    snprintf(what, sizeof(what), "volume %s", name);
    return attached_refusal(db, id, what, e);
}

int store_snapshot_insert(struct db *db, const char *volume_id, const char *volume,
                          const char *name, char snap_id[VOLUME_ID_SIZE], struct airlock_error *e)
{
    const char *params[] = { volume_id, name };
    PGresult *res = db_query(db,
                             "INSERT INTO volume_snapshots (id, volume_id, name, size_mb, node_id)"
                             " SELECT gen_random_uuid(), id, $2, size_mb, node_id FROM volumes"
                             " WHERE id = $1::uuid ON CONFLICT (volume_id, name) DO NOTHING"
                             " RETURNING id::text",
                             2, params, AIRLOCK_ERROR_MSG(e));
    if (query_ok(res, e) < 0)
        return -1;
    int rc = 0;
    if (PQntuples(res) == 1)
        snprintf(snap_id, VOLUME_ID_SIZE, "%s", PQgetvalue(res, 0, 0));
    else
        rc = airlock_error_set(e, AIRLOCK_ERR_EXISTS, "snapshot %s@%s already exists", volume,
                               name);
    PQclear(res);
    return rc;
}

int store_snapshot_delete(struct db *db, const char *snap_id, const char *ref,
                          struct airlock_error *e)
{
    const char *params[] = { snap_id };
    PGresult *res = db_query(db,
                             "WITH d AS (DELETE FROM volume_snapshots WHERE id = $1::uuid AND"
                             " NOT EXISTS (SELECT 1 FROM sandbox_volumes WHERE snapshot_id ="
                             " $1::uuid) RETURNING id)"
                             " SELECT (SELECT count(*) FROM d),"
                             " (SELECT sandbox_id FROM sandbox_volumes WHERE snapshot_id ="
                             " $1::uuid LIMIT 1)",
                             1, params, AIRLOCK_ERROR_MSG(e));
    if (query_ok(res, e) < 0)
        return -1;
    int rc = 0;
    if (atoi(PQgetvalue(res, 0, 0)) == 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "snapshot %s is attached to sandbox %s: delete that sandbox first",
                               ref, PQgetvalue(res, 0, 1));
    PQclear(res);
    return rc;
}

int store_volumes_first_use(struct db *db, const char *sandbox_id, const char *node,
                            struct airlock_error *e)
{
    const char *params[] = { sandbox_id, node };
    PGresult *res = db_query(db,
                             "UPDATE volumes SET node_id = $2 WHERE node_id IS NULL AND id IN"
                             " (SELECT volume_id FROM sandbox_volumes WHERE sandbox_id = $1"
                             "  AND snapshot_id IS NULL)",
                             2, params, AIRLOCK_ERROR_MSG(e));
    if (query_ok(res, e) < 0)
        return -1;
    PQclear(res);
    return 0;
}

void store_snapshot_msg(PGresult *res, int row, Airlock__V1__VolumeSnapshot *out)
{
    airlock__v1__volume_snapshot__init(out);
    out->name = PQgetvalue(res, row, SNAP_NAME);
    out->created_at = PQgetvalue(res, row, SNAP_CREATED);
}

int store_volume_msg(PGresult *res, int row, PGresult *snaps, struct volume_msg *out,
                     struct airlock_error *e)
{
    *out = (struct volume_msg){ 0 };
    Airlock__V1__Volume *m = &out->msg;
    airlock__v1__volume__init(m);
    struct volume_row r;
    store_volume_row(res, row, &r);
    m->name = (char *)r.name;
    m->id = (char *)r.id;
    m->size_mb = r.size_mb;
    m->node = (char *)r.node;
    m->attached_sandbox = (char *)r.holder;
    m->created_at = (char *)r.created_at;
    m->from_snapshot = (char *)r.from_snapshot;
    size_t n_snaps = snaps ? (size_t)PQntuples(snaps) : 0;
    out->readers_text = strdup(r.readers);
    size_t max_readers = 1;
    for (const char *c = r.readers; *c; c++)
        max_readers += *c == ',';
    out->readers = calloc(max_readers + 1, sizeof(char *));
    out->snaps = calloc(n_snaps + 1, sizeof(*out->snaps));
    out->snap_ptrs = calloc(n_snaps + 1, sizeof(*out->snap_ptrs));
    if (!out->readers_text || !out->readers || !out->snaps || !out->snap_ptrs)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    /* "sb_a,sb_b" as its sandboxes. */
    char *save = NULL;
    size_t n = 0;
    for (char *t = strtok_r(out->readers_text, ",", &save); t && n < max_readers;
         t = strtok_r(NULL, ",", &save))
        out->readers[n++] = t;
    m->attached_read_only = out->readers;
    m->n_attached_read_only = n;
    for (size_t i = 0; i < n_snaps; i++) {
        store_snapshot_msg(snaps, (int)i, &out->snaps[i]);
        out->snap_ptrs[i] = &out->snaps[i];
    }
    m->snapshots = out->snap_ptrs;
    m->n_snapshots = n_snaps;
    return 0;
}

void store_volume_msg_free(struct volume_msg *m)
{
    free(m->snaps);
    free(m->snap_ptrs);
    free(m->readers);
    free(m->readers_text);
    *m = (struct volume_msg){ 0 };
}
