#include "template_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes.h"
#include "quota_store.h"

/* Column order is what store_template_msg() reads. */
#define TEMPLATE_SELECT                                                                   \
    "SELECT name, version, project_id, coalesce(node_id, ''), cpus, memory_mb,"           \
    " spec::text, (extract(epoch from created_at) * 1000)::bigint, build_ms, id,"         \
    " store_object FROM templates"

/* A new version can lose the race for its number to a concurrent build of
 * the same name (the unique index says so): it tries the next one. */
#define TEMPLATE_BEGIN_ATTEMPTS 3

const char *template_display_name(const char *id, const char *project_id)
{
    size_t n = strlen(project_id);
    return n && strncmp(id, project_id, n) == 0 && id[n] == '.' ? id + n + 1 : id;
}

int store_template_choose(struct db *db, const char *project_id, const char *ref,
                          struct template_choice *out, struct airlock_error *e)
{
    memset(out, 0, sizeof(*out));
    if (!*ref || strcmp(ref, TEMPLATE_DEFAULT_NAME) == 0) {
        snprintf(out->id, sizeof(out->id), "%s", TEMPLATE_DEFAULT_NAME);
        return 0;
    }
    char name[TEMPLATE_NAME_MAX + 1];
    unsigned version;
    if (!template_ref_parse(ref, name, sizeof(name), &version))
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND,
                                 "template \"%s\" not found (a name, or name:version)", ref);
    PGresult *res = NULL;
    int rc = store_template_find(db, project_id, name, version, &res, e);
    if (rc < 0)
        return rc;
    int n = PQntuples(res);
    if (n == 0) {
        rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "template \"%s\" not found", ref);
    } else {
        snprintf(out->id, sizeof(out->id), "%s", store_template_id(res, n - 1));
        out->cpus = (unsigned)atoi(PQgetvalue(res, n - 1, 4));
        out->memory_mb = (unsigned)atoi(PQgetvalue(res, n - 1, 5));
    }
    PQclear(res);
    return rc;
}

int store_template_begin(struct db *db, const char *project_id, const char *name,
                         const char *node_id, const char *spec_json,
                         const struct quota_values *quota_defaults, char *id, size_t idlen,
                         unsigned *version, struct airlock_error *e)
{
    /* One more version, and one more build running. */
    struct quota_ask ask = { project_id, { { 0 } }, quota_defaults };
    ask.request.v[QUOTA_TEMPLATES] = 1;
    ask.request.v[QUOTA_TEMPLATE_BUILDS] = 1;
    struct quota_ask_params quota;
    quota_ask_params(&ask, &quota);
    const char *params[] = { project_id, name, node_id, spec_json, quota.request, quota.defaults };
    for (int attempt = 1; attempt <= TEMPLATE_BEGIN_ATTEMPTS; attempt++) {
        PGresult *res = db_query(
            db,
            "WITH" QUOTA_GATE("$1", "$5", "$6") ","
            " v AS (SELECT coalesce(max(version), 0) + 1 AS n FROM templates"
            "   WHERE project_id = $1 AND name = $2),"
            " i AS (INSERT INTO templates (id, project_id, name, version, node_id, spec, state)"
            "   SELECT $1 || '.' || $2 || ':' || v.n, $1, $2, v.n, $3, $4::jsonb, 'building'"
            "   FROM v WHERE" QUOTA_ADMITTED " ON CONFLICT DO NOTHING RETURNING id, version)"
            " SELECT i.id, i.version," QUOTA_ANSWER_COLUMNS " FROM q LEFT JOIN i ON true",
            6, params, AIRLOCK_ERROR_MSG(e));
        if (!res)
            return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
        bool inserted = !PQgetisnull(res, 0, 0);
        if (inserted) {
            snprintf(id, idlen, "%s", PQgetvalue(res, 0, 0));
            *version = (unsigned)atoi(PQgetvalue(res, 0, 1));
        }
        int rc = inserted ? 0 : quota_ask_answer(&ask, res, 0, 2, e);
        PQclear(res);
        if (inserted || rc < 0)
            return rc;
    }
    return airlock_error_set(e, AIRLOCK_ERR_ABORTED, "template %s: concurrent builds of the same name took every version "
                          "number tried; build again", name);
}

int store_template_ready(struct db *db, const char *id, unsigned cpus, unsigned memory_mb,
                         unsigned build_ms, const char *store_object, struct airlock_error *e)
{
    char c[16], m[16], b[16];
    snprintf(c, sizeof(c), "%u", cpus);
    snprintf(m, sizeof(m), "%u", memory_mb);
    snprintf(b, sizeof(b), "%u", build_ms);
    const char *params[] = { id, c, m, b, store_object };
    PGresult *res = db_query(db,
                             "UPDATE templates SET state = 'ready', cpus = $2::integer,"
                             " memory_mb = $3::integer, build_ms = $4::integer,"
                             " store_object = $5 WHERE id = $1",
                             5, params, AIRLOCK_ERROR_MSG(e));
    bool done = res != NULL;
    PQclear(res);
    return done ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

void store_template_abort(struct db *db, const char *id)
{
    const char *params[] = { id };
    struct airlock_error e;
    PQclear(db_query(db, "DELETE FROM templates WHERE id = $1 AND state = 'building'", 1, params,
                     AIRLOCK_ERROR_MSG(&e)));
}

int store_template_find(struct db *db, const char *project_id, const char *name, unsigned version,
                        PGresult **out, struct airlock_error *e)
{
    char v[16];
    snprintf(v, sizeof(v), "%u", version);
    const char *params[] = { project_id, name, v };
    *out = db_query(db,
                    TEMPLATE_SELECT " WHERE project_id = $1 AND state = 'ready'"
                                    " AND ($2::text IS NULL OR name = $2)"
                                    " AND ($3::integer = 0 OR version = $3::integer)"
                                    " ORDER BY name, version",
                    3, params, AIRLOCK_ERROR_MSG(e));
    return *out ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

void store_template_msg(PGresult *res, int row, Airlock__Scheduler__V1__Template *msg)
{
    airlock__scheduler__v1__template__init(msg);
    msg->name = PQgetvalue(res, row, 0);
    msg->version = (uint32_t)atoi(PQgetvalue(res, row, 1));
    msg->project_id = PQgetvalue(res, row, 2);
    msg->node_id = PQgetvalue(res, row, 3);
    msg->cpus = (uint32_t)atoi(PQgetvalue(res, row, 4));
    msg->memory_mb = (uint32_t)atoi(PQgetvalue(res, row, 5));
    msg->spec_json = PQgetvalue(res, row, 6);
    msg->created_unix_ms = atoll(PQgetvalue(res, row, 7));
    msg->build_ms = (uint32_t)atoi(PQgetvalue(res, row, 8));
}

const char *store_template_id(PGresult *res, int row)
{
    return PQgetvalue(res, row, 9);
}

const char *store_template_node(PGresult *res, int row)
{
    return PQgetvalue(res, row, 3);
}

const char *store_template_object(PGresult *res, int row)
{
    return PQgetvalue(res, row, 10);
}

int store_template_object_of(struct db *db, const char *id, char *out, size_t len,
                             struct airlock_error *e)
{
    const char *params[] = { id };
    PGresult *res = db_query(db, "SELECT store_object FROM templates WHERE id = $1", 1, params,
                             AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    snprintf(out, len, "%s", PQntuples(res) ? PQgetvalue(res, 0, 0) : "");
    PQclear(res);
    return 0;
}

int store_template_holders(struct db *db, const char *id, const char *builder, PGresult **out,
                           struct airlock_error *e)
{
    const char *params[] = { id, builder };
    *out = db_query(db,
                    "SELECT id FROM nodes WHERE id = $2 OR $1 = ANY(templates) ORDER BY id", 2,
                    params, AIRLOCK_ERROR_MSG(e));
    return *out ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

int store_template_user(struct db *db, const char *project_id, const char *name, unsigned version,
                        char *sandbox, size_t len, struct airlock_error *e)
{
    char v[16];
    snprintf(v, sizeof(v), "%u", version);
    const char *params[] = { project_id, name, v };
    PGresult *res = db_query(db,
                             "SELECT s.id FROM sandboxes s JOIN templates t ON t.id = s.template"
                             " WHERE t.project_id = $1 AND t.name = $2"
                             " AND ($3::integer = 0 OR t.version = $3::integer)"
                             " AND s.state <> 'deleted' ORDER BY s.created_at LIMIT 1",
                             3, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    snprintf(sandbox, len, "%s", PQntuples(res) ? PQgetvalue(res, 0, 0) : "");
    PQclear(res);
    return 0;
}

int store_template_mark_deleted(struct db *db, const char *id, struct airlock_error *e)
{
    const char *params[] = { id };
    PGresult *res = db_query(db, "UPDATE templates SET state = 'deleted' WHERE id = $1", 1, params,
                             AIRLOCK_ERROR_MSG(e));
    bool done = res != NULL;
    PQclear(res);
    return done ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

int store_template_pick_node(struct db *db, int dead_after_s, char *node, size_t len,
                             struct airlock_error *e)
{
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", dead_after_s);
    const char *params[] = { dead_after };
    PGresult *res = db_query(db,
                             "SELECT id FROM nodes n WHERE " NODES_TAKING_WORK("n", "$1")
                             " ORDER BY free_memory_mb DESC, id LIMIT 1",
                             1, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = 0;
    if (PQntuples(res) == 1) {
        snprintf(node, len, "%s", PQgetvalue(res, 0, 0));
    } else {
        rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY,
                               "no live active node to build the template on");
    }
    PQclear(res);
    return rc;
}
