#include "volume_json.h"

#include <stdio.h>
#include <stdlib.h>

#include "json_input.h"

json_t *gw_volume_snapshot_json(const Airlock__V1__VolumeSnapshot *s)
{
    return json_pack("{s:s,s:s}", "name", s->name, "created_at", s->created_at);
}

json_t *gw_volume_json(const Airlock__V1__Volume *v)
{
    json_t *snaps = json_array(), *readers = json_array();
    for (size_t i = 0; i < v->n_snapshots; i++)
        json_array_append_new(snaps, gw_volume_snapshot_json(v->snapshots[i]));
    for (size_t i = 0; i < v->n_attached_read_only; i++)
        json_array_append_new(readers, json_string(v->attached_read_only[i]));
    json_t *j = json_pack("{s:s,s:s,s:I,s:s,s:o,s:o,s:o,s:s,s:s}", "name", v->name, "id", v->id,
                          "size_mb", (json_int_t)v->size_mb, "node", v->node, "attached_sandbox",
                          *v->attached_sandbox ? json_string(v->attached_sandbox) : json_null(),
                          "attached_read_only", readers, "snapshots", snaps, "created_at",
                          v->created_at, "from_snapshot", v->from_snapshot);
    if (j && v->has_usage)
        json_object_set_new(j, "used_bytes", json_integer((json_int_t)v->used_bytes));
    return j;
}

json_t *gw_volume_mounts_json(Airlock__V1__VolumeMount *const *mounts, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_pack("{s:s,s:s,s:b,s:i}", "name", mounts[i]->name,
                                              "path", mounts[i]->path, "read_only",
                                              mounts[i]->read_only, "slot",
                                              (json_int_t)mounts[i]->slot));
    return list;
}

int gw_volume_mounts_from_json(json_t *list, const char *field, Airlock__V1__VolumeMount ***out,
                               size_t *n, struct airlock_error *e)
{
    static const struct json_field fields[] = {
        { "name", JF_STRING }, { "path", JF_STRING }, { "read_only", JF_BOOL } };
    *out = NULL;
    *n = 0;
    if (!list)
        return 0;
    size_t count = json_array_size(list);
    /* One block: the pointers, then the messages they point to. */
    Airlock__V1__VolumeMount **ptrs = calloc(1, (count + 1) * (sizeof(*ptrs) + sizeof(**ptrs)));
    if (!ptrs)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    Airlock__V1__VolumeMount *mounts = (void *)(ptrs + count + 1);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        if (!json_is_object(v) ||
            json_input_check(v, fields, sizeof(fields) / sizeof(*fields), e) < 0) {
            if (!json_is_object(v))
                airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                  "must be an object {\"name\",\"path\",\"read_only\"}");
            free(ptrs);
            return airlock_error_prefix(e, "%s[%zu]: ", field, i);
        }
        airlock__v1__volume_mount__init(&mounts[i]);
        mounts[i].name = (char *)json_input_string(v, "name", "");
        mounts[i].path = (char *)json_input_string(v, "path", "");
        mounts[i].read_only = json_is_true(json_object_get(v, "read_only"));
        ptrs[i] = &mounts[i];
    }
    *out = ptrs;
    *n = count;
    return 0;
}

void gw_volume_mounts_free(Airlock__V1__VolumeMount **mounts)
{
    free(mounts);
}
