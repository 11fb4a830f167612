#include "volume_attach.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler.h"
#include "volume_store.h"

/* Mount i (ref: its parsed name) resolved as a JSON item of the record,
 * its node into node ("" = none yet). */
static int resolve_one(struct scheduler *s, const char *project_id, size_t i,
                       const Airlock__V1__VolumeMount *m, const struct volume_ref *ref,
                       json_t **item, char *node, size_t nodelen, struct airlock_error *e)
{
    PGresult *vol = NULL, *snap = NULL;
    int rc = store_volume_get(&s->db, project_id, ref->volume, s->cfg.node_dead_after_s, &vol, e);
    if (rc == 0 && ref->snapshot[0])
        rc = store_volume_snapshot_get(&s->db, PQgetvalue(vol, 0, 0), ref->volume, ref->snapshot,
                                       &snap, e);
    if (rc < 0) {
        airlock_error_prefix(e, "volumes[%zu].name: ", i);
        goto out;
    }
    struct volume_row r;
    store_volume_row(vol, 0, &r);
    /* A snapshot is on the node it was taken on; one taken before the
     * volume's first use has no image anywhere. */
    snprintf(node, nodelen, "%s", snap ? PQgetvalue(snap, 0, SNAP_NODE) : r.node);
    if (snap && !*node) {
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "volumes[%zu].name: snapshot %s was taken before volume %s was "
                               "first used, so it is empty: attach %s itself, or a snapshot "
                               "taken since",
                               i, m->name, ref->volume, ref->volume);
        goto out;
    }
    *item = json_pack("{s:i,s:s,s:s,s:b,s:s,s:s,s:I}", "slot", (json_int_t)i, "name", m->name,
                      "path", m->path, "read_only", m->read_only, "volume_id", r.id,
                      "snapshot_id", snap ? PQgetvalue(snap, 0, SNAP_ID) : "", "size_mb",
                      (json_int_t)(snap ? strtoull(PQgetvalue(snap, 0, SNAP_SIZE), NULL, 10)
                                        : r.size_mb));
    if (!*item)
        rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
out:
    PQclear(vol);
    PQclear(snap);
    return rc;
}

int volume_attach_resolve(struct scheduler *s,
                          const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                          struct volume_attach *out, struct airlock_error *e)
{
    *out = (struct volume_attach){ 0 };
    struct volume_mount_spec specs[VOLUME_MOUNTS_MAX + 1];
    struct volume_ref refs[VOLUME_MOUNTS_MAX];
    for (size_t i = 0; i < req->n_volumes && i <= VOLUME_MOUNTS_MAX; i++)
        specs[i] = (struct volume_mount_spec){ req->volumes[i]->name, req->volumes[i]->path,
                                               req->volumes[i]->read_only };
    if (volume_mounts_check(specs, req->n_volumes, refs, e) < 0)
        return -1;
    json_t *list = json_array();
    int rc = list ? 0 : airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    for (size_t i = 0; rc == 0 && i < req->n_volumes; i++) {
        json_t *item = NULL;
        char node[sizeof(out->node)];
        rc = resolve_one(s, req->project_id, i, req->volumes[i], &refs[i], &item, node,
                         sizeof(node), e);
        if (rc < 0)
            break;
        json_array_append_new(list, item);
        if (!*node)
            continue;
        if (*out->node && strcmp(out->node, node) != 0) {
            rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                                   "volumes: %s is on node %s and %s on node %s; a sandbox's "
                                   "volumes must be on one node",
                                   out->why_node, out->node, req->volumes[i]->name, node);
            break;
        }
        snprintf(out->node, sizeof(out->node), "%s", node);
        snprintf(out->why_node, sizeof(out->why_node), "%s", req->volumes[i]->name);
    }
    if (rc == 0 && !(out->json = json_dumps(list, JSON_COMPACT)))
        rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    json_decref(list);
    return rc;
}

void volume_attach_free(struct volume_attach *a)
{
    free(a->json);
    a->json = NULL;
}

bool volume_attach_claim_failed(const struct airlock_error *e)
{
    return strstr(e->message, "sandbox_volumes") != NULL;
}

int volume_attach_refused(struct scheduler *s,
                          const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                          struct airlock_error *e)
{
    struct volume_attach now;
    int rc = volume_attach_resolve(s, req, &now, e);
    volume_attach_free(&now);
    if (rc < 0)
        return -1; /* deleted meanwhile, or the like: what resolve says now */
    for (size_t i = 0; i < req->n_volumes; i++) {
        if (req->volumes[i]->read_only && strchr(req->volumes[i]->name, '@'))
            continue; /* a snapshot has no holder */
        PGresult *vol = NULL;
        char holder[72] = "";
        rc = store_volume_get(&s->db, req->project_id, req->volumes[i]->name,
                              s->cfg.node_dead_after_s, &vol, e);
        if (rc == 0)
            rc = store_volume_holder(&s->db, PQgetvalue(vol, 0, 0), holder, sizeof(holder), e);
        PQclear(vol);
        if (rc < 0)
            return -1;
        if (*holder)
            return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                     "volumes[%zu].name: volume %s is attached to sandbox %s (one "
                                     "sandbox at a time; attach a snapshot of it read-only, or "
                                     "delete %s first)",
                                     i, req->volumes[i]->name, holder, holder);
    }
    return airlock_error_set(e, AIRLOCK_ERR_ABORTED,
                             "volumes: a volume changed while the sandbox was created; retry");
}

int volume_node_list(const char *column, struct volume_node_list *out, struct airlock_error *e)
{
    *out = (struct volume_node_list){ 0 };
    out->json = json_loads(column, 0, NULL);
    if (!json_is_array(out->json) || json_array_size(out->json) > VOLUME_MOUNTS_MAX)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "stored volumes are not a list of %d",
                                 VOLUME_MOUNTS_MAX);
    size_t i;
    json_t *v;
    json_array_foreach(out->json, i, v) {
        Airlock__Vmhost__V1__VolumeAttachment *a = &out->items[i];
        airlock__vmhost__v1__volume_attachment__init(a);
        const char *path = json_string_value(json_object_get(v, "path"));
        a->volume_id = (char *)json_string_value(json_object_get(v, "volume_id"));
        a->snapshot_id = (char *)json_string_value(json_object_get(v, "snapshot_id"));
        a->name = (char *)json_string_value(json_object_get(v, "name"));
        if (!path || !a->volume_id || !a->snapshot_id || !a->name)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "stored volume %zu is incomplete",
                                     i);
        a->path.data = (uint8_t *)path;
        a->path.len = strlen(path);
        a->read_only = json_is_true(json_object_get(v, "read_only"));
        a->size_mb = (uint64_t)json_integer_value(json_object_get(v, "size_mb"));
        out->ptrs[i] = a;
        out->n = i + 1;
    }
    return 0;
}

void volume_node_list_free(struct volume_node_list *l)
{
    json_decref(l->json);
    *l = (struct volume_node_list){ 0 };
}
