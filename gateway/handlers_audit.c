/* GET /v1/audit: vault's append-only audit log of the caller's project
 * (every secret change and injection), newest first. vault scopes it by
 * the project of the caller's key, so ?sandbox_id can only narrow it.
 * GET /v1/orgs/{id}/audit (admin): an org's own changes. */
#include <stdlib.h>

#include "reply.h"
#include "route_handlers.h"
#include "vault.pb-c.h"

#define AUDIT_MAX_LIMIT 1000
#define AUDIT_DEFAULT_LIMIT 100

static json_t *audit_json(const Airlock__Vault__V1__AuditEntry *e)
{
    char at[40];
    reply_rfc3339(e->at_unix_ms, at, sizeof(at));
    json_t *j = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "id", (json_int_t)e->id,
                          "at", at, "actor", e->actor, "action", e->action, "sandbox_id",
                          e->sandbox_id, "secret_id", e->secret_id, "host", e->host, "method",
                          e->method, "path", e->path, "status", e->status);
    if (j && *e->org_id)
        json_object_set_new(j, "org_id", json_string(e->org_id));
    return j;
}

/* The caller's project's rows, or with org_id the org's. */
static enum MHD_Result audit_list(struct gw_request *r, const char *org_id)
{
    enum MHD_Result rc = MHD_NO;
    const char *sandbox_id = "";
    uint64_t limit = AUDIT_DEFAULT_LIMIT;
    if ((!org_id && !gw_query_sandbox_id(r, &sandbox_id, &rc)) ||
        !gw_query_uint(r, "limit", 1, AUDIT_MAX_LIMIT, &limit, &rc))
        return rc;
    Airlock__Vault__V1__ListAuditRequest req = AIRLOCK__VAULT__V1__LIST_AUDIT_REQUEST__INIT;
    req.project_id = org_id ? "" : r->project_id;
    req.org_id = (char *)(org_id ? org_id : "");
    req.sandbox_id = (char *)sandbox_id;
    req.limit = (uint32_t)limit;
    Airlock__Vault__V1__ListAuditResponse *resp = NULL;
    if (!gw_vault_call(r, VAULT_METHOD("ListAudit"), &req.base,
                       &airlock__vault__v1__list_audit_response__descriptor,
                       (ProtobufCMessage **)&resp, &rc))
        return rc;
    json_t *list = json_array();
    for (size_t i = 0; i < resp->n_entries; i++)
        json_array_append_new(list, audit_json(resp->entries[i]));
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return reply_json(r, 200, json_pack("{s:o}", "entries", list));
}

enum MHD_Result handle_audit_list(struct gw_request *r)
{
    return audit_list(r, NULL);
}

enum MHD_Result handle_org_audit_list(struct gw_request *r)
{
    return audit_list(r, r->path_id);
}
