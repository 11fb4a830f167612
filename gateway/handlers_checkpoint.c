/* Checkpoints (create, list, delete), restore and fork: control calls on
 * the scheduler, which has the node do them. */
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "route_handlers.h"

/* {"name":…,"kind":"disk|full","created_at":RFC3339,"stored":bool} */
static json_t *checkpoint_json(const Airlock__Scheduler__V1__Checkpoint *c)
{
    char created[40];
    reply_rfc3339(c->created_unix_ms, created, sizeof(created));
    return json_pack("{s:s,s:s,s:s,s:b}", "name", c->name, "kind", c->kind, "created_at", created,
                     "stored", c->stored);
}

enum MHD_Result gw_scheduler_call(struct gw_request *r, const char *method, ProtobufCMessage *req,
                                  const ProtobufCMessageDescriptor *resp_desc, int timeout_ms,
                                  json_t *(*to_json)(const ProtobufCMessage *), unsigned ok_status)
{
    ProtobufCMessage *resp = NULL;
    struct airlock_error e;
    int called = gw_unary(r->gw->scheduler, method, req, resp_desc, &resp, timeout_ms, &e);
    enum MHD_Result rc;
    if (called < 0)
        rc = reply_airlock_error(r, &e);
    else if (ok_status == 204)
        rc = reply_empty(r, 204);
    else
        rc = reply_json(r, ok_status, to_json(resp));
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return rc;
}

static json_t *checkpoint_answer(const ProtobufCMessage *m)
{
    return checkpoint_json((const Airlock__Scheduler__V1__Checkpoint *)m);
}

static json_t *checkpoint_list_answer(const ProtobufCMessage *m)
{
    const Airlock__Scheduler__V1__ListCheckpointsResponse *resp = (const void *)m;
    json_t *list = json_array();
    for (size_t i = 0; i < resp->n_checkpoints; i++)
        json_array_append_new(list, checkpoint_json(resp->checkpoints[i]));
    return json_pack("{s:o}", "checkpoints", list);
}

static json_t *sandbox_answer(const ProtobufCMessage *m)
{
    return gw_sandbox_json((const Airlock__Scheduler__V1__Sandbox *)m);
}

static json_t *forks_answer(const ProtobufCMessage *m)
{
    const Airlock__Scheduler__V1__ForkSandboxResponse *resp = (const void *)m;
    json_t *list = json_array();
    for (size_t i = 0; i < resp->n_sandboxes; i++)
        json_array_append_new(list, gw_sandbox_json(resp->sandboxes[i]));
    return json_pack("{s:o}", "sandboxes", list);
}

/* A CheckpointRequest for sandbox {id} and checkpoint name. */
static Airlock__Scheduler__V1__CheckpointRequest checkpoint_request(struct gw_request *r,
                                                                  const char *name)
{
    struct gw_caller caller = gw_request_caller(r);
    return gw_checkpoint_request(&caller, r->path_id, name);
}

enum MHD_Result handle_checkpoint_create(struct gw_request *r)
{
    static const struct json_field fields[] = { { "name", JF_STRING }, { "kind", JF_STRING } };
    enum MHD_Result rc = MHD_NO;
    json_t *body = gw_json_body(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    Airlock__Scheduler__V1__CheckpointRequest req =
        checkpoint_request(r, json_input_string(body, "name", ""));
    req.kind = (char *)json_input_string(body, "kind", "disk");
    rc = gw_scheduler_call(r, SCHEDULER_METHOD("CreateCheckpoint"), &req.base,
                           &airlock__scheduler__v1__checkpoint__descriptor, GW_CREATE_TIMEOUT_MS,
                           checkpoint_answer, 201);
    json_decref(body);
    return rc;
}

enum MHD_Result handle_checkpoint_list(struct gw_request *r)
{
    Airlock__Scheduler__V1__SandboxRef ref = AIRLOCK__SCHEDULER__V1__SANDBOX_REF__INIT;
    ref.request_id = r->id;
    ref.project_id = r->project_id;
    ref.actor = r->key_id;
    ref.id = r->path_id;
    return gw_scheduler_call(r, SCHEDULER_METHOD("ListCheckpoints"), &ref.base,
                             &airlock__scheduler__v1__list_checkpoints_response__descriptor,
                             GW_SCHEDULER_TIMEOUT_MS, checkpoint_list_answer, 200);
}

enum MHD_Result handle_checkpoint_delete(struct gw_request *r)
{
    Airlock__Scheduler__V1__CheckpointRequest req = checkpoint_request(r, r->path_name);
    return gw_scheduler_call(r, SCHEDULER_METHOD("DeleteCheckpoint"), &req.base,
                             &airlock__scheduler__v1__checkpoint__descriptor, GW_SCHEDULER_TIMEOUT_MS,
                             checkpoint_answer, 204);
}

enum MHD_Result handle_checkpoint_restore(struct gw_request *r)
{
    static const struct json_field fields[] = { { "checkpoint", JF_STRING } };
    enum MHD_Result rc = MHD_NO;
    json_t *body = gw_json_body(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    Airlock__Scheduler__V1__CheckpointRequest req =
        checkpoint_request(r, json_input_string(body, "checkpoint", ""));
    rc = gw_scheduler_call(r, SCHEDULER_METHOD("RestoreCheckpoint"), &req.base,
                           &airlock__scheduler__v1__sandbox__descriptor, GW_CREATE_TIMEOUT_MS,
                           sandbox_answer, 200);
    json_decref(body);
    return rc;
}

enum MHD_Result handle_sandbox_fork(struct gw_request *r)
{
    static const struct json_field fields[] = { { "count", JF_UINT }, { "checkpoint", JF_STRING } };
    enum MHD_Result rc = MHD_NO;
    json_t *body = gw_json_body(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    uint64_t count;
    struct airlock_error e;
    if (json_input_uint(body, "count", 16, 1, &count, &e) < 0) {
        json_decref(body);
        return reply_airlock_error(r, &e);
    }
    Airlock__Scheduler__V1__ForkSandboxRequest req = AIRLOCK__SCHEDULER__V1__FORK_SANDBOX_REQUEST__INIT;
    req.request_id = r->id;
    req.project_id = r->project_id;
    req.actor = r->key_id;
    req.sandbox_id = r->path_id;
    req.count = (uint32_t)count;
    req.checkpoint = (char *)json_input_string(body, "checkpoint", "");
    rc = gw_scheduler_call(r, SCHEDULER_METHOD("ForkSandbox"), &req.base,
                           &airlock__scheduler__v1__fork_sandbox_response__descriptor,
                           GW_CREATE_TIMEOUT_MS, forks_answer, 201);
    json_decref(body);
    return rc;
}
