#include "fork_volumes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random_id.h"
#include "volume_spec.h"

/* A read-write attachment: its volume itself, not a snapshot. */
static bool read_write(json_t *item)
{
    const char *snap = json_string_value(json_object_get(item, "snapshot_id"));
    return !json_is_true(json_object_get(item, "read_only")) && (!snap || !*snap);
}

/* A random (version 4) UUID's text into out (37 bytes). */
static int uuid4(char *out, size_t len)
{
    char hex[33];
    if (len < 37 || random_id("", 16, hex, sizeof(hex)) < 0)
        return -1;
    hex[12] = '4';
    hex[16] = "89ab"[hex[16] % 4];
    snprintf(out, len, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
    return 0;
}

int fork_volumes_plan(struct db *db, const char *column, unsigned count,
                      struct fork_volumes *out, struct airlock_error *e)
{
    *out = (struct fork_volumes){ 0 };
    out->parent = json_loads(column, 0, NULL);
    if (!json_is_array(out->parent))
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "stored volumes are not a list");
    json_t *srcs = json_array(), *item;
    size_t i;
    json_array_foreach(out->parent, i, item) {
        if (read_write(item))
            json_array_append(srcs, json_object_get(item, "volume_id"));
    }
    out->rw = json_array_size(srcs);
    int rc = 0;
    if (out->rw > 0) {
        /* Their sizes now (a grow since the create counts). */
        char *ids = json_dumps(srcs, JSON_COMPACT);
        const char *params[] = { ids };
        PGresult *res = ids ? db_query(db,
                                       "SELECT coalesce(sum(size_mb), 0) FROM volumes"
                                       " WHERE id::text IN (SELECT jsonb_array_elements_text($1::jsonb))",
                                       1, params, AIRLOCK_ERROR_MSG(e))
                            : NULL;
        free(ids);
        if (!res)
            rc = airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
        else
            out->rw_mb = atoll(PQgetvalue(res, 0, 0));
        PQclear(res);
    }
    json_decref(srcs);
    out->n_ids = out->rw * count;
    out->ids = calloc(out->n_ids + 1, sizeof(*out->ids));
    if (rc == 0 && !out->ids)
        rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    for (size_t k = 0; rc == 0 && k < out->n_ids; k++) {
        out->ids[k] = malloc(37);
        if (!out->ids[k] || uuid4(out->ids[k], 37) < 0)
            rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot draw a volume id");
    }
    return rc;
}

void fork_volumes_free(struct fork_volumes *f)
{
    for (size_t k = 0; f->ids && k < f->n_ids; k++)
        free(f->ids[k]);
    free(f->ids);
    json_decref(f->parent);
    *f = (struct fork_volumes){ 0 };
}

void fork_volumes_ask(const struct fork_volumes *f, unsigned count, struct quota_values *request)
{
    request->v[QUOTA_VOLUMES] += (int64_t)(f->rw * count);
    request->v[QUOTA_VOLUME_MB] += f->rw_mb * (int64_t)count;
}

int fork_volumes_records(const struct fork_volumes *f, const char *const *fork_ids, size_t n,
                         char **columns, char **volumes, struct airlock_error *e)
{
    json_t *all = json_array(), *rows = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *mine = json_deep_copy(f->parent), *item;
        size_t slot, k = 0;
        json_array_foreach(mine, slot, item) {
            if (!read_write(item) || i * f->rw + k >= f->n_ids)
                continue;
            char name[VOLUME_NAME_MAX + 1];
            volume_fork_name(json_string_value(json_object_get(item, "name")), fork_ids[i], name,
                             sizeof(name));
            const char *id = f->ids[i * f->rw + k++];
            json_array_append_new(rows, json_pack("{s:s,s:s,s:O}", "id", id, "name", name, "src",
                                                  json_object_get(item, "volume_id")));
            json_object_set_new(item, "name", json_string(name));
            json_object_set_new(item, "volume_id", json_string(id));
        }
        json_array_append_new(all, mine);
    }
    *columns = json_dumps(all, JSON_COMPACT);
    *volumes = json_dumps(rows, JSON_COMPACT);
    json_decref(all);
    json_decref(rows);
    if (*columns && *volumes)
        return 0;
    free(*columns);
    free(*volumes);
    *columns = *volumes = NULL;
    return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
}
