/* Volumes (docs/api.md "Volumes", docs/volumes.md): a project's
 * persistent disks and their snapshots. POST/GET /v1/volumes, GET/DELETE
 * /v1/volumes/{id} (id: the volume's name), POST …/grow, POST/GET
 * …/snapshots, DELETE …/snapshots/{name}. Each is one scheduler call
 * (VolumeCall), which checks every value and scopes it to the key's
 * project. */
#include "reply.h"
#include "route_handlers.h"
#include "volume_json.h"

typedef Airlock__Scheduler__V1__VolumeCall VolumeCall;

static json_t *volume_answer(const ProtobufCMessage *m)
{
    return gw_volume_json((const Airlock__V1__Volume *)m);
}

static json_t *volume_list_answer(const ProtobufCMessage *m)
{
    const Airlock__V1__ListVolumesResponse *resp = (const void *)m;
    json_t *list = json_array();
    for (size_t i = 0; i < resp->n_volumes; i++)
        json_array_append_new(list, gw_volume_json(resp->volumes[i]));
    return json_pack("{s:o}", "volumes", list);
}

static json_t *snapshot_answer(const ProtobufCMessage *m)
{
    return gw_volume_snapshot_json((const Airlock__V1__VolumeSnapshot *)m);
}

static json_t *snapshot_list_answer(const ProtobufCMessage *m)
{
    const Airlock__V1__ListVolumeSnapshotsResponse *resp = (const void *)m;
    json_t *list = json_array();
    for (size_t i = 0; i < resp->n_snapshots; i++)
        json_array_append_new(list, gw_volume_snapshot_json(resp->snapshots[i]));
    return json_pack("{s:o}", "snapshots", list);
}

/* The call of the route: the caller, and the volume named by {id}. */
static VolumeCall volume_call(struct gw_request *r)
{
    VolumeCall c = AIRLOCK__SCHEDULER__V1__VOLUME_CALL__INIT;
    c.request_id = r->id;
    c.project_id = r->project_id;
    c.actor = r->key_id;
    c.name = r->path_id;
    return c;
}

/* The body's fields (each listed, of its kind) into c; the body stays
 * in *body for the strings c points to. */
static int body_fields(struct gw_request *r, const struct json_field *fields, size_t n,
                       json_t **body, VolumeCall *c, struct airlock_error *e)
{
    if (json_input_parse(r->body.data, r->body.len, fields, n, body, e) < 0)
        return -1;
    uint64_t size;
    if (json_input_uint(*body, "size_mb", UINT64_MAX, 0, &size, e) < 0)
        return -1;
    c->size_mb = size;
    c->from_snapshot = (char *)json_input_string(*body, "from_snapshot", "");
    return 0;
}

enum MHD_Result handle_volume_create(struct gw_request *r)
{
    static const struct json_field fields[] = {
        { "name", JF_STRING }, { "size_mb", JF_UINT }, { "from_snapshot", JF_STRING } };
    VolumeCall c = volume_call(r);
    json_t *body = NULL;
    struct airlock_error e;
    enum MHD_Result rc;
    if (body_fields(r, fields, sizeof(fields) / sizeof(*fields), &body, &c, &e) < 0) {
        rc = reply_airlock_error(r, &e);
    } else {
        c.name = (char *)json_input_string(body, "name", "");
        rc = gw_scheduler_call(r, SCHEDULER_METHOD("CreateVolume"), &c.base,
                               &airlock__v1__volume__descriptor, GW_SCHEDULER_TIMEOUT_MS,
                               volume_answer, 201);
    }
    json_decref(body);
    return rc;
}

enum MHD_Result handle_volume_list(struct gw_request *r)
{
    VolumeCall c = volume_call(r);
    return gw_scheduler_call(r, SCHEDULER_METHOD("ListVolumes"), &c.base,
                             &airlock__v1__list_volumes_response__descriptor,
                             GW_SCHEDULER_TIMEOUT_MS, volume_list_answer, 200);
}

enum MHD_Result handle_volume_get(struct gw_request *r)
{
    VolumeCall c = volume_call(r);
    return gw_scheduler_call(r, SCHEDULER_METHOD("GetVolume"), &c.base,
                             &airlock__v1__volume__descriptor, GW_SCHEDULER_TIMEOUT_MS,
                             volume_answer, 200);
}

enum MHD_Result handle_volume_delete(struct gw_request *r)
{
    VolumeCall c = volume_call(r);
    return gw_scheduler_call(r, SCHEDULER_METHOD("DeleteVolume"), &c.base,
                             &airlock__v1__volume__descriptor, GW_SCHEDULER_TIMEOUT_MS,
                             volume_answer, 204);
}

enum MHD_Result handle_volume_grow(struct gw_request *r)
{
    static const struct json_field fields[] = { { "size_mb", JF_UINT } };
    VolumeCall c = volume_call(r);
    json_t *body = NULL;
    struct airlock_error e;
    enum MHD_Result rc =
        body_fields(r, fields, 1, &body, &c, &e) < 0
            ? reply_airlock_error(r, &e)
            : gw_scheduler_call(r, SCHEDULER_METHOD("GrowVolume"), &c.base,
                                &airlock__v1__volume__descriptor, GW_SCHEDULER_TIMEOUT_MS,
                                volume_answer, 200);
    json_decref(body);
    return rc;
}

enum MHD_Result handle_volume_snapshot_create(struct gw_request *r)
{
    static const struct json_field fields[] = { { "name", JF_STRING } };
    VolumeCall c = volume_call(r);
    json_t *body = NULL;
    struct airlock_error e;
    enum MHD_Result rc;
    if (body_fields(r, fields, 1, &body, &c, &e) < 0) {
        rc = reply_airlock_error(r, &e);
    } else {
        c.snapshot = (char *)json_input_string(body, "name", "");
        rc = gw_scheduler_call(r, SCHEDULER_METHOD("CreateVolumeSnapshot"), &c.base,
                               &airlock__v1__volume_snapshot__descriptor,
                               GW_SCHEDULER_TIMEOUT_MS, snapshot_answer, 201);
    }
    json_decref(body);
    return rc;
}

enum MHD_Result handle_volume_snapshot_list(struct gw_request *r)
{
    VolumeCall c = volume_call(r);
    return gw_scheduler_call(r, SCHEDULER_METHOD("ListVolumeSnapshots"), &c.base,
                             &airlock__v1__list_volume_snapshots_response__descriptor,
                             GW_SCHEDULER_TIMEOUT_MS, snapshot_list_answer, 200);
}

enum MHD_Result handle_volume_snapshot_delete(struct gw_request *r)
{
    VolumeCall c = volume_call(r);
    c.snapshot = r->path_name;
    return gw_scheduler_call(r, SCHEDULER_METHOD("DeleteVolumeSnapshot"), &c.base,
                             &airlock__v1__volume_snapshot__descriptor, GW_SCHEDULER_TIMEOUT_MS,
                             snapshot_answer, 204);
}
