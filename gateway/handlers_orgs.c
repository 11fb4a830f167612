/* Orgs (admin key, docs/api.md): POST /v1/orgs {"org_id"} creates one in
 * vault, PUT
 * /v1/projects/{id}/org puts a project into one. An org's secrets
 * (/v1/orgs/{id}/secrets, handlers_secrets.c) apply to every project of
 * the org, below the project's and sandboxes' own (docs/vault.md). */
#include "reply.h"
#include "route_handlers.h"
#include "vault.pb-c.h"

/* The body's one string field, required; NULL after answering 400. */
static json_t *one_string_body(struct gw_request *r, const char *field, const char **value,
                               enum MHD_Result *rc)
{
    const struct json_field fields[] = { { field, JF_STRING } };
    json_t *body = NULL;
    struct airlock_error e;
    if (json_input_parse(r->body.data, r->body.len, fields, 1, &body, &e) < 0) {
        *rc = reply_airlock_error(r, &e);
        return NULL;
    }
    *value = json_input_string(body, field, NULL);
    if (!*value) {
        *rc = reply_error(r, 400, "invalid_argument",
                          "%s: required, 1 to 128 characters of A-Z a-z 0-9 _ . -", field);
        json_decref(body);
        return NULL;
    }
    return body;
}

static enum MHD_Result org_reply(struct gw_request *r, int status,
                                 const Airlock__Vault__V1__Org *org, const char *project_id)
{
    char created[40];
    reply_rfc3339(org->created_unix_ms, created, sizeof(created));
    json_t *j = json_pack("{s:s,s:s}", "org_id", org->org_id, "created_at", created);
    if (j && project_id)
        json_object_set_new(j, "project_id", json_string(project_id));
    return reply_json(r, status, j);
}

/* A vault call answered with an Org: status and org_reply on OK. */
static enum MHD_Result org_call(struct gw_request *r, const char *method,
                                const ProtobufCMessage *req, int status, const char *project_id)
{
    enum MHD_Result rc = MHD_NO;
    Airlock__Vault__V1__Org *org = NULL;
    if (gw_vault_call(r, method, req, &airlock__vault__v1__org__descriptor,
                      (ProtobufCMessage **)&org, &rc))
        rc = org_reply(r, status, org, project_id);
    if (org)
        protobuf_c_message_free_unpacked(&org->base, NULL);
    return rc;
}

enum MHD_Result handle_org_create(struct gw_request *r)
{
    enum MHD_Result rc = MHD_NO;
    const char *id;
    json_t *body = one_string_body(r, "org_id", &id, &rc);
    if (!body)
        return rc;
    Airlock__Vault__V1__OrgRequest req = AIRLOCK__VAULT__V1__ORG_REQUEST__INIT;
    req.org_id = (char *)id;
    req.actor = r->key_id;
    rc = org_call(r, VAULT_METHOD("CreateOrg"), &req.base, 201, NULL);
    json_decref(body);
    return rc;
}

/* vault keeps the membership; the project id is the path's, checked by
 * vault's id rules (the scheduler has no lookup of a project by id). */
enum MHD_Result handle_project_org_put(struct gw_request *r)
{
    enum MHD_Result rc = MHD_NO;
    const char *org_id;
    json_t *body = one_string_body(r, "org_id", &org_id, &rc);
    if (!body)
        return rc;
    Airlock__Vault__V1__SetProjectOrgRequest req =
        AIRLOCK__VAULT__V1__SET_PROJECT_ORG_REQUEST__INIT;
    req.project_id = r->path_id;
    req.org_id = (char *)org_id;
    req.actor = r->key_id;
    rc = org_call(r, VAULT_METHOD("SetProjectOrg"), &req.base, 200, r->path_id);
    json_decref(body);
    return rc;
}
