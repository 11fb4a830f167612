/* Tamper-evident vault rows: a real airlock-vault on a real PostgreSQL.
 * A secret's row edited directly in the database (a binding's host or
 * rule, the owner, the scope, plain HTTP, the AAD version) no longer
 * decrypts: ResolveInjection refuses it (DATA_LOSS) and the audit log
 * says so, while untouched secrets go on. Rows sealed the old way (AAD of
 * the id only; written here as the vault before did) still work and are
 * re-sealed: at start, at UnlockProject, at their first injection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "vault.pb-c.h"
#include "vault_fixture.h"

#define M(name) "/airlock.vault.v1.Vault/" name

static struct vault_fixture fx;
static const unsigned char customer_key[32] = "0123456789abcdef0123456789abcdef";

/* CreateSecret of value for project (or org when project is NULL) on
 * pattern; the id (64 bytes). */
static void create(const char *project, const char *sandbox, const char *org, const char *name,
                   const char *value, const char *pattern, const unsigned char *ck, char *id)
{
    Airlock__Vault__V1__CreateSecretRequest req = AIRLOCK__VAULT__V1__CREATE_SECRET_REQUEST__INIT;
    char *patterns[] = { (char *)pattern };
    req.project_id = (char *)(project ? project : "");
    req.sandbox_id = (char *)(sandbox ? sandbox : "");
    req.org_id = (char *)(org ? org : "");
    req.name = (char *)name;
    req.value.data = (uint8_t *)value;
    req.value.len = strlen(value);
    req.n_host_patterns = 1;
    req.host_patterns = patterns;
    req.injection_rule = "Authorization: Bearer {secret}";
    req.actor = "test";
    if (ck) {
        req.customer_key.data = (uint8_t *)ck;
        req.customer_key.len = 32;
    }
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(fx.ch, M("CreateSecret"), &req.base,
                               &airlock__vault__v1__secret_metadata__descriptor, &resp, NULL,
                               10000),
                     GRPC_STATUS_OK);
    snprintf(id, 64, "%s", ((Airlock__Vault__V1__SecretMetadata *)resp)->id);
    protobuf_c_message_free_unpacked(resp, NULL);
}

/* Status of ResolveInjection; "name: value" or the details into out (512). */
static grpc_status_code resolve(const char *project, const char *sandbox, const char *host,
                                bool plaintext, char *out)
{
    return vault_fixture_resolve(&fx, project, sandbox, host, NULL, plaintext, out);
}

static void expect_injected(const char *project, const char *sandbox, const char *host,
                            const char *value)
{
    char out[512], want[512];
    assert_int_equal(resolve(project, sandbox, host, false, out), GRPC_STATUS_OK);
    snprintf(want, sizeof(want), "Authorization: Bearer %s", value);
    assert_string_equal(out, want);
}

/* The refusal names the secret and why, and carries no value. */
static void expect_refused(const char *project, const char *sandbox, const char *host,
                           bool plaintext, const char *id, const char *value)
{
    char out[512];
    assert_int_equal(resolve(project, sandbox, host, plaintext, out), GRPC_STATUS_DATA_LOSS);
    assert_non_null(strstr(out, id));
    assert_non_null(strstr(out, "does not decrypt"));
    assert_non_null(strstr(out, "changed outside vault"));
    assert_null(strstr(out, value));
}

/* Runs sql with $1 = a, $2 = b (either may be NULL: no parameters past
 * it); the number of rows it changed or returned. */
static int sql(const char *q, const char *a, const char *b)
{
    const char *params[] = { a, b };
    char err[512];
    PGresult *res = db_query(&fx.db, q, a ? (b ? 2 : 1) : 0, params, err, sizeof(err));
    if (!res)
        fail_msg("%s: %s", q, err);
    int n = PQntuples(res) ? PQntuples(res) : atoi(PQcmdTuples(res));
    PQclear(res);
    return n;
}

static int aad_version(const char *id)
{
    const char *params[] = { id };
    char err[512];
    PGresult *res = db_query(&fx.db, "SELECT aad_version FROM vault_secrets WHERE id = $1", 1,
                             params, err, sizeof(err));
    assert_non_null(res);
    assert_int_equal(PQntuples(res), 1);
    int v = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    return v;
}

/* "action/status@host" of project's audit rows, oldest first. */
static void audit_summary(const char *project, char *out, size_t len)
{
    assert_int_equal(vault_fixture_audit_summary(&fx, project, "", out, len), 0);
}

/* Every column a binding or the secret's row decides something by, each
 * edited on a secret of its own. */
static void test_edited_rows_are_refused(void **state)
{
    (void)state;
    char keep[64], host[64], rule[64], added[64], scope[64], owner[64], plain[64], down[64];
    create("p-tamper", NULL, NULL, "keep", "v-keep", "keep.example.com", NULL, keep);
    create("p-tamper", NULL, NULL, "host", "v-host", "host.example.com", NULL, host);
    create("p-tamper", NULL, NULL, "rule", "v-rule", "rule.example.com", NULL, rule);
    create("p-tamper", NULL, NULL, "added", "v-added", "added.example.com", NULL, added);
    create("p-tamper", "sb-a", NULL, "scope", "v-scope", "scope.example.com", NULL, scope);
    create("p-victim", NULL, NULL, "owner", "v-owner", "owner.example.com", NULL, owner);
    create("p-tamper", NULL, NULL, "plain", "v-plain", "plain.example.com", NULL, plain);
    create("p-tamper", NULL, NULL, "down", "v-down", "down.example.com", NULL, down);
    expect_injected("p-tamper", "sb-b", "host.example.com", "v-host");
    expect_injected("p-tamper", "sb-a", "scope.example.com", "v-scope");
    expect_injected("p-victim", "sb-b", "owner.example.com", "v-owner");

    /* The host of a binding moved to the attacker's. */
    assert_int_equal(sql("UPDATE vault_bindings SET host_pattern = 'evil.example.net'"
                         " WHERE secret_id = $1", host, NULL), 1);
    expect_refused("p-tamper", "sb-b", "evil.example.net", false, host, "v-host");
    /* The rule: the value into a header the attacker's upstream logs. */
    assert_int_equal(sql("UPDATE vault_bindings SET injection_rule = 'X-Debug: {secret}'"
                         " WHERE secret_id = $1", rule, NULL), 1);
    expect_refused("p-tamper", "sb-b", "rule.example.com", false, rule, "v-rule");
    /* A binding added next to the right one: the right one is refused too. */
    assert_int_equal(sql("INSERT INTO vault_bindings (secret_id, host_pattern, injection_rule)"
                         " VALUES ($1, 'added.evil.net', 'Authorization: Bearer {secret}')",
                         added, NULL), 1);
    expect_refused("p-tamper", "sb-b", "added.evil.net", false, added, "v-added");
    expect_refused("p-tamper", "sb-b", "added.example.com", false, added, "v-added");
    /* A sandbox's secret widened to the whole project. */
    assert_int_equal(sql("UPDATE vault_secrets SET sandbox_id = '' WHERE id = $1", scope, NULL),
                     1);
    expect_refused("p-tamper", "sb-b", "scope.example.com", false, scope, "v-scope");
    /* Another project's secret moved into the attacker's project. */
    assert_int_equal(sql("UPDATE vault_secrets SET project_id = 'p-tamper' WHERE id = $1", owner,
                         NULL), 1);
    expect_refused("p-tamper", "sb-b", "owner.example.com", false, owner, "v-owner");
    /* A TLS-only secret let into plain HTTP. */
    assert_int_equal(sql("UPDATE vault_secrets SET allow_plaintext = true WHERE id = $1", plain,
                         NULL), 1);
    expect_refused("p-tamper", "sb-b", "plain.example.com", true, plain, "v-plain");
    /* Claimed to be sealed the old way (the id only), to slip the checks. */
    assert_int_equal(sql("UPDATE vault_secrets SET aad_version = 1 WHERE id = $1", down, NULL),
                     1);
    expect_refused("p-tamper", "sb-b", "down.example.com", false, down, "v-down");

    /* Untouched secrets of the same project go on. */
    expect_injected("p-tamper", "sb-b", "keep.example.com", "v-keep");
    char summary[4096];
    audit_summary("p-tamper", summary, sizeof(summary));
    const char *refusals[] = { "evil.example.net", "rule.example.com", "added.evil.net",
                               "added.example.com", "scope.example.com", "owner.example.com",
                               "plain.example.com", "down.example.com" };
    for (size_t i = 0; i < sizeof(refusals) / sizeof(*refusals); i++) {
        char want[128];
        snprintf(want, sizeof(want), "inject/DATA_LOSS@%s", refusals[i]);
        assert_non_null(strstr(summary, want));
    }
    assert_non_null(strstr(summary, "inject/OK@keep.example.com"));
    /* Put back as it was sealed, it decrypts again: the AAD, not some
     * other damage, refused it. */
    assert_int_equal(sql("UPDATE vault_bindings SET injection_rule ="
                         " 'Authorization: Bearer {secret}' WHERE secret_id = $1", rule, NULL), 1);
    expect_injected("p-tamper", "sb-b", "rule.example.com", "v-rule");
}

/* Patterns that normalize to one binding are sealed as the one row
 * stored, with the other bindings in any order. */
static void test_sealed_as_stored(void **state)
{
    (void)state;
    Airlock__Vault__V1__CreateSecretRequest req = AIRLOCK__VAULT__V1__CREATE_SECRET_REQUEST__INIT;
    char *patterns[] = { "Z.example.com", "z.example.com.", "a.example.com", "*.m.example.com" };
    req.project_id = "p-stored";
    req.name = "multi";
    req.value.data = (uint8_t *)"v-multi";
    req.value.len = strlen("v-multi");
    req.n_host_patterns = 4;
    req.host_patterns = patterns;
    req.injection_rule = "Authorization: Bearer {secret}";
    req.actor = "test";
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(fx.ch, M("CreateSecret"), &req.base,
                               &airlock__vault__v1__secret_metadata__descriptor, &resp, NULL,
                               10000),
                     GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(resp, NULL);
    assert_int_equal(sql("SELECT 1 FROM vault_bindings b JOIN vault_secrets s"
                         " ON s.id = b.secret_id WHERE s.project_id = $1", "p-stored", NULL), 3);
    expect_injected("p-stored", "sb", "z.example.com", "v-multi");
    expect_injected("p-stored", "sb", "a.example.com", "v-multi");
    expect_injected("p-stored", "sb", "x.m.example.com", "v-multi");
}

/* An org's secret is sealed with its org and refused moved elsewhere. */
static void test_edited_org_row_is_refused(void **state)
{
    (void)state;
    Airlock__Vault__V1__OrgRequest org = AIRLOCK__VAULT__V1__ORG_REQUEST__INIT;
    org.org_id = "o-tamper";
    org.actor = "admin";
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(fx.ch, M("CreateOrg"), &org.base, &airlock__vault__v1__org__descriptor,
                               &resp, NULL, 10000),
                     GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(resp, NULL);
    Airlock__Vault__V1__SetProjectOrgRequest set = AIRLOCK__VAULT__V1__SET_PROJECT_ORG_REQUEST__INIT;
    set.project_id = "p-org-member";
    set.org_id = "o-tamper";
    set.actor = "admin";
    assert_int_equal(rpc_unary(fx.ch, M("SetProjectOrg"), &set.base,
                               &airlock__vault__v1__org__descriptor, &resp, NULL, 10000),
                     GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(resp, NULL);
    char id[64];
    create(NULL, NULL, "o-tamper", "shared", "v-org", "org.example.com", NULL, id);
    expect_injected("p-org-member", "sb", "org.example.com", "v-org");
    assert_int_equal(sql("UPDATE vault_bindings SET host_pattern = '*.example.com'"
                         " WHERE secret_id = $1", id, NULL), 1);
    expect_refused("p-org-member", "sb", "www.example.com", false, id, "v-org");
}

/* AES-256-GCM as vault/crypto.c: 0 or -1. */
static int gcm(bool seal, const unsigned char *key, const char *aad, const unsigned char *nonce,
               const unsigned char *in, int len, unsigned char *out, unsigned char *tag)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n = 0, ok = ctx && EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce, seal) &&
                    EVP_CipherUpdate(ctx, NULL, &n, (const unsigned char *)aad,
                                     (int)strlen(aad)) &&
                    EVP_CipherUpdate(ctx, out, &n, in, len) &&
                    (seal || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag)) &&
                    EVP_CipherFinal_ex(ctx, out + n, &n) &&
                    (!seal || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag));
    EVP_CIPHER_CTX_free(ctx);
    return ok ? 0 : -1;
}

static void from_hex(const char *hex, unsigned char *out, size_t len)
{
    assert_int_equal(strlen(hex), 2 * len);
    for (size_t i = 0; i < len; i++)
        assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &out[i]), 1);
}

static void to_hex(const unsigned char *in, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++)
        sprintf(out + 2 * i, "%02x", in[i]);
}

/* Rewrites secret id of project (its data key wrapped by kek, NULL = the
 * master key) as the vault before this AAD wrote it: value sealed with
 * AAD "airlock-vault/secret/<id>", aad_version 1. */
static void write_as_v1(const char *project, const unsigned char *kek, const char *id,
                        const char *value)
{
    unsigned char master[32], wrapped[60], data_key[32], nonce[12], tag[16], ct[256];
    if (!kek) {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof(path), "%s/master.key", fx.dir);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        assert_int_equal(fread(master, 1, 32, f), 32);
        fclose(f);
        kek = master;
    }
    const char *params[] = { project };
    char err[512], aad[256];
    PGresult *res = db_query(&fx.db, "SELECT encode(wrapped_key, 'hex') FROM vault_projects"
                             " WHERE project_id = $1", 1, params, err, sizeof(err));
    assert_non_null(res);
    assert_int_equal(PQntuples(res), 1);
    from_hex(PQgetvalue(res, 0, 0), wrapped, sizeof(wrapped));
    PQclear(res);
    snprintf(aad, sizeof(aad), "airlock-vault/project/%s", project);
    assert_int_equal(gcm(false, kek, aad, wrapped, wrapped + 12, 32, data_key, wrapped + 44), 0);
    snprintf(aad, sizeof(aad), "airlock-vault/secret/%s", id);
    assert_int_equal(RAND_bytes(nonce, sizeof(nonce)), 1);
    assert_int_equal(gcm(true, data_key, aad, nonce, (const unsigned char *)value,
                         (int)strlen(value), ct, tag), 0);
    char nonce_hex[25], ct_hex[513], tag_hex[33];
    to_hex(nonce, sizeof(nonce), nonce_hex);
    to_hex(ct, strlen(value), ct_hex);
    to_hex(tag, sizeof(tag), tag_hex);
    const char *upd[] = { id, nonce_hex, ct_hex, tag_hex };
    res = db_query(&fx.db, "UPDATE vault_secrets SET nonce = decode($2, 'hex'),"
                   " ciphertext = decode($3, 'hex'), tag = decode($4, 'hex'), aad_version = 1"
                   " WHERE id = $1", 4, upd, err, sizeof(err));
    assert_non_null(res);
    assert_string_equal(PQcmdTuples(res), "1");
    PQclear(res);
}

static grpc_status_code unlock(const char *project)
{
    Airlock__Vault__V1__UnlockProjectRequest req =
        AIRLOCK__VAULT__V1__UNLOCK_PROJECT_REQUEST__INIT;
    req.project_id = (char *)project;
    req.customer_key.data = (uint8_t *)customer_key;
    req.customer_key.len = 32;
    req.actor = "test";
    ProtobufCMessage *resp = NULL;
    grpc_status_code st = rpc_unary(fx.ch, M("UnlockProject"), &req.base,
                                    &airlock__vault__v1__unlock_project_response__descriptor,
                                    &resp, NULL, 10000);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st;
}

/* Rows of the old format: injected and re-sealed at their first use (a
 * BYOK project's: at its unlock), at start for a master-key project's;
 * once re-sealed, an edit is refused like any other. */
static void test_old_rows_work_and_are_resealed(void **state)
{
    (void)state;
    char used[64], at_start[64], byok[64];
    create("p-v1", NULL, NULL, "used", "v1-used", "used.example.com", NULL, used);
    write_as_v1("p-v1", NULL, used, "v1-used");
    assert_int_equal(aad_version(used), 1);
    expect_injected("p-v1", "sb", "used.example.com", "v1-used");
    assert_int_equal(aad_version(used), 2);
    expect_injected("p-v1", "sb", "used.example.com", "v1-used");
    char summary[2048];
    audit_summary("p-v1", summary, sizeof(summary));
    assert_string_equal(summary, "register_project/OK create_secret/OK reseal_secret/OK"
                                 " inject/OK@used.example.com inject/OK@used.example.com");
    assert_int_equal(sql("UPDATE vault_bindings SET host_pattern = 'evil.example.net'"
                         " WHERE secret_id = $1", used, NULL), 1);
    expect_refused("p-v1", "sb", "evil.example.net", false, used, "v1-used");

    Airlock__Vault__V1__RegisterProjectRequest reg =
        AIRLOCK__VAULT__V1__REGISTER_PROJECT_REQUEST__INIT;
    reg.project_id = "p-v1-byok";
    reg.customer_key.data = (uint8_t *)customer_key;
    reg.customer_key.len = 32;
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(fx.ch, M("RegisterProject"), &reg.base,
                               &airlock__vault__v1__register_project_response__descriptor, &resp,
                               NULL, 10000),
                     GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(resp, NULL);
    create("p-v1-start", NULL, NULL, "s", "v1-start", "start.example.com", NULL, at_start);
    create("p-v1-byok", NULL, NULL, "b", "v1-byok", "byok.example.com", customer_key, byok);
    write_as_v1("p-v1-start", NULL, at_start, "v1-start");
    write_as_v1("p-v1-byok", customer_key, byok, "v1-byok");

    /* A start re-seals what the master key opens; the locked BYOK
     * project's row waits, still v1, still working once unlocked. */
    assert_int_equal(vault_fixture_restart_vault(&fx), 0);
    assert_int_equal(aad_version(at_start), 2);
    assert_int_equal(aad_version(byok), 1);
    expect_injected("p-v1-start", "sb", "start.example.com", "v1-start");
    audit_summary("p-v1-start", summary, sizeof(summary));
    assert_string_equal(summary, "register_project/OK create_secret/OK reseal_secret/OK"
                                 " inject/OK@start.example.com");
    assert_int_equal(unlock("p-v1-byok"), GRPC_STATUS_OK);
    assert_int_equal(aad_version(byok), 2);
    expect_injected("p-v1-byok", "sb", "byok.example.com", "v1-byok");
    assert_int_equal(sql("UPDATE vault_secrets SET allow_plaintext = true WHERE id = $1", byok,
                         NULL), 1);
    expect_refused("p-v1-byok", "sb", "byok.example.com", true, byok, "v1-byok");
}

int main(void)
{
    int rc = vault_fixture_start(&fx);
    if (rc != 0) {
        vault_fixture_stop(&fx);
        return rc;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edited_rows_are_refused),
        cmocka_unit_test(test_edited_org_row_is_refused),
        cmocka_unit_test(test_sealed_as_stored),
        cmocka_unit_test(test_old_rows_work_and_are_resealed),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    vault_fixture_stop(&fx);
    return rc;
}
