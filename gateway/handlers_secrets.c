/* Secrets (docs/api.md, docs/vault.md): create, list, delete through
 * airlock-vault's gRPC API. The project is always the one the caller's key
 * belongs to (never taken from the request), and a sandbox scope is checked
 * with the scheduler first, so a key never reaches another project's
 * secrets. Org secrets (/v1/orgs/{id}/secrets) are the admin key's. Values
 * go in once and never come back out. */
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reply.h"
#include "route_handlers.h"
#include "sandbox_id.h"
#include "vault.pb-c.h"

/* Short: a vault that does not answer is a 503, not a hung request. */
#define GW_VAULT_TIMEOUT_MS 10000
#define SECRET_MAX_BINDINGS 32

/* vault's field names → the REST body's, for its INVALID_ARGUMENT messages. */
static const struct {
    const char *vault;
    const char *rest;
} field_names[] = {
    { "host_patterns", "bindings" },
    { "injection_rule", "bindings[0].format" },
    { "rate_limit_per_minute", "rate_limit.per_minute" },
    { "rate_limit_burst", "rate_limit.burst" },
    { "ttl_s", "ttl_seconds" },
};

static enum MHD_Result vault_error(struct gw_request *r, grpc_status_code st, const char *details)
{
    if (st == GRPC_STATUS_UNAVAILABLE || st == GRPC_STATUS_DEADLINE_EXCEEDED)
        return reply_error(r, 503, "unavailable",
                           "the vault (%s) is not answering: secrets and the audit log are "
                           "unavailable until airlock-vault runs again (%s)",
                           r->gw->cfg.vault, details && *details ? details : rpc_status_name(st));
    if (st == GRPC_STATUS_INVALID_ARGUMENT && details &&
        strncmp(details, "host_patterns[", 14) == 0 && strchr(details, ']')) {
        const char *close = strchr(details, ']');
        return reply_error(r, 400, "invalid_argument", "bindings%.*s.host%s",
                           (int)(close + 1 - (details + 13)), details + 13, close + 1);
    }
    if (st == GRPC_STATUS_INVALID_ARGUMENT && details) {
        for (size_t i = 0; i < sizeof(field_names) / sizeof(*field_names); i++) {
            size_t n = strlen(field_names[i].vault);
            if (strncmp(details, field_names[i].vault, n) == 0)
                return reply_error(r, 400, "invalid_argument", "%s%s", field_names[i].rest,
                                   details + n);
        }
    }
    return reply_grpc_error(r, st, details);
}

bool gw_vault_call(struct gw_request *r, const char *method, const ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                   enum MHD_Result *rc)
{
    char *details = NULL;
    grpc_status_code st = rpc_unary(r->gw->vault, method, req, resp_desc, resp, &details,
                                    GW_VAULT_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        *rc = vault_error(r, st, details);
    free(details);
    return st == GRPC_STATUS_OK;
}

/* "Name: format" → {"header":…,"format":…,"plaintext":…}. */
static json_t *binding_json(const char *host, const char *rule, bool plaintext)
{
    size_t name_len = strcspn(rule, ":");
    const char *format = rule + name_len + (rule[name_len] == ':');
    format += strspn(format, " ");
    return json_pack("{s:s,s:s%,s:s,s:b}", "host", host, "header", rule, name_len, "format",
                     format, "plaintext", plaintext);
}

static json_t *secret_json(const Airlock__Vault__V1__SecretMetadata *m)
{
    char created[40];
    reply_rfc3339(m->created_unix_ms, created, sizeof(created));
    json_t *bindings = json_array();
    for (size_t i = 0; i < m->n_host_patterns; i++)
        json_array_append_new(bindings, binding_json(m->host_patterns[i], m->injection_rule,
                                                     m->allow_plaintext));
    json_t *j = json_pack("{s:s,s:s,s:s,s:o,s:s}", "id", m->id, "name", m->name, "scope",
                          *m->org_id       ? "org"
                          : *m->sandbox_id ? "sandbox"
                                           : "project",
                          "bindings", bindings, "created_at", created);
    if (j && *m->sandbox_id)
        json_object_set_new(j, "sandbox_id", json_string(m->sandbox_id));
    if (j && *m->org_id)
        json_object_set_new(j, "org_id", json_string(m->org_id));
    if (j && m->rate_limit_per_minute)
        json_object_set_new(j, "rate_limit",
                            json_pack("{s:I,s:I}", "per_minute",
                                      (json_int_t)m->rate_limit_per_minute, "burst",
                                      (json_int_t)m->rate_limit_burst));
    return j;
}

/* RFC 9110 token: a header name cannot hide a ':' that would move the
 * secret into another header. */
static bool header_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 128)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("!#$%&'*+-.^_`|~", *p)))
            return false;
    return true;
}

/* What POST /v1/secrets turns into CreateSecretRequest fields; the
 * strings point into the request body. */
struct secret_input {
    const char *host_patterns[SECRET_MAX_BINDINGS];
    size_t n_bindings;
    char rule[1200];
    uint64_t per_minute, burst;
    bool plaintext;
    uint8_t customer_key[GW_CUSTOMER_KEY_BYTES];
    bool has_customer_key;
};

/* How a nested object's name joins json_input_check's message: "x: unknown
 * field \"y\"", or "x.y: must be …". */
static const char *field_joint(const struct airlock_error *e)
{
    return strncmp(e->message, "unknown", 7) == 0 ? ": " : ".";
}

/* bindings: [{"host":…,"header":…,"format":…,"plaintext":false}], one
 * header, format and plaintext for all (vault keeps one injection rule per
 * secret). */
static int parse_bindings(json_t *bindings, struct secret_input *in, struct airlock_error *e)
{
    static const struct json_field fields[] = { { "host", JF_STRING },
                                                { "header", JF_STRING },
                                                { "format", JF_STRING },
                                                { "plaintext", JF_BOOL } };
    size_t n = json_array_size(bindings);
    if (!json_is_array(bindings) || n == 0 || n > SECRET_MAX_BINDINGS)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "bindings: required, an array of 1 to %d {\"host\",\"header\","
                                 "\"format\"} objects",
                                 SECRET_MAX_BINDINGS);
    const char *header0 = NULL, *format0 = NULL;
    bool plaintext0 = false;
    for (size_t i = 0; i < n; i++) {
        json_t *b = json_array_get(bindings, i);
        if (!json_is_object(b))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID, "bindings[%zu]: must be an object", i);
        if (json_input_check(b, fields, sizeof(fields) / sizeof(*fields), e) < 0)
            return airlock_error_prefix(e, "bindings[%zu]%s", i, field_joint(e));
        const char *host = json_input_string(b, "host", NULL);
        const char *header = json_input_string(b, "header", NULL);
        const char *format = json_input_string(b, "format", "{secret}");
        bool plaintext = json_is_true(json_object_get(b, "plaintext"));
        if (!host || !*host)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "bindings[%zu].host: required, e.g. \"api.example.com\"", i);
        if (!header || !header_name_valid(header))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "bindings[%zu].header: required, a header name such as "
                                     "\"Authorization\"",
                                     i);
        if (i == 0) {
            header0 = header;
            format0 = format;
            plaintext0 = plaintext;
        } else if (strcasecmp(header, header0) != 0 || strcmp(format, format0) != 0 ||
                   plaintext != plaintext0) {
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "bindings[%zu]: every binding of a secret must use the same "
                                     "header, format and plaintext (one injection rule per secret)",
                                     i);
        }
        in->host_patterns[i] = host;
    }
    in->n_bindings = n;
    in->plaintext = plaintext0;
    if ((size_t)snprintf(in->rule, sizeof(in->rule), "%s: %s", header0, format0) >=
        sizeof(in->rule))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "bindings[0].format: too long");
    return 0;
}

static int parse_rate_limit(json_t *limit, struct secret_input *in, struct airlock_error *e)
{
    static const struct json_field fields[] = { { "per_minute", JF_UINT }, { "burst", JF_UINT } };
    if (!limit)
        return 0;
    if (json_input_check(limit, fields, sizeof(fields) / sizeof(*fields), e) < 0)
        return airlock_error_prefix(e, "rate_limit%s", field_joint(e));
    if (json_input_uint(limit, "per_minute", UINT32_MAX, 0, &in->per_minute, e) < 0 ||
        json_input_uint(limit, "burst", UINT32_MAX, 0, &in->burst, e) < 0)
        return airlock_error_prefix(e, "rate_limit.");
    if (in->per_minute == 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "rate_limit.per_minute: required, at least 1 (leave out "
                                 "\"rate_limit\" for no limit)");
    return 0;
}

int gw_customer_key_parse(const char *hex, uint8_t key[GW_CUSTOMER_KEY_BYTES],
                          struct airlock_error *e)
{
    bool ok = strlen(hex) == 2 * GW_CUSTOMER_KEY_BYTES &&
              strspn(hex, "0123456789abcdefABCDEF") == 2 * GW_CUSTOMER_KEY_BYTES;
    for (size_t i = 0; ok && i < GW_CUSTOMER_KEY_BYTES; i++) {
        unsigned v;
        ok = sscanf(hex + 2 * i, "%2x", &v) == 1;
        key[i] = (uint8_t)v;
    }
    if (ok)
        return 0;
    OPENSSL_cleanse(key, GW_CUSTOMER_KEY_BYTES);
    return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                             "customer_key: must be %d hex digits (a 256-bit key)",
                             2 * GW_CUSTOMER_KEY_BYTES);
}

static int parse_customer_key(const char *hex, struct secret_input *in, struct airlock_error *e)
{
    if (!hex)
        return 0;
    if (gw_customer_key_parse(hex, in->customer_key, e) < 0)
        return -1;
    in->has_customer_key = true;
    return 0;
}

/* The sandbox of a sandbox-scoped secret must be the caller's: 404 like
 * any foreign id. NULL sandbox_id = project scope. */
static int parse_scope(json_t *body, const char **sandbox_id, struct airlock_error *e)
{
    const char *scope = json_input_string(body, "scope", "project");
    const char *id = json_input_string(body, "sandbox_id", NULL);
    *sandbox_id = NULL;
    if (strcmp(scope, "project") == 0) {
        if (id)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "sandbox_id: only with \"scope\": \"sandbox\"");
        return 0;
    }
    if (strcmp(scope, "sandbox") != 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "scope: must be \"project\" or \"sandbox\"");
    if (!id || !sandbox_id_valid(id))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "sandbox_id: required with \"scope\": \"sandbox\", a sandbox id");
    *sandbox_id = id;
    return 0;
}

/* A BYOK project is registered with its key before its first secret; one
 * registered already (either way) is left as it is, and CreateSecret then
 * checks the key. */
static bool register_byok(struct gw_request *r, struct secret_input *in, enum MHD_Result *rc)
{
    Airlock__Vault__V1__RegisterProjectRequest req =
        AIRLOCK__VAULT__V1__REGISTER_PROJECT_REQUEST__INIT;
    req.project_id = r->project_id;
    req.actor = r->key_id;
    req.customer_key.data = in->customer_key;
    req.customer_key.len = sizeof(in->customer_key);
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(r->gw->vault, VAULT_METHOD("RegisterProject"), &req.base,
                                    &airlock__vault__v1__register_project_response__descriptor,
                                    &resp, &details, GW_VAULT_TIMEOUT_MS);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    if (st != GRPC_STATUS_OK && st != GRPC_STATUS_ALREADY_EXISTS)
        *rc = vault_error(r, st, details);
    free(details);
    return st == GRPC_STATUS_OK || st == GRPC_STATUS_ALREADY_EXISTS;
}

/* POST /v1/secrets (org_id NULL: the caller's project, any scope) and
 * POST /v1/orgs/{id}/secrets (org scope: no scope, sandbox_id or
 * customer_key). */
static enum MHD_Result secret_create(struct gw_request *r, const char *org_id)
{
    static const struct json_field fields[] = {
        { "name", JF_STRING },        { "value", JF_STRING },      { "bindings", JF_ARRAY },
        { "rate_limit", JF_OBJECT },  { "scope", JF_STRING },      { "sandbox_id", JF_STRING },
        { "customer_key", JF_STRING },
    };
    /* An org secret takes the first four. */
    size_t n_fields = org_id ? 4 : sizeof(fields) / sizeof(*fields);
    enum MHD_Result rc = MHD_NO;
    struct secret_input in = { 0 };
    struct airlock_error e;
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    Airlock__Vault__V1__SecretMetadata *meta = NULL;
    json_t *body = NULL;
    const char *sandbox_id = NULL;
    if (json_input_parse(r->body.data, r->body.len, fields, n_fields, &body, &e) < 0) {
        rc = reply_airlock_error(r, &e);
        goto out;
    }
    if (!json_input_string(body, "name", NULL) || !json_input_string(body, "value", NULL)) {
        rc = reply_error(r, 400, "invalid_argument", "%s: required",
                         json_input_string(body, "name", NULL) ? "value" : "name");
        goto out;
    }
    if (parse_bindings(json_object_get(body, "bindings"), &in, &e) < 0 ||
        parse_rate_limit(json_object_get(body, "rate_limit"), &in, &e) < 0 ||
        parse_customer_key(json_input_string(body, "customer_key", NULL), &in, &e) < 0 ||
        parse_scope(body, &sandbox_id, &e) < 0) {
        rc = reply_airlock_error(r, &e);
        goto out;
    }
    if (sandbox_id && !(sb = gw_sandbox_lookup_id(r, sandbox_id, &rc)))
        goto out;
    if (in.has_customer_key && !register_byok(r, &in, &rc))
        goto out;
    Airlock__Vault__V1__CreateSecretRequest req = AIRLOCK__VAULT__V1__CREATE_SECRET_REQUEST__INIT;
    req.project_id = org_id ? "" : r->project_id;
    req.org_id = (char *)(org_id ? org_id : "");
    req.sandbox_id = sb ? sb->id : "";
    req.name = (char *)json_input_string(body, "name", "");
    json_t *value = json_object_get(body, "value");
    req.value.data = (uint8_t *)json_string_value(value);
    req.value.len = json_string_length(value);
    req.host_patterns = (char **)in.host_patterns;
    req.n_host_patterns = in.n_bindings;
    req.injection_rule = in.rule;
    req.rate_limit_per_minute = (uint32_t)in.per_minute;
    req.rate_limit_burst = (uint32_t)in.burst;
    req.allow_plaintext = in.plaintext;
    if (in.has_customer_key) {
        req.customer_key.data = in.customer_key;
        req.customer_key.len = sizeof(in.customer_key);
    }
    req.actor = r->key_id;
    if (gw_vault_call(r, VAULT_METHOD("CreateSecret"), &req.base,
                      &airlock__vault__v1__secret_metadata__descriptor, (ProtobufCMessage **)&meta,
                      &rc))
        rc = reply_json(r, 201, secret_json(meta));
out:
    /* The value lives in the request body and its parsed copy. */
    if (body && json_object_get(body, "value"))
        OPENSSL_cleanse((char *)json_string_value(json_object_get(body, "value")),
                        json_string_length(json_object_get(body, "value")));
    OPENSSL_cleanse(r->body.data, r->body.len);
    OPENSSL_cleanse(in.customer_key, sizeof(in.customer_key));
    json_decref(body);
    if (meta)
        protobuf_c_message_free_unpacked(&meta->base, NULL);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

enum MHD_Result handle_secret_create(struct gw_request *r)
{
    return secret_create(r, NULL);
}

enum MHD_Result handle_org_secret_create(struct gw_request *r)
{
    return secret_create(r, r->path_id);
}

/* The project's secrets — those of one sandbox scope when sandbox_id is
 * set, else every scope that applies, its org's included — or with
 * org_id an org's; NULL after answering. */
static Airlock__Vault__V1__ListSecretsResponse *list_secrets(struct gw_request *r,
                                                             const char *org_id,
                                                             const char *sandbox_id,
                                                             enum MHD_Result *rc)
{
    Airlock__Vault__V1__ListSecretsRequest req = AIRLOCK__VAULT__V1__LIST_SECRETS_REQUEST__INIT;
    req.project_id = org_id ? "" : r->project_id;
    req.org_id = (char *)(org_id ? org_id : "");
    req.sandbox_id = (char *)sandbox_id;
    Airlock__Vault__V1__ListSecretsResponse *resp = NULL;
    gw_vault_call(r, VAULT_METHOD("ListSecrets"), &req.base,
                  &airlock__vault__v1__list_secrets_response__descriptor,
                  (ProtobufCMessage **)&resp, rc);
    return resp;
}

static enum MHD_Result secret_list(struct gw_request *r, const char *org_id,
                                   const char *sandbox_id)
{
    enum MHD_Result rc = MHD_NO;
    Airlock__Vault__V1__ListSecretsResponse *resp = list_secrets(r, org_id, sandbox_id, &rc);
    if (!resp)
        return rc;
    json_t *list = json_array();
    for (size_t i = 0; i < resp->n_secrets; i++)
        json_array_append_new(list, secret_json(resp->secrets[i]));
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return reply_json(r, 200, json_pack("{s:o}", "secrets", list));
}

/* A project key's secrets are the project's, or ?sandbox_id's: op in
 * that scope (org_id NULL), or the answer to a bad sandbox_id. */
static enum MHD_Result in_key_scope(struct gw_request *r,
                                    enum MHD_Result (*op)(struct gw_request *r, const char *org_id,
                                                          const char *sandbox_id))
{
    enum MHD_Result rc = MHD_NO;
    const char *sandbox_id;
    return gw_query_sandbox_id(r, &sandbox_id, &rc) ? op(r, NULL, sandbox_id) : rc;
}

enum MHD_Result handle_secret_list(struct gw_request *r)
{
    return in_key_scope(r, secret_list);
}

enum MHD_Result handle_org_secret_list(struct gw_request *r)
{
    return secret_list(r, r->path_id, "");
}

/* By name within one scope: the project's or ?sandbox_id's (never the
 * org's, which only the admin key deletes), or the org's. */
static enum MHD_Result secret_delete(struct gw_request *r, const char *org_id,
                                     const char *sandbox_id)
{
    enum MHD_Result rc = MHD_NO;
    Airlock__Vault__V1__ListSecretsResponse *resp = list_secrets(r, org_id, sandbox_id, &rc);
    if (!resp)
        return rc;
    const char *id = NULL;
    for (size_t i = 0; i < resp->n_secrets && !id; i++)
        if (strcmp(resp->secrets[i]->name, r->path_name) == 0 &&
            strcmp(resp->secrets[i]->sandbox_id, sandbox_id) == 0 &&
            (org_id != NULL) == (resp->secrets[i]->org_id[0] != '\0'))
            id = resp->secrets[i]->id;
    if (!id) {
        rc = reply_error(r, 404, "not_found", "secret \"%s\" not found in %s%s", r->path_name,
                         org_id        ? "the org "
                         : *sandbox_id ? "the scope of sandbox "
                                       : "the project scope",
                         org_id ? org_id : sandbox_id);
    } else {
        Airlock__Vault__V1__DeleteSecretRequest req =
            AIRLOCK__VAULT__V1__DELETE_SECRET_REQUEST__INIT;
        req.project_id = org_id ? "" : r->project_id;
        req.org_id = (char *)(org_id ? org_id : "");
        req.id = (char *)id;
        req.actor = r->key_id;
        ProtobufCMessage *done = NULL;
        if (gw_vault_call(r, VAULT_METHOD("DeleteSecret"), &req.base,
                          &airlock__vault__v1__delete_secret_response__descriptor, &done, &rc))
            rc = reply_empty(r, 204);
        if (done)
            protobuf_c_message_free_unpacked(done, NULL);
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return rc;
}

enum MHD_Result handle_secret_delete(struct gw_request *r)
{
    return in_key_scope(r, secret_delete);
}

enum MHD_Result handle_org_secret_delete(struct gw_request *r)
{
    return secret_delete(r, r->path_id, "");
}
