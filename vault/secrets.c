#include "secrets.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "hex.h"
#include "log.h"
#include "names.h"
#include "orgs.h"
#include "project_keys.h"
#include "random_id.h"
#include "ratelimit.h"
#include "rules.h"
#include "sealed.h"
#include "secmem.h"

#define SECRET_MAX_PATTERNS 32
#define SECRET_MAX_RATE_PER_MINUTE 1000000

/* The host patterns of a request, normalized and without duplicates: the
 * bindings stored, and sealed into the AAD. */
struct create_patterns {
    char norm[SECRET_MAX_PATTERNS][NAME_MAX_LEN + 1];
    struct secret_binding bindings[SECRET_MAX_PATTERNS];
    size_t n;
};

/* Adds the normalized pattern unless it is there already. */
static void add_pattern(struct create_patterns *cp, const char *norm, const char *rule)
{
    for (size_t i = 0; i < cp->n; i++)
        if (strcmp(cp->norm[i], norm) == 0)
            return;
    strcpy(cp->norm[cp->n], norm);
    cp->bindings[cp->n].host_pattern = cp->norm[cp->n];
    cp->bindings[cp->n++].injection_rule = rule;
}

/* Checks every field; normalized host patterns go into cp and into
 * patterns as a PostgreSQL array literal (safe: host names hold no quotes
 * or commas). */
static int check_create(const Airlock__Vault__V1__CreateSecretRequest *req,
                        struct create_patterns *cp, char *patterns, size_t patterns_len,
                        struct airlock_error *e)
{
    char why[256];
    if (*req->org_id) {
        if (*req->project_id || *req->sandbox_id || req->customer_key.len)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "org_id: an org secret has no project_id, sandbox_id or "
                                     "customer_key (orgs use vault's master key)");
        if (vault_check_id("org_id", req->org_id, true, e) < 0)
            return -1;
    } else if (vault_check_id("project_id", req->project_id, true, e) < 0 ||
               vault_check_id("sandbox_id", req->sandbox_id, false, e) < 0) {
        return -1;
    }
    if (vault_check_id("name", req->name, true, e) < 0)
        return -1;
    if (rule_check_secret(req->value.data, req->value.len, why, sizeof(why)) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "value: %s", why);
    if (req->n_host_patterns == 0 || req->n_host_patterns > SECRET_MAX_PATTERNS)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "host_patterns: 1 to %d required",
                                 SECRET_MAX_PATTERNS);
    cp->n = 0;
    for (size_t i = 0; i < req->n_host_patterns; i++) {
        char norm[NAME_MAX_LEN + 1];
        if (name_pattern_normalize(req->host_patterns[i], norm) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "host_patterns[%zu]: \"%s\" is not a host name or *.name",
                                     i, req->host_patterns[i]);
        add_pattern(cp, norm, req->injection_rule);
    }
    size_t used = (size_t)snprintf(patterns, patterns_len, "{");
    for (size_t i = 0; i < cp->n; i++)
        used += (size_t)snprintf(patterns + used, patterns_len - used, "%s%s", i ? "," : "",
                                 cp->norm[i]);
    snprintf(patterns + used, patterns_len - used, "}");
    if (rule_check(req->injection_rule, why, sizeof(why)) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "injection_rule: %s", why);
    if (req->rate_limit_per_minute > SECRET_MAX_RATE_PER_MINUTE)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "rate_limit_per_minute: at most %d",
                                 SECRET_MAX_RATE_PER_MINUTE);
    if (req->rate_limit_burst > SECRET_MAX_RATE_PER_MINUTE ||
        (req->rate_limit_burst && !req->rate_limit_per_minute))
        return airlock_error_set(
            e, AIRLOCK_ERR_INVALID,
            "rate_limit_burst: at most %d, and only with rate_limit_per_minute",
            SECRET_MAX_RATE_PER_MINUTE);
    return 0;
}

static char *column_dup(const PGresult *res, int row, int col)
{
    return strdup(PQgetvalue(res, row, col));
}

/* One secret's metadata from a row of METADATA_SELECT. */
static int metadata_from_row(const PGresult *res, int row, Airlock__Vault__V1__SecretMetadata *m)
{
    airlock__vault__v1__secret_metadata__init(m);
    m->id = column_dup(res, row, 0);
    m->project_id = column_dup(res, row, 1);
    m->sandbox_id = column_dup(res, row, 2);
    m->name = column_dup(res, row, 3);
    m->injection_rule = column_dup(res, row, 5);
    m->rate_limit_per_minute = (uint32_t)strtoul(PQgetvalue(res, row, 6), NULL, 10);
    m->created_unix_ms = strtoll(PQgetvalue(res, row, 7), NULL, 10);
    m->rate_limit_burst = (uint32_t)strtoul(PQgetvalue(res, row, 8), NULL, 10);
    m->org_id = column_dup(res, row, 9);
    m->allow_plaintext = strcmp(PQgetvalue(res, row, 10), "t") == 0;
    const char *list = PQgetvalue(res, row, 4);
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    m->host_patterns = calloc(n, sizeof(char *));
    if (m->id && asprintf(&m->placeholder, RULE_SECRET_PLACEHOLDER_PREFIX "%s", m->id) < 0)
        m->placeholder = NULL;
    if (!m->id || !m->project_id || !m->sandbox_id || !m->name || !m->injection_rule ||
        !m->host_patterns || !m->placeholder || !m->org_id)
        return -1;
    for (const char *p = list; m->n_host_patterns < n; p += strcspn(p, ",") + 1) {
        m->host_patterns[m->n_host_patterns] = strndup(p, strcspn(p, ","));
        if (!m->host_patterns[m->n_host_patterns++])
            return -1;
    }
    return 0;
}

void secret_metadata_clear(Airlock__Vault__V1__SecretMetadata *m)
{
    vault_free_string(m->id);
    vault_free_string(m->project_id);
    vault_free_string(m->sandbox_id);
    vault_free_string(m->name);
    vault_free_string(m->injection_rule);
    vault_free_string(m->placeholder);
    vault_free_string(m->org_id);
    for (size_t i = 0; i < m->n_host_patterns; i++)
        free(m->host_patterns[i]);
    free(m->host_patterns);
    airlock__vault__v1__secret_metadata__init(m);
}

/* Metadata of a project's secrets — with sandbox_id empty its org's too —
 * or, with project_id empty, of org_id's; optionally one id. Never the
 * ciphertext. */
static PGresult *metadata_query(struct vault *v, const char *project_id, const char *sandbox_id,
                                const char *org_id, const char *secret_id,
                                struct airlock_error *e)
{
    const char *params[] = { project_id, sandbox_id, secret_id, org_id };
    return db_query(&v->db,
                    "SELECT s.id, coalesce(s.project_id, ''), s.sandbox_id, s.name,"
                    " string_agg(b.host_pattern, ',' ORDER BY b.host_pattern),"
                    " min(b.injection_rule), s.rate_limit_per_minute,"
                    " (extract(epoch FROM s.created_at) * 1000)::bigint, s.rate_limit_burst,"
                    " coalesce(s.org_id, ''), s.allow_plaintext"
                    " FROM vault_secrets s JOIN vault_bindings b ON b.secret_id = s.id"
                    " WHERE (($1 <> '' AND ((s.project_id = $1 AND ($2 = '' OR s.sandbox_id = $2))"
                    "   OR ($2 = '' AND s.org_id = (SELECT org_id FROM vault_project_orgs"
                    "    WHERE project_id = $1))))"
                    "  OR ($1 = '' AND s.org_id = $4))"
                    " AND ($3 = '' OR s.id = $3)"
                    " GROUP BY s.id ORDER BY s.org_id NULLS FIRST, s.sandbox_id, s.name",
                    4, params, AIRLOCK_ERROR_MSG(e));
}

/* Inserts the secret, its bindings and the audit row in one statement.
 * AIRLOCK_ERR_EXISTS when the name is taken in that scope. */
static int insert_secret(struct vault *v, const Airlock__Vault__V1__CreateSecretRequest *req,
                         const char *id, const char *patterns, const unsigned char *nonce,
                         const unsigned char *ct, const unsigned char *tag,
                         struct airlock_error *e)
{
    char nonce_hex[2 * VAULT_NONCE_BYTES + 1], tag_hex[2 * VAULT_TAG_BYTES + 1], rate[16],
        burst[16], aad_version[8];
    char *ct_hex = malloc(2 * req->value.len + 1);
    if (!ct_hex)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    hex_encode(nonce, VAULT_NONCE_BYTES, nonce_hex);
    hex_encode(tag, VAULT_TAG_BYTES, tag_hex);
    hex_encode(ct, req->value.len, ct_hex);
    snprintf(rate, sizeof(rate), "%u", req->rate_limit_per_minute);
    snprintf(aad_version, sizeof(aad_version), "%d", SECRET_AAD_VERSION);
    snprintf(burst, sizeof(burst), "%u",
             req->rate_limit_burst ? req->rate_limit_burst : req->rate_limit_per_minute);
    const char *actor = *req->actor ? req->actor : "unknown";
    const char *params[] = { id,      req->project_id, req->sandbox_id, req->name, nonce_hex,
                             ct_hex,  tag_hex,         rate,            patterns,  req->injection_rule,
                             actor,   burst,           req->org_id,
                             req->allow_plaintext ? "true" : "false", aad_version };
    /* An org secret has project_id NULL, a project's org_id NULL. */
    PGresult *res = db_query(
        &v->db,
        "WITH s AS (INSERT INTO vault_secrets (id, project_id, sandbox_id, name, nonce,"
        "  ciphertext, tag, rate_limit_per_minute, rate_limit_burst, org_id, allow_plaintext,"
        "  aad_version)"
        "  VALUES ($1, nullif($2, ''), $3, $4, decode($5, 'hex'), decode($6, 'hex'),"
        "  decode($7, 'hex'), $8::integer, $12::integer, nullif($13, ''), $14::boolean, $15)"
        "  ON CONFLICT DO NOTHING"
        "  RETURNING id, project_id, sandbox_id, org_id),"
        " b AS (INSERT INTO vault_bindings (secret_id, host_pattern, injection_rule)"
        "  SELECT DISTINCT s.id, p, $10 FROM s, unnest($9::text[]) p),"
        " a AS (INSERT INTO vault_audit (actor, action, project_id, sandbox_id, secret_id,"
        "  org_id, status) SELECT $11, 'create_secret', coalesce(project_id, ''), sandbox_id,"
        "  id, coalesce(org_id, ''), 'OK' FROM s)"
        " SELECT 1 FROM s",
        15, params, AIRLOCK_ERROR_MSG(e));
    free(ct_hex);
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    int rc = 0;
    if (PQntuples(res) != 1)
        rc = airlock_error_set(e, AIRLOCK_ERR_EXISTS,
                               "name: a secret named %s exists in that scope already", req->name);
    PQclear(res);
    return rc;
}

/* The metadata of secret id, just created, into out. */
static int read_created(struct vault *v, const Airlock__Vault__V1__CreateSecretRequest *req,
                        const char *id, Airlock__Vault__V1__SecretMetadata *out,
                        struct airlock_error *e)
{
    PGresult *res = metadata_query(v, req->project_id, "", req->org_id, id, e);
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    int rc = 0;
    if (PQntuples(res) != 1 || metadata_from_row(res, 0, out) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "secret %s vanished after creation", id);
    PQclear(res);
    return rc;
}

/* The data key the secret is sealed under: its org's, or its project's
 * (made on the project's first secret). */
static int sealing_key(struct vault *v, const Airlock__Vault__V1__CreateSecretRequest *req,
                       unsigned char *key, struct airlock_error *e)
{
    if (*req->org_id)
        return org_data_key(v, req->org_id, key, e);
    struct customer_key ck = { req->customer_key.data, req->customer_key.len };
    return project_data_key(v, req->project_id, ck, true, *req->actor ? req->actor : "unknown",
                            key, e);
}

int secret_create(struct vault *v, Airlock__Vault__V1__CreateSecretRequest *req,
                  Airlock__Vault__V1__SecretMetadata *out, struct airlock_error *e)
{
    int rc = -1;
    char patterns[SECRET_MAX_PATTERNS * (NAME_MAX_LEN + 1) + 8], id[64];
    struct create_patterns cp;
    unsigned char nonce[VAULT_NONCE_BYTES], tag[VAULT_TAG_BYTES], *ct = NULL;
    unsigned char *data_key = secmem_alloc(VAULT_KEY_BYTES);
    if (check_create(req, &cp, patterns, sizeof(patterns), e) < 0)
        goto out;
    ct = malloc(req->value.len);
    if (!data_key || !ct || random_id("sec_", 16, id, sizeof(id)) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory or randomness");
        goto out;
    }
    if (sealing_key(v, req, data_key, e) < 0)
        goto out;
    /* The row insert_secret writes, as the AAD covers it. */
    struct secret_aad_fields f = { id, req->project_id, req->org_id, req->sandbox_id,
                                   req->allow_plaintext, cp.bindings, cp.n };
    if (sealed_seal(&f, data_key, req->value.data, req->value.len, nonce, ct, tag, e) < 0)
        goto out;
    if (insert_secret(v, req, id, patterns, nonce, ct, tag, e) < 0 ||
        read_created(v, req, id, out, e) < 0)
        goto out;
    rc = 0;
    log_info("secret created", "org=%s project=%s sandbox=%s secret=%s name=%s", req->org_id,
             req->project_id, req->sandbox_id, id, req->name);
out:
    /* The plaintext must not outlive the request. */
    if (req->value.data)
        OPENSSL_cleanse(req->value.data, req->value.len);
    if (req->customer_key.data)
        OPENSSL_cleanse(req->customer_key.data, req->customer_key.len);
    secmem_free(data_key, VAULT_KEY_BYTES);
    free(ct);
    return rc;
}

int secret_list(struct vault *v, const Airlock__Vault__V1__ListSecretsRequest *req,
                Airlock__Vault__V1__ListSecretsResponse *out, struct airlock_error *e)
{
    bool by_org;
    if (vault_check_owner(req->project_id, req->org_id, &by_org, e) < 0 ||
        vault_check_id("sandbox_id", req->sandbox_id, false, e) < 0)
        return -1;
    PGresult *res = metadata_query(v, by_org ? "" : req->project_id, req->sandbox_id,
                                   by_org ? req->org_id : "", "", e);
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    int n = PQntuples(res);
    out->secrets = calloc((size_t)n + 1, sizeof(*out->secrets));
    bool ok = out->secrets != NULL;
    for (int i = 0; ok && i < n; i++) {
        out->secrets[i] = malloc(sizeof(**out->secrets));
        ok = out->secrets[i] && metadata_from_row(res, i, out->secrets[i]) == 0;
        if (out->secrets[i])
            out->n_secrets++;
    }
    PQclear(res);
    return ok ? 0 : airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
}

void secret_list_clear(Airlock__Vault__V1__ListSecretsResponse *out)
{
    for (size_t i = 0; i < out->n_secrets; i++) {
        secret_metadata_clear(out->secrets[i]);
        free(out->secrets[i]);
    }
    free(out->secrets);
    out->secrets = NULL;
    out->n_secrets = 0;
}

int secret_delete(struct vault *v, const Airlock__Vault__V1__DeleteSecretRequest *req,
                  struct airlock_error *e)
{
    bool by_org;
    if (vault_check_owner(req->project_id, req->org_id, &by_org, e) < 0 ||
        vault_check_id("id", req->id, true, e) < 0)
        return -1;
    const char *params[] = { by_org ? "" : req->project_id, req->id,
                             *req->actor ? req->actor : "unknown", by_org ? req->org_id : "" };
    /* Ciphertext, bindings (cascade) and the audit row in one statement.
     * A project cannot delete its org's secrets (project_id is NULL). */
    PGresult *res = db_query(&v->db,
                             "WITH d AS (DELETE FROM vault_secrets WHERE id = $2 AND"
                             "  (CASE WHEN $4 <> '' THEN org_id = $4 ELSE project_id = $1 END)"
                             "  RETURNING id, sandbox_id),"
                             " a AS (INSERT INTO vault_audit (actor, action, project_id,"
                             "  sandbox_id, secret_id, org_id, status)"
                             "  SELECT $3, 'delete_secret', $1, sandbox_id, id, $4, 'OK' FROM d)"
                             " SELECT 1 FROM d",
                             4, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    bool deleted = PQntuples(res) == 1;
    PQclear(res);
    if (!deleted)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "secret %s not found in %s %s",
                                 req->id, by_org ? "org" : "project",
                                 by_org ? req->org_id : req->project_id);
    ratelimit_forget(&v->ratelimit, req->id);
    log_info("secret deleted", "org=%s project=%s secret=%s", req->org_id, req->project_id,
             req->id);
    return 0;
}
