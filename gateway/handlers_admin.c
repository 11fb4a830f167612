/* /healthz, /metrics, and the admin routes for projects and keys. */
#include <stdlib.h>
#include <string.h>

#include "json_input.h"
#include "metrics_http.h"
#include "reply.h"
#include "route_handlers.h"
#include "routes.h"

enum MHD_Result handle_healthz(struct gw_request *r)
{
    return reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

/* The calling key as the gateway authenticated it: a client (the web
 * console) learns whether it holds the admin key without trying an admin
 * route and logging its 403. */
enum MHD_Result handle_whoami(struct gw_request *r)
{
    return reply_json(r, 200, json_pack("{s:s,s:s?,s:b}", "key_id", r->key_id, "project_id",
                                        r->admin || !r->project_id[0] ? NULL : r->project_id,
                                        "admin", r->admin));
}

enum MHD_Result handle_metrics(struct gw_request *r)
{
    struct MHD_Response *resp = metrics_response(r->gw->metrics.reg);
    if (!resp)
        return reply_error(r, 500, "internal", "out of memory");
    return reply_queue(r, 200, resp);
}

/* Both admin routes take {"name":"…"}: the body, or NULL after a 400. */
static json_t *name_body(struct gw_request *r, enum MHD_Result *rc)
{
    static const struct json_field fields[] = { { "name", JF_STRING } };
    json_t *body;
    struct airlock_error e;
    if (json_input_parse(r->body.data, r->body.len, fields, 1, &body, &e) < 0) {
        *rc = reply_airlock_error(r, &e);
        return NULL;
    }
    return body;
}

/* One admin call on the scheduler; on success to_json builds the body of
 * the `status` answer from the scheduler's (NULL: no body, 204). */
static enum MHD_Result admin_call(struct gw_request *r, const char *method,
                                  const ProtobufCMessage *req,
                                  const ProtobufCMessageDescriptor *resp_desc, unsigned status,
                                  json_t *(*to_json)(const ProtobufCMessage *resp))
{
    ProtobufCMessage *resp = NULL;
    struct airlock_error e;
    int called = gw_unary(r->gw->scheduler, method, req, resp_desc, &resp, GW_SCHEDULER_TIMEOUT_MS, &e);
    enum MHD_Result rc = called < 0 ? reply_airlock_error(r, &e)
                         : to_json           ? reply_json(r, status, to_json(resp))
                                             : reply_empty(r, status);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return rc;
}

static json_t *project_json(const ProtobufCMessage *msg)
{
    const Airlock__Scheduler__V1__Project *p = (const void *)msg;
    char created[40];
    reply_rfc3339(p->created_unix_ms, created, sizeof(created));
    return json_pack("{s:s,s:s,s:s}", "id", p->id, "name", p->name, "created_at", created);
}

static json_t *key_json(const ProtobufCMessage *msg)
{
    const Airlock__Scheduler__V1__ApiKey *k = (const void *)msg;
    char created[40];
    reply_rfc3339(k->created_unix_ms, created, sizeof(created));
    /* The only time the secret is shown. */
    return json_pack("{s:s,s:s,s:s,s:s,s:s}", "id", k->id, "project_id", k->project_id, "name",
                     k->name, "key", k->secret, "created_at", created);
}

enum MHD_Result handle_project_create(struct gw_request *r)
{
    enum MHD_Result rc = MHD_NO;
    json_t *body = name_body(r, &rc);
    if (!body)
        return rc;
    Airlock__Scheduler__V1__CreateProjectRequest req =
        AIRLOCK__SCHEDULER__V1__CREATE_PROJECT_REQUEST__INIT;
    req.request_id = r->id;
    req.name = (char *)json_input_string(body, "name", "");
    rc = admin_call(r, SCHEDULER_METHOD("CreateProject"), &req.base,
                    &airlock__scheduler__v1__project__descriptor, 201, project_json);
    json_decref(body);
    return rc;
}

enum MHD_Result handle_key_create(struct gw_request *r)
{
    enum MHD_Result rc = MHD_NO;
    json_t *body = name_body(r, &rc);
    if (!body)
        return rc;
    Airlock__Scheduler__V1__CreateApiKeyRequest req =
        AIRLOCK__SCHEDULER__V1__CREATE_API_KEY_REQUEST__INIT;
    req.request_id = r->id;
    req.project_id = r->path_id;
    req.name = (char *)json_input_string(body, "name", "");
    rc = admin_call(r, SCHEDULER_METHOD("CreateApiKey"), &req.base,
                    &airlock__scheduler__v1__api_key__descriptor, 201, key_json);
    json_decref(body);
    return rc;
}

static json_t *project_list_json(const ProtobufCMessage *msg)
{
    const Airlock__Scheduler__V1__ListProjectsResponse *l = (const void *)msg;
    json_t *list = json_array();
    for (size_t i = 0; i < l->n_projects; i++)
        json_array_append_new(list, project_json(&l->projects[i]->base));
    return json_pack("{s:o}", "projects", list);
}

/* A key as listings show it: never its secret (only its hash is kept). */
static json_t *listed_key_json(const Airlock__Scheduler__V1__ApiKey *k)
{
    char created[40], revoked[40];
    reply_rfc3339(k->created_unix_ms, created, sizeof(created));
    json_t *j = json_pack("{s:s,s:s,s:b,s:s}", "id", k->id, "name", k->name, "admin", k->admin,
                          "created_at", created);
    if (k->revoked_unix_ms) {
        reply_rfc3339(k->revoked_unix_ms, revoked, sizeof(revoked));
        json_object_set_new(j, "revoked_at", json_string(revoked));
    }
    return j;
}

static json_t *key_list_json(const ProtobufCMessage *msg)
{
    const Airlock__Scheduler__V1__ListApiKeysResponse *l = (const void *)msg;
    json_t *list = json_array();
    for (size_t i = 0; i < l->n_keys; i++)
        json_array_append_new(list, listed_key_json(l->keys[i]));
    return json_pack("{s:o}", "keys", list);
}

enum MHD_Result handle_project_list(struct gw_request *r)
{
    Airlock__Scheduler__V1__ListProjectsRequest req =
        AIRLOCK__SCHEDULER__V1__LIST_PROJECTS_REQUEST__INIT;
    req.request_id = r->id;
    return admin_call(r, SCHEDULER_METHOD("ListProjects"), &req.base,
                      &airlock__scheduler__v1__list_projects_response__descriptor, 200,
                      project_list_json);
}

enum MHD_Result handle_key_list(struct gw_request *r)
{
    Airlock__Scheduler__V1__ProjectRef req = AIRLOCK__SCHEDULER__V1__PROJECT_REF__INIT;
    req.request_id = r->id;
    req.project_id = r->path_id;
    return admin_call(r, SCHEDULER_METHOD("ListApiKeys"), &req.base,
                      &airlock__scheduler__v1__list_api_keys_response__descriptor, 200,
                      key_list_json);
}

enum MHD_Result handle_key_revoke(struct gw_request *r)
{
    Airlock__Scheduler__V1__ApiKeyRef req = AIRLOCK__SCHEDULER__V1__API_KEY_REF__INIT;
    req.request_id = r->id;
    req.project_id = r->path_id;
    req.key_id = r->path_name;
    Airlock__Scheduler__V1__ApiKey *key = NULL;
    struct airlock_error e;
    if (gw_unary(r->gw->scheduler, SCHEDULER_METHOD("RevokeApiKey"), &req.base,
                 &airlock__scheduler__v1__api_key__descriptor, (ProtobufCMessage **)&key,
                 GW_SCHEDULER_TIMEOUT_MS, &e) < 0)
        return reply_airlock_error(r, &e);
    /* Before answering, so that the caller's next request through this
     * gateway is refused; the others drop it on the scheduler's NATS
     * message (key_revocations.h). */
    key_cache_drop_key(&r->gw->keys, key->id);
    protobuf_c_message_free_unpacked(&key->base, NULL);
    return reply_empty(r, 204);
}
