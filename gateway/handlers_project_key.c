/* POST /v1/secrets/unlock and /v1/secrets/lock (docs/api.md): a BYOK
 * project's customer key goes to vault, which holds the data key it
 * unwraps (not the key) in locked memory for a while so that egress can
 * inject the project's secrets; lock forgets it at once. Always the
 * caller's project. The key is zeroed wherever the gateway had it. */
#include <openssl/crypto.h>
#include <string.h>

#include "reply.h"
#include "route_handlers.h"
#include "vault.pb-c.h"

enum MHD_Result handle_secrets_unlock(struct gw_request *r)
{
    static const struct json_field fields[] = { { "customer_key", JF_STRING },
                                                { "ttl_seconds", JF_UINT } };
    enum MHD_Result rc = MHD_NO;
    uint8_t key[GW_CUSTOMER_KEY_BYTES] = { 0 };
    uint64_t ttl = 0;
    struct airlock_error e;
    json_t *body = NULL;
    Airlock__Vault__V1__UnlockProjectResponse *resp = NULL;
    if (json_input_parse(r->body.data, r->body.len, fields, sizeof(fields) / sizeof(*fields), &body,
                         &e) < 0 ||
        json_input_uint(body, "ttl_seconds", UINT32_MAX, 0, &ttl, &e) < 0) {
        rc = reply_airlock_error(r, &e);
        goto out;
    }
    const char *hex = json_input_string(body, "customer_key", NULL);
    if (!hex) {
        rc = reply_error(r, 400, "invalid_argument",
                         "customer_key: required, the project's 256-bit key as %d hex digits",
                         2 * GW_CUSTOMER_KEY_BYTES);
        goto out;
    }
    if (gw_customer_key_parse(hex, key, &e) < 0) {
        rc = reply_airlock_error(r, &e);
        goto out;
    }
    Airlock__Vault__V1__UnlockProjectRequest req =
        AIRLOCK__VAULT__V1__UNLOCK_PROJECT_REQUEST__INIT;
    req.project_id = r->project_id;
    req.customer_key.data = key;
    req.customer_key.len = sizeof(key);
    req.ttl_s = (uint32_t)ttl;
    req.actor = r->key_id;
    if (gw_vault_call(r, VAULT_METHOD("UnlockProject"), &req.base,
                      &airlock__vault__v1__unlock_project_response__descriptor,
                      (ProtobufCMessage **)&resp, &rc)) {
        char expires[40];
        reply_rfc3339(resp->expires_unix_ms, expires, sizeof(expires));
        rc = reply_json(r, 200, json_pack("{s:s,s:b,s:s}", "project_id", r->project_id,
                                          "unlocked", 1, "expires_at", expires));
    }
out:
    if (body && json_object_get(body, "customer_key"))
        OPENSSL_cleanse((char *)json_string_value(json_object_get(body, "customer_key")),
                        json_string_length(json_object_get(body, "customer_key")));
    OPENSSL_cleanse(r->body.data, r->body.len);
    OPENSSL_cleanse(key, sizeof(key));
    json_decref(body);
    if (resp)
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    return rc;
}

enum MHD_Result handle_secrets_lock(struct gw_request *r)
{
    enum MHD_Result rc = MHD_NO;
    Airlock__Vault__V1__LockProjectRequest req = AIRLOCK__VAULT__V1__LOCK_PROJECT_REQUEST__INIT;
    req.project_id = r->project_id;
    req.actor = r->key_id;
    Airlock__Vault__V1__LockProjectResponse *resp = NULL;
    if (!gw_vault_call(r, VAULT_METHOD("LockProject"), &req.base,
                       &airlock__vault__v1__lock_project_response__descriptor,
                       (ProtobufCMessage **)&resp, &rc))
        return rc;
    rc = reply_json(r, 200, json_pack("{s:s,s:b,s:b}", "project_id", r->project_id, "unlocked",
                                      0, "was_unlocked", (int)resp->was_unlocked));
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return rc;
}
