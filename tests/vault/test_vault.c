/* vault end to end: a real airlock-vault on a real PostgreSQL, over gRPC.
 * Every test uses its own project id, so they share one fixture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vault.pb-c.h"
#include "vault_fixture.h"

#define M(name) "/airlock.vault.v1.Vault/" name

static struct vault_fixture fx;
static const unsigned char customer_key[32] = "0123456789abcdef0123456789abcdef";

struct secret_spec {
    const char *project, *sandbox, *name, *value, *pattern, *rule;
    uint32_t rate;
    const unsigned char *ck; /* 32 bytes or NULL */
    const char *org;         /* org scope: project and sandbox NULL */
};

/* Status of CreateSecret with a rate-limit burst (0: the rate) and, with
 * plaintext, plain HTTP allowed; id (64 bytes) and
 * details (512) when not NULL. */
static grpc_status_code create_secret_with(const struct secret_spec *s, uint32_t burst,
                                           bool plaintext, char *id, char *details)
{
    Airlock__Vault__V1__CreateSecretRequest req = AIRLOCK__VAULT__V1__CREATE_SECRET_REQUEST__INIT;
    char *patterns[] = { (char *)s->pattern };
    req.project_id = (char *)(s->project ? s->project : "");
    req.sandbox_id = (char *)(s->sandbox ? s->sandbox : "");
    req.org_id = (char *)(s->org ? s->org : "");
    req.name = (char *)s->name;
    req.value.data = (uint8_t *)s->value;
    req.value.len = strlen(s->value);
    req.n_host_patterns = 1;
    req.host_patterns = patterns;
    req.injection_rule = (char *)(s->rule ? s->rule : "Authorization: Bearer {secret}");
    req.rate_limit_per_minute = s->rate;
    req.rate_limit_burst = burst;
    req.allow_plaintext = plaintext;
    req.actor = "test";
    if (s->ck) {
        req.customer_key.data = (uint8_t *)s->ck;
        req.customer_key.len = 32;
    }
    ProtobufCMessage *resp = NULL;
    char *why = NULL;
    grpc_status_code st = rpc_unary(fx.ch, M("CreateSecret"), &req.base,
                                    &airlock__vault__v1__secret_metadata__descriptor, &resp, &why,
                                    10000);
    Airlock__Vault__V1__SecretMetadata *m = (void *)resp;
    /* The answer says what was stored. */
    if (m)
        assert_int_equal(m->allow_plaintext, plaintext);
    if (id)
        snprintf(id, 64, "%s", m ? m->id : "");
    if (details)
        snprintf(details, 512, "%s", why ? why : "");
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    free(why);
    return st;
}

static grpc_status_code create_secret(const struct secret_spec *s, char *id, char *details)
{
    return create_secret_with(s, 0, false, id, details);
}

/* Status of ResolveInjection (plaintext: as for a plain HTTP request);
 * the header value (512 bytes) or details. */
static grpc_status_code resolve_for(const char *project, const char *sandbox, const char *host,
                                    const unsigned char *ck, bool plaintext, char *out)
{
    return vault_fixture_resolve(&fx, project, sandbox, host, ck, plaintext, out);
}

static grpc_status_code resolve(const char *project, const char *sandbox, const char *host,
                                const unsigned char *ck, char *out)
{
    return resolve_for(project, sandbox, host, ck, false, out);
}

static void test_value_never_listed_and_injected(void **state)
{
    (void)state;
    struct secret_spec s = { "p-basic", NULL, "openai", "sk-live-abc123", "api.openai.com", NULL,
                             0, NULL, NULL };
    char id[64], out[512];
    assert_int_equal(create_secret(&s, id, NULL), GRPC_STATUS_OK);
    assert_int_equal(create_secret(&s, NULL, out), GRPC_STATUS_ALREADY_EXISTS);

    Airlock__Vault__V1__ListSecretsRequest req = AIRLOCK__VAULT__V1__LIST_SECRETS_REQUEST__INIT;
    req.project_id = "p-basic";
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(fx.ch, M("ListSecrets"), &req.base,
                               &airlock__vault__v1__list_secrets_response__descriptor, &resp, NULL,
                               10000),
                     GRPC_STATUS_OK);
    Airlock__Vault__V1__ListSecretsResponse *list = (void *)resp;
    assert_int_equal(list->n_secrets, 1);
    assert_string_equal(list->secrets[0]->id, id);
    assert_string_equal(list->secrets[0]->host_patterns[0], "api.openai.com");
    /* What an agent may be given instead of the value (egress swaps it). */
    char placeholder[160];
    snprintf(placeholder, sizeof(placeholder), "airlock-secret-%s", id);
    assert_string_equal(list->secrets[0]->placeholder, placeholder);
    /* Not in any field: look at the bytes on the wire. */
    uint8_t wire[4096];
    size_t n = protobuf_c_message_pack(resp, wire);
    assert_null(memmem(wire, n, s.value, strlen(s.value)));
    protobuf_c_message_free_unpacked(resp, NULL);

    assert_int_equal(resolve("p-basic", "sb-1", "API.openai.com", NULL, out), GRPC_STATUS_OK);
    assert_string_equal(out, "Authorization: Bearer sk-live-abc123");
}

static void test_ciphertext_holds_no_plaintext(void **state)
{
    (void)state;
    struct secret_spec s = { "p-cipher", NULL, "tok", "plaintext-marker-42", "example.com", NULL,
                             0, NULL, NULL };
    assert_int_equal(create_secret(&s, NULL, NULL), GRPC_STATUS_OK);
    char err[512];
    const char *params[] = { s.value };
    PGresult *res = db_query(&fx.db,
                             "SELECT (SELECT count(*) FROM vault_secrets),"
                             " (SELECT count(*) FROM vault_secrets t WHERE"
                             "  position(convert_to($1, 'UTF8') IN ciphertext) > 0"
                             "  OR t::text LIKE '%' || $1 || '%'),"
                             " (SELECT count(*) FROM vault_audit a WHERE a::text LIKE '%' || $1 || '%'),"
                             " (SELECT count(*) FROM vault_bindings b WHERE b::text LIKE '%' || $1 || '%')",
                             1, params, err, sizeof(err));
    assert_non_null(res);
    assert_true(atoi(PQgetvalue(res, 0, 0)) > 0);
    assert_string_equal(PQgetvalue(res, 0, 1), "0");
    assert_string_equal(PQgetvalue(res, 0, 2), "0");
    assert_string_equal(PQgetvalue(res, 0, 3), "0");
    PQclear(res);
}

static void test_narrowest_scope_wins(void **state)
{
    (void)state;
    struct secret_spec wide = { "p-scope", NULL, "wild", "project-wild", "*.example.org", NULL, 0,
                                NULL, NULL };
    struct secret_spec project = { "p-scope", NULL, "proj", "project-exact", "api.example.org",
                                   NULL, 0, NULL, NULL };
    struct secret_spec sandbox = { "p-scope", "sb-a", "sand", "sandbox-a", "*.example.org",
                                   "X-Api-Key: {secret}", 0, NULL, NULL };
    assert_int_equal(create_secret(&wide, NULL, NULL), GRPC_STATUS_OK);
    assert_int_equal(create_secret(&project, NULL, NULL), GRPC_STATUS_OK);
    assert_int_equal(create_secret(&sandbox, NULL, NULL), GRPC_STATUS_OK);
    char out[512];
    assert_int_equal(resolve("p-scope", "sb-a", "api.example.org", NULL, out), GRPC_STATUS_OK);
    assert_string_equal(out, "X-Api-Key: sandbox-a");
    assert_int_equal(resolve("p-scope", "sb-b", "api.example.org", NULL, out), GRPC_STATUS_OK);
    assert_string_equal(out, "Authorization: Bearer project-exact");
    assert_int_equal(resolve("p-scope", "sb-b", "www.example.org", NULL, out), GRPC_STATUS_OK);
    assert_string_equal(out, "Authorization: Bearer project-wild");
    /* The wildcard does not match the bare domain; other projects see nothing. */
    assert_int_equal(resolve("p-scope", "sb-a", "example.org", NULL, out), GRPC_STATUS_NOT_FOUND);
    assert_int_equal(resolve("p-other", "sb-a", "api.example.org", NULL, out),
                     GRPC_STATUS_NOT_FOUND);
}

static void test_rate_limit(void **state)
{
    (void)state;
    struct secret_spec s = { "p-rate", NULL, "limited", "rate-secret", "rate.example.com", NULL,
                             3, NULL, NULL };
    assert_int_equal(create_secret(&s, NULL, NULL), GRPC_STATUS_OK);
    char out[512];
    for (int i = 0; i < 3; i++)
        assert_int_equal(resolve("p-rate", "sb", "rate.example.com", NULL, out), GRPC_STATUS_OK);
    assert_int_equal(resolve("p-rate", "sb", "rate.example.com", NULL, out),
                     GRPC_STATUS_RESOURCE_EXHAUSTED);
    assert_non_null(strstr(out, "rate limit"));
}

/* A bucket of 2 refilled at 6 per minute: a burst of 2, then nothing for
 * 10 s (the default bucket would have held 6). */
static void test_rate_limit_burst(void **state)
{
    (void)state;
    struct secret_spec s = { "p-burst", NULL, "bursty", "burst-secret", "burst.example.com", NULL,
                             6, NULL, NULL };
    assert_int_equal(create_secret_with(&s, 2, false, NULL, NULL), GRPC_STATUS_OK);
    char out[512];
    for (int i = 0; i < 2; i++)
        assert_int_equal(resolve("p-burst", "sb", "burst.example.com", NULL, out), GRPC_STATUS_OK);
    assert_int_equal(resolve("p-burst", "sb", "burst.example.com", NULL, out),
                     GRPC_STATUS_RESOURCE_EXHAUSTED);
    struct secret_spec bad = { "p-burst", NULL, "b2", "v", "b2.example.com", NULL, 0, NULL, NULL };
    char details[512];
    assert_int_equal(create_secret_with(&bad, 5, false, NULL, details), GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(details, "rate_limit_burst"));
}

static void test_byok(void **state)
{
    (void)state;
    Airlock__Vault__V1__RegisterProjectRequest reg =
        AIRLOCK__VAULT__V1__REGISTER_PROJECT_REQUEST__INIT;
    reg.project_id = "p-byok";
    reg.customer_key.data = (uint8_t *)customer_key;
    reg.customer_key.len = 32;
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(fx.ch, M("RegisterProject"), &reg.base,
                               &airlock__vault__v1__register_project_response__descriptor, &resp,
                               NULL, 10000),
                     GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(resp, NULL);

    unsigned char wrong[32];
    memcpy(wrong, customer_key, 32);
    wrong[0] ^= 1;
    char out[512];
    struct secret_spec s = { "p-byok", NULL, "own", "byok-secret", "byok.example.com", NULL, 0,
                             NULL, NULL };
    assert_int_equal(create_secret(&s, NULL, out), GRPC_STATUS_FAILED_PRECONDITION);
    s.ck = wrong;
    assert_int_equal(create_secret(&s, NULL, out), GRPC_STATUS_FAILED_PRECONDITION);
    s.ck = customer_key;
    assert_int_equal(create_secret(&s, NULL, out), GRPC_STATUS_OK);

    assert_int_equal(resolve("p-byok", "sb", "byok.example.com", NULL, out),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(out, "customer_key"));
    assert_non_null(strstr(out, "locked"));
    assert_int_equal(resolve("p-byok", "sb", "byok.example.com", wrong, out),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(out, "wrong"));
    assert_int_equal(resolve("p-byok", "sb", "byok.example.com", customer_key, out),
                     GRPC_STATUS_OK);
    assert_string_equal(out, "Authorization: Bearer byok-secret");
}

/* "action/status" of each audit row of project, oldest first, joined by
 * spaces. */
static void audit_summary_of(const char *project, const char *org, char *out, size_t len)
{
    assert_int_equal(vault_fixture_audit_summary(&fx, project, org, out, len), 0);
}

static void audit_summary(const char *project, char *out, size_t len)
{
    audit_summary_of(project, "", out, len);
}

static void test_audit_log(void **state)
{
    (void)state;
    struct secret_spec s = { "p-audit", NULL, "aud", "audit-secret", "audit.example.com", NULL, 1,
                             NULL, NULL };
    char id[64], out[512], summary[2048];
    assert_int_equal(create_secret(&s, id, NULL), GRPC_STATUS_OK);
    assert_int_equal(resolve("p-audit", "sb", "audit.example.com", NULL, out), GRPC_STATUS_OK);
    assert_int_equal(resolve("p-audit", "sb", "audit.example.com", NULL, out),
                     GRPC_STATUS_RESOURCE_EXHAUSTED);
    Airlock__Vault__V1__DeleteSecretRequest del = AIRLOCK__VAULT__V1__DELETE_SECRET_REQUEST__INIT;
    del.project_id = "p-audit";
    del.id = id;
    del.actor = "test";
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(fx.ch, M("DeleteSecret"), &del.base,
                               &airlock__vault__v1__delete_secret_response__descriptor, &resp,
                               NULL, 10000),
                     GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(resp, NULL);
    assert_int_equal(resolve("p-audit", "sb", "audit.example.com", NULL, out),
                     GRPC_STATUS_NOT_FOUND);
    audit_summary("p-audit", summary, sizeof(summary));
    assert_string_equal(summary, "register_project/OK create_secret/OK"
                                 " inject/OK@audit.example.com"
                                 " inject/RESOURCE_EXHAUSTED@audit.example.com delete_secret/OK");

    /* Append-only, even for the owner vault connects as. */
    char err[512];
    PGresult *res = db_query(&fx.db, "UPDATE vault_audit SET status = 'OK'", 0, NULL, err,
                             sizeof(err));
    assert_null(res);
    assert_non_null(strstr(err, "append-only"));
    res = db_query(&fx.db, "DELETE FROM vault_audit", 0, NULL, err, sizeof(err));
    assert_null(res);
    assert_non_null(strstr(err, "append-only"));
    res = db_query(&fx.db, "TRUNCATE vault_audit", 0, NULL, err, sizeof(err));
    assert_null(res);
    assert_non_null(strstr(err, "append-only"));
}

static void test_bad_input(void **state)
{
    (void)state;
    const struct secret_spec ok = { "p-bad", NULL, "n", "v", "ok.example.com", NULL, 0, NULL, NULL };
    struct {
        struct secret_spec spec;
        const char *field;
    } cases[] = {
        { ok, "name:" },
        { ok, "host_patterns[0]:" },
        { ok, "host_patterns[0]:" },
        { ok, "injection_rule:" },
        { ok, "injection_rule:" },
        { ok, "value:" },
        { ok, "project_id:" },
    };
    cases[0].spec.name = "";
    cases[1].spec.pattern = "bad host!";
    cases[2].spec.pattern = "a.*.example.com";
    cases[3].spec.rule = "Authorization: Bearer token";
    cases[4].spec.rule = "no header line {secret}";
    cases[5].spec.value = "line\r\nX-Evil: 1";
    cases[6].spec.project = "";
    char details[512];
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        assert_int_equal(create_secret(&cases[i].spec, NULL, details),
                         GRPC_STATUS_INVALID_ARGUMENT);
        if (strncmp(details, cases[i].field, strlen(cases[i].field)) != 0)
            fail_msg("case %zu: want an error naming %s, got \"%s\"", i, cases[i].field, details);
    }
    assert_int_equal(resolve("p-bad", "sb", "not a host", NULL, details),
                     GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(details, "host:"));
}

/* ResolveInjection without a key must give the Bearer header of value. */
static void expect_injected(const char *project, const char *sandbox, const char *host,
                            const char *value)
{
    char out[512], want[512];
    assert_int_equal(resolve(project, sandbox, host, NULL, out), GRPC_STATUS_OK);
    snprintf(want, sizeof(want), "Authorization: Bearer %s", value);
    assert_string_equal(out, want);
}

/* Status of a unary call whose answer is not looked at; details (512
 * bytes) when not NULL. */
static grpc_status_code call_status(const char *method, const ProtobufCMessage *req,
                                    const ProtobufCMessageDescriptor *resp_desc,
                                    ProtobufCMessage **keep, char *details)
{
    ProtobufCMessage *resp = NULL;
    char *why = NULL;
    grpc_status_code st = rpc_unary(fx.ch, method, req, resp_desc, &resp, &why, 10000);
    if (details)
        snprintf(details, 512, "%s", why ? why : "");
    if (keep)
        *keep = resp;
    else if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    free(why);
    return st;
}

static grpc_status_code unlock(const char *project, const unsigned char *ck, size_t ck_len,
                               uint32_t ttl_s, int64_t *expires, char *details)
{
    Airlock__Vault__V1__UnlockProjectRequest req =
        AIRLOCK__VAULT__V1__UNLOCK_PROJECT_REQUEST__INIT;
    req.project_id = (char *)project;
    req.customer_key.data = (uint8_t *)ck;
    req.customer_key.len = ck_len;
    req.ttl_s = ttl_s;
    req.actor = "test";
    ProtobufCMessage *resp = NULL;
    grpc_status_code st = call_status(M("UnlockProject"), &req.base,
                                      &airlock__vault__v1__unlock_project_response__descriptor,
                                      &resp, details);
    if (expires)
        *expires = resp ? ((Airlock__Vault__V1__UnlockProjectResponse *)resp)->expires_unix_ms : 0;
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st;
}

/* Whether LockProject found the project unlocked. */
static bool lock_project(const char *project)
{
    Airlock__Vault__V1__LockProjectRequest req = AIRLOCK__VAULT__V1__LOCK_PROJECT_REQUEST__INIT;
    req.project_id = (char *)project;
    req.actor = "test";
    ProtobufCMessage *resp = NULL;
    assert_int_equal(call_status(M("LockProject"), &req.base,
                                 &airlock__vault__v1__lock_project_response__descriptor, &resp,
                                 NULL),
                     GRPC_STATUS_OK);
    bool was = ((Airlock__Vault__V1__LockProjectResponse *)resp)->was_unlocked;
    protobuf_c_message_free_unpacked(resp, NULL);
    return was;
}

static void register_byok(const char *project)
{
    Airlock__Vault__V1__RegisterProjectRequest reg =
        AIRLOCK__VAULT__V1__REGISTER_PROJECT_REQUEST__INIT;
    reg.project_id = (char *)project;
    reg.customer_key.data = (uint8_t *)customer_key;
    reg.customer_key.len = 32;
    assert_int_equal(call_status(M("RegisterProject"), &reg.base,
                                 &airlock__vault__v1__register_project_response__descriptor, NULL,
                                 NULL),
                     GRPC_STATUS_OK);
}

/* UnlockProject makes a BYOK project's secrets injectable without the key
 * until LockProject or a vault restart; a wrong key unlocks nothing. */
static void test_byok_unlock(void **state)
{
    (void)state;
    register_byok("p-unlock");
    char out[512], summary[2048];
    struct secret_spec s = { "p-unlock", NULL, "own", "unlock-secret", "unlock.example.com",
                             NULL, 0, customer_key, NULL };
    assert_int_equal(create_secret(&s, NULL, out), GRPC_STATUS_OK);
    assert_int_equal(resolve("p-unlock", "sb", "unlock.example.com", NULL, out),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(out, "locked"));

    unsigned char wrong[32];
    memcpy(wrong, customer_key, 32);
    wrong[31] ^= 0x80;
    assert_int_equal(unlock("p-unlock", wrong, 32, 60, NULL, out),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(out, "customer_key is wrong"));
    assert_non_null(strstr(out, "nothing was decrypted"));
    assert_int_equal(resolve("p-unlock", "sb", "unlock.example.com", NULL, out),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_int_equal(unlock("p-unlock", customer_key, 16, 60, NULL, out),
                     GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(out, "customer_key: must be 32 bytes"));
    assert_int_equal(unlock("p-unlock", customer_key, 32, 100000, NULL, out),
                     GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(out, "ttl_s:"));
    assert_int_equal(unlock("p-never-registered", customer_key, 32, 60, NULL, out),
                     GRPC_STATUS_NOT_FOUND);
    struct secret_spec plain = { "p-unlock-master", NULL, "m", "master-secret",
                                 "m.example.com", NULL, 0, NULL, NULL };
    assert_int_equal(create_secret(&plain, NULL, out), GRPC_STATUS_OK);
    assert_int_equal(unlock("p-unlock-master", customer_key, 32, 60, NULL, out),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(out, "nothing to unlock"));

    int64_t expires = 0;
    assert_int_equal(unlock("p-unlock", customer_key, 32, 600, &expires, out), GRPC_STATUS_OK);
    assert_true(expires > 0);
    expect_injected("p-unlock", "sb", "unlock.example.com", "unlock-secret");
    /* A secret can be added without the key while the project is unlocked. */
    struct secret_spec more = { "p-unlock", "sb", "more", "unlock-more", "unlock.example.com",
                                NULL, 0, NULL, NULL };
    assert_int_equal(create_secret(&more, NULL, out), GRPC_STATUS_OK);
    expect_injected("p-unlock", "sb", "unlock.example.com", "unlock-more");

    assert_true(lock_project("p-unlock"));
    assert_false(lock_project("p-unlock"));
    assert_int_equal(resolve("p-unlock", "sb", "unlock.example.com", NULL, out),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(out, "locked"));

    /* Held in memory only: a restarted vault has every project locked. */
    assert_int_equal(unlock("p-unlock", customer_key, 32, 0, NULL, out), GRPC_STATUS_OK);
    assert_int_equal(resolve("p-unlock", "sb", "unlock.example.com", NULL, out), GRPC_STATUS_OK);
    assert_int_equal(vault_fixture_restart_vault(&fx), 0);
    assert_int_equal(resolve("p-unlock", "sb", "unlock.example.com", NULL, out),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(out, "locked"));

    audit_summary("p-unlock", summary, sizeof(summary));
    assert_string_equal(summary,
                        "register_project/OK create_secret/OK"
                        " inject/FAILED_PRECONDITION@unlock.example.com"
                        " unlock_project/FAILED_PRECONDITION"
                        " inject/FAILED_PRECONDITION@unlock.example.com"
                        " unlock_project/OK inject/OK@unlock.example.com create_secret/OK"
                        " inject/OK@unlock.example.com lock_project/OK lock_project/OK"
                        " inject/FAILED_PRECONDITION@unlock.example.com unlock_project/OK"
                        " inject/OK@unlock.example.com"
                        " inject/FAILED_PRECONDITION@unlock.example.com");
    /* The key is in no row of any vault table, not even hex-encoded. */
    char err[512];
    PGresult *res = db_query(&fx.db,
                             "SELECT (SELECT count(*) FROM vault_audit a WHERE a::text LIKE"
                             " '%0123456789abcdef%' OR a::text LIKE '%3031323334353637%')"
                             " + (SELECT count(*) FROM vault_projects p WHERE"
                             " position('\\x3031323334353637'::bytea IN p.wrapped_key) > 0)",
                             0, NULL, err, sizeof(err));
    assert_non_null(res);
    assert_string_equal(PQgetvalue(res, 0, 0), "0");
    PQclear(res);
}

static grpc_status_code org_call(const char *method, const char *org, char *details)
{
    Airlock__Vault__V1__OrgRequest req = AIRLOCK__VAULT__V1__ORG_REQUEST__INIT;
    req.org_id = (char *)org;
    req.actor = "admin";
    return call_status(method, &req.base, &airlock__vault__v1__org__descriptor, NULL, details);
}

static grpc_status_code set_project_org(const char *project, const char *org, char *details)
{
    Airlock__Vault__V1__SetProjectOrgRequest req =
        AIRLOCK__VAULT__V1__SET_PROJECT_ORG_REQUEST__INIT;
    req.project_id = (char *)project;
    req.org_id = (char *)org;
    req.actor = "admin";
    return call_status(M("SetProjectOrg"), &req.base, &airlock__vault__v1__org__descriptor, NULL,
                       details);
}

/* Names of the secrets ListSecrets returns, as "scope:name" joined by
 * spaces (scope = org, project or the sandbox id). */
static void list_names(const char *project, const char *org, char *out, size_t len)
{
    Airlock__Vault__V1__ListSecretsRequest req = AIRLOCK__VAULT__V1__LIST_SECRETS_REQUEST__INIT;
    req.project_id = (char *)project;
    req.org_id = (char *)org;
    ProtobufCMessage *resp = NULL;
    assert_int_equal(call_status(M("ListSecrets"), &req.base,
                                 &airlock__vault__v1__list_secrets_response__descriptor, &resp,
                                 NULL),
                     GRPC_STATUS_OK);
    Airlock__Vault__V1__ListSecretsResponse *list = (void *)resp;
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < list->n_secrets; i++) {
        const Airlock__Vault__V1__SecretMetadata *m = list->secrets[i];
        used += (size_t)snprintf(out + used, len - used, "%s%s:%s", used ? " " : "",
                                 *m->org_id ? "org" : *m->sandbox_id ? m->sandbox_id : "project",
                                 m->name);
    }
    protobuf_c_message_free_unpacked(resp, NULL);
}

/* org → project → sandbox: the narrowest binding wins, scope before
 * pattern; an org's secrets reach its projects only. */
static void test_org_scope(void **state)
{
    (void)state;
    char out[512], summary[2048];
    assert_int_equal(org_call(M("CreateOrg"), "acme", out), GRPC_STATUS_OK);
    assert_int_equal(org_call(M("CreateOrg"), "acme", out), GRPC_STATUS_ALREADY_EXISTS);
    assert_int_equal(org_call(M("CreateOrg"), "bad org!", out), GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(out, "org_id:"));
    assert_int_equal(org_call(M("GetOrg"), "acme", out), GRPC_STATUS_OK);
    assert_int_equal(org_call(M("GetOrg"), "nope", out), GRPC_STATUS_NOT_FOUND);
    assert_int_equal(set_project_org("p-org1", "nope", out), GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(out, "org nope not found"));
    assert_int_equal(set_project_org("p-org1", "acme", out), GRPC_STATUS_OK);
    assert_int_equal(set_project_org("p-org2", "acme", out), GRPC_STATUS_OK);
    /* p-org3 is BYOK and locked: an org secret is under the org's key. */
    register_byok("p-org3");
    assert_int_equal(set_project_org("p-org3", "acme", out), GRPC_STATUS_OK);

    struct secret_spec org = { NULL, NULL, "shared", "org-secret", "api.org.example.com", NULL,
                               0, NULL, "acme" };
    assert_int_equal(create_secret(&org, NULL, out), GRPC_STATUS_OK);
    struct secret_spec unknown = org;
    unknown.org = "nope";
    assert_int_equal(create_secret(&unknown, NULL, out), GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(out, "org_id: org nope not found"));
    struct secret_spec mixed = org;
    mixed.sandbox = "sb";
    assert_int_equal(create_secret(&mixed, NULL, out), GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(out, "org_id:"));

    expect_injected("p-org1", "sb1", "api.org.example.com", "org-secret");
    expect_injected("p-org3", "sb1", "api.org.example.com", "org-secret");
    assert_int_equal(resolve("p-not-in-org", "sb1", "api.org.example.com", NULL, out),
                     GRPC_STATUS_NOT_FOUND);

    /* A project's wildcard beats the org's exact pattern: scope first. */
    struct secret_spec proj = { "p-org1", NULL, "own", "project-secret", "*.org.example.com",
                                NULL, 0, NULL, NULL };
    assert_int_equal(create_secret(&proj, NULL, out), GRPC_STATUS_OK);
    expect_injected("p-org1", "sb1", "api.org.example.com", "project-secret");
    struct secret_spec sbs = { "p-org1", "sb1", "mine", "sandbox-secret", "api.org.example.com",
                               NULL, 0, NULL, NULL };
    assert_int_equal(create_secret(&sbs, NULL, out), GRPC_STATUS_OK);
    expect_injected("p-org1", "sb1", "api.org.example.com", "sandbox-secret");
    expect_injected("p-org1", "sb2", "api.org.example.com", "project-secret");
    expect_injected("p-org2", "sb1", "api.org.example.com", "org-secret");

    list_names("p-org1", "", out, sizeof(out));
    assert_string_equal(out, "project:own sb1:mine org:shared");
    list_names("", "acme", out, sizeof(out));
    assert_string_equal(out, "org:shared");

    /* A project cannot delete its org's secret; the org can. */
    char id[64];
    struct secret_spec second = org;
    second.name = "second";
    assert_int_equal(create_secret(&second, id, out), GRPC_STATUS_OK);
    Airlock__Vault__V1__DeleteSecretRequest del = AIRLOCK__VAULT__V1__DELETE_SECRET_REQUEST__INIT;
    del.project_id = "p-org1";
    del.id = id;
    del.actor = "test";
    assert_int_equal(call_status(M("DeleteSecret"), &del.base,
                                 &airlock__vault__v1__delete_secret_response__descriptor, NULL,
                                 NULL),
                     GRPC_STATUS_NOT_FOUND);
    del.project_id = "";
    del.org_id = "acme";
    assert_int_equal(call_status(M("DeleteSecret"), &del.base,
                                 &airlock__vault__v1__delete_secret_response__descriptor, NULL,
                                 NULL),
                     GRPC_STATUS_OK);

    audit_summary_of("", "acme", summary, sizeof(summary));
    assert_string_equal(summary, "create_org/OK create_secret/OK create_secret/OK"
                                 " delete_secret/OK");
    audit_summary("p-org2", summary, sizeof(summary));
    assert_string_equal(summary, "set_project_org/OK inject/OK@api.org.example.com");
}

/* A secret goes into plain HTTP requests only when it says so; refused
 * ones are audited and count nothing against the rate limit. */
static void test_plaintext_only_when_allowed(void **state)
{
    (void)state;
    struct secret_spec tls_only = { "p-plain", NULL, "tls", "sk-tls-only", "tls.example.com",
                                    NULL, 1, NULL, NULL };
    char out[512];
    assert_int_equal(create_secret(&tls_only, NULL, NULL), GRPC_STATUS_OK);
    assert_int_equal(resolve_for("p-plain", "sb-1", "tls.example.com", NULL, true, out),
                     GRPC_STATUS_PERMISSION_DENIED);
    assert_non_null(strstr(out, "TLS connections only"));
    assert_null(strstr(out, "sk-tls-only"));
    /* The refusal took no token: the one allowed per minute is still there. */
    assert_int_equal(resolve_for("p-plain", "sb-1", "tls.example.com", NULL, false, out),
                     GRPC_STATUS_OK);
    assert_string_equal(out, "Authorization: Bearer sk-tls-only");

    struct secret_spec plain = { "p-plain", NULL, "plain", "sk-plain-ok", "plain.example.com",
                                 NULL, 0, NULL, NULL };
    assert_int_equal(create_secret_with(&plain, 0, true, NULL, NULL), GRPC_STATUS_OK);
    assert_int_equal(resolve_for("p-plain", "sb-1", "plain.example.com", NULL, true, out),
                     GRPC_STATUS_OK);
    assert_string_equal(out, "Authorization: Bearer sk-plain-ok");

    /* The refusal is on record. */
    char summary[1024];
    audit_summary("p-plain", summary, sizeof(summary));
    assert_string_equal(summary, "register_project/OK create_secret/OK"
                                 " inject/PERMISSION_DENIED@tls.example.com"
                                 " inject/OK@tls.example.com create_secret/OK"
                                 " inject/OK@plain.example.com");
}

int main(void)
{
    int rc = vault_fixture_start(&fx);
    if (rc != 0) {
        vault_fixture_stop(&fx);
        return rc;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_never_listed_and_injected),
        cmocka_unit_test(test_ciphertext_holds_no_plaintext),
        cmocka_unit_test(test_narrowest_scope_wins),
        cmocka_unit_test(test_rate_limit),
        cmocka_unit_test(test_rate_limit_burst),
        cmocka_unit_test(test_byok),
        cmocka_unit_test(test_byok_unlock),
        cmocka_unit_test(test_org_scope),
        cmocka_unit_test(test_plaintext_only_when_allowed),
        cmocka_unit_test(test_audit_log),
        cmocka_unit_test(test_bad_input),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    vault_fixture_stop(&fx);
    return rc;
}
