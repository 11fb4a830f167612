#include "quota_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void quota_ask_params(const struct quota_ask *ask, struct quota_ask_params *out)
{
    quota_values_text(&ask->request, out->request, sizeof(out->request));
    quota_values_text(ask->defaults, out->defaults, sizeof(out->defaults));
}

int quota_ask_answer(const struct quota_ask *ask, PGresult *res, int row, int column,
                     struct airlock_error *e)
{
    struct quota_values used, limits, request;
    if (PQnfields(res) < column + 4 || PQntuples(res) <= row ||
        quota_values_parse(PQgetvalue(res, row, column), &used, NULL) < 0 ||
        quota_values_parse(PQgetvalue(res, row, column + 1), &limits, NULL) < 0 ||
        quota_values_parse(PQgetvalue(res, row, column + 2), &request, NULL) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "project %s: no quota answer",
                                 ask->project_id);
    int exceeded = atoi(PQgetvalue(res, row, column + 3));
    if (exceeded == 0)
        return 0;
    if (exceeded < 1 || exceeded > QUOTA_KIND_COUNT)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "project %s: quota %d exceeded?",
                                 ask->project_id, exceeded);
    enum quota_kind k = (enum quota_kind)(exceeded - 1);
    return quota_refuse(e, ask->project_id, k, used.v[k], request.v[k], limits.v[k]);
}

int store_quota_admits(struct db *db, const struct quota_ask *ask, struct airlock_error *e)
{
    struct quota_ask_params p;
    quota_ask_params(ask, &p);
    const char *params[] = { ask->project_id, p.request, p.defaults };
    PGresult *res = db_query(db,
                             "WITH" QUOTA_GATE_COUNTING("quota_usage", "$1", "$2", "$3")
                             " SELECT" QUOTA_ANSWER_COLUMNS " FROM q",
                             3, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = quota_ask_answer(ask, res, 0, 0, e);
    PQclear(res);
    return rc;
}

int store_quota_get(struct db *db, const char *project_id, const struct quota_values *defaults,
                    struct project_quotas_msg *out, struct airlock_error *e)
{
    char defaults_text[QUOTA_VALUES_TEXT_SIZE];
    quota_values_text(defaults, defaults_text, sizeof(defaults_text));
    const char *params[] = { project_id, defaults_text };
    /* The project's own values are its limits with no defaults: NULL
     * where it has none. */
    PGresult *res = db_query(db,
                             "SELECT quota_usage(id, " QUOTA_STR(TEMPLATE_BUILD_MAX_S) ")::text,"
                             " quota_limits(id, $2::bigint[])::text,"
                             " quota_limits(id, '{}')::text FROM projects WHERE id = $1",
                             2, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    struct quota_values used, limits, own;
    bool set[QUOTA_KIND_COUNT];
    int rc = 0;
    if (PQntuples(res) != 1)
        rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "project %s not found", project_id);
    else if (quota_values_parse(PQgetvalue(res, 0, 0), &used, NULL) < 0 ||
             quota_values_parse(PQgetvalue(res, 0, 1), &limits, NULL) < 0 ||
             quota_values_parse(PQgetvalue(res, 0, 2), &own, set) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "project %s: unreadable quotas",
                               project_id);
    PQclear(res);
    if (rc < 0)
        return rc;
    airlock__v1__project_quotas__init(&out->msg);
    snprintf(out->project_id, sizeof(out->project_id), "%s", project_id);
    out->msg.project_id = out->project_id;
    for (int k = 0; k < QUOTA_KIND_COUNT; k++) {
        Airlock__V1__Quota *q = &out->quotas[k];
        airlock__v1__quota__init(q);
        q->limit = limits.v[k];
        q->used = used.v[k];
        q->is_default = !set[k];
        *quota_field(&out->msg, (enum quota_kind)k) = q;
    }
    return 0;
}

int store_quota_set(struct db *db, const char *project_id, const Airlock__V1__QuotaLimits *limits,
                    struct airlock_error *e)
{
    /* Each given value as a column's: NULL for 0 (the default); the others
     * keep theirs. */
    char values[QUOTA_KIND_COUNT][24], given[2 * QUOTA_KIND_COUNT + 2]; /* {t,f,…} */
    const char *params[2 + QUOTA_KIND_COUNT] = { project_id, given };
    given[0] = '{';
    for (int k = 0; k < QUOTA_KIND_COUNT; k++) {
        int64_t v = 0;
        bool is_given = quota_limits_get(limits, (enum quota_kind)k, &v);
        if (is_given && quota_setting_check((enum quota_kind)k, v, e) < 0)
            return -1;
        snprintf(values[k], sizeof(values[k]), "%lld", (long long)v);
        params[2 + k] = is_given && v != 0 ? values[k] : NULL;
        given[1 + 2 * k] = is_given ? 't' : 'f';
        given[2 + 2 * k] = k + 1 < QUOTA_KIND_COUNT ? ',' : '}';
    }
    given[1 + 2 * QUOTA_KIND_COUNT] = '\0';
    PGresult *res = db_query(
        db,
        "INSERT INTO project_quotas AS q (project_id, sandboxes, vcpus, memory_mb, checkpoints,"
        "   templates, template_builds, volumes, volume_mb)"
        " SELECT id, $3::bigint, $4::bigint, $5::bigint, $6::bigint, $7::bigint, $8::bigint,"
        "   $9::bigint, $10::bigint"
        " FROM projects WHERE id = $1"
        " ON CONFLICT (project_id) DO UPDATE SET updated_at = now(),"
        "   sandboxes = CASE WHEN ($2::boolean[])[1] THEN $3::bigint ELSE q.sandboxes END,"
        "   vcpus = CASE WHEN ($2::boolean[])[2] THEN $4::bigint ELSE q.vcpus END,"
        "   memory_mb = CASE WHEN ($2::boolean[])[3] THEN $5::bigint ELSE q.memory_mb END,"
        "   checkpoints = CASE WHEN ($2::boolean[])[4] THEN $6::bigint ELSE q.checkpoints END,"
        "   templates = CASE WHEN ($2::boolean[])[5] THEN $7::bigint ELSE q.templates END,"
        "   template_builds = CASE WHEN ($2::boolean[])[6] THEN $8::bigint"
        "     ELSE q.template_builds END,"
        "   volumes = CASE WHEN ($2::boolean[])[7] THEN $9::bigint ELSE q.volumes END,"
        "   volume_mb = CASE WHEN ($2::boolean[])[8] THEN $10::bigint ELSE q.volume_mb END"
        " RETURNING 1",
        2 + QUOTA_KIND_COUNT, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rows = PQntuples(res);
    PQclear(res);
    if (rows != 1)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "project %s not found", project_id);
    return 0;
}
