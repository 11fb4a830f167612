#include "reseal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "log.h"
#include "orgs.h"
#include "project_keys.h"
#include "sealed.h"
#include "secmem.h"

/* Writes the new ciphertext of s's secret if its row still is what was
 * read (same nonce, old version); 1 written, 0 changed meanwhile, -1. */
static int store_resealed(struct vault *v, const struct sealed_row *s,
                          const unsigned char *nonce, const unsigned char *ct, size_t len,
                          const unsigned char *tag, struct airlock_error *e)
{
    char nonce_hex[2 * VAULT_NONCE_BYTES + 1], tag_hex[2 * VAULT_TAG_BYTES + 1], version[8];
    char *ct_hex = malloc(2 * len + 1);
    if (!ct_hex)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    hex_encode(nonce, VAULT_NONCE_BYTES, nonce_hex);
    hex_encode(tag, VAULT_TAG_BYTES, tag_hex);
    hex_encode(ct, len, ct_hex);
    snprintf(version, sizeof(version), "%d", SECRET_AAD_VERSION);
    const char *params[] = { s->f.id, s->nonce_hex, nonce_hex, ct_hex, tag_hex, version };
    PGresult *res = db_query(
        &v->db,
        "WITH u AS (UPDATE vault_secrets SET nonce = decode($3, 'hex'),"
        "  ciphertext = decode($4, 'hex'), tag = decode($5, 'hex'), aad_version = $6"
        "  WHERE id = $1 AND aad_version < $6 AND nonce = decode($2, 'hex')"
        "  RETURNING id, project_id, sandbox_id, org_id),"
        " a AS (INSERT INTO vault_audit (actor, action, project_id, sandbox_id, secret_id,"
        "  org_id, status) SELECT 'vault', 'reseal_secret', coalesce(project_id, ''),"
        "  sandbox_id, id, coalesce(org_id, ''), 'OK' FROM u)"
        " SELECT 1 FROM u",
        6, params, AIRLOCK_ERROR_MSG(e));
    free(ct_hex);
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    int written = PQntuples(res);
    PQclear(res);
    return written;
}

/* Opens the secret of res's row with its old AAD and stores it sealed
 * with the current one; 1 re-sealed, 0 changed meanwhile, -1. */
static int reseal_row(struct vault *v, const PGresult *res, int row, const unsigned char *key,
                      struct airlock_error *e)
{
    struct sealed_row s;
    unsigned char *pt = NULL, nonce[VAULT_NONCE_BYTES], tag[VAULT_TAG_BYTES], *ct = NULL;
    size_t len = 0;
    int rc = sealed_row_load(res, row, &s, e);
    if (rc < 0)
        return -1;
    rc = -1;
    if (sealed_row_open(&s, key, &pt, &len, e) < 0)
        goto out;
    ct = malloc(len ? len : 1);
    if (!ct) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        goto out;
    }
    if (sealed_seal(&s.f, key, pt, len, nonce, ct, tag, e) < 0)
        goto out;
    rc = store_resealed(v, &s, nonce, ct, len, tag, e);
out:
    if (pt)
        secmem_free(pt, len ? len : 1);
    free(ct);
    sealed_row_clear(&s);
    return rc;
}

void reseal_owner(struct vault *v, const char *project_id, const char *org_id,
                  const unsigned char *key)
{
    struct airlock_error e;
    char version[8];
    snprintf(version, sizeof(version), "%d", SECRET_AAD_VERSION);
    const char *params[] = { project_id, org_id, version };
    PGresult *res = db_query(&v->db,
                             "SELECT " SEALED_COLUMNS
                             " FROM vault_secrets s JOIN vault_bindings b ON b.secret_id = s.id"
                             " WHERE s.aad_version < $3::smallint AND (CASE WHEN $2 <> ''"
                             "  THEN s.org_id = $2 ELSE s.project_id = $1 END)"
                             " ORDER BY s.id",
                             3, params, AIRLOCK_ERROR_MSG(&e));
    if (!res) {
        log_error("reseal: cannot read old secrets", "project=%s org=%s error=\"%s\"",
                  project_id, org_id, e.message);
        return;
    }
    int resealed = 0;
    for (int i = 0; i < PQntuples(res); i++) {
        /* One secret per id; its bindings are the rows that follow. */
        if (i > 0 && strcmp(PQgetvalue(res, i, SEALED_ID), PQgetvalue(res, i - 1, SEALED_ID)) == 0)
            continue;
        int rc = reseal_row(v, res, i, key, &e);
        if (rc < 0)
            log_error("reseal: secret left with its old AAD", "secret=%s error=\"%s\"",
                      PQgetvalue(res, i, SEALED_ID), e.message);
        resealed += rc > 0;
    }
    if (resealed)
        log_info("secrets re-sealed", "project=%s org=%s count=%d aad_version=%d", project_id,
                 org_id, resealed, SECRET_AAD_VERSION);
    PQclear(res);
}

int reseal_at_start(struct vault *v, struct airlock_error *e)
{
    char version[8];
    snprintf(version, sizeof(version), "%d", SECRET_AAD_VERSION);
    const char *params[] = { version };
    PGresult *owners = db_query(&v->db,
                                "SELECT DISTINCT coalesce(s.project_id, ''),"
                                " coalesce(s.org_id, '') FROM vault_secrets s"
                                " LEFT JOIN vault_projects p ON p.project_id = s.project_id"
                                " WHERE s.aad_version < $1::smallint"
                                "  AND (s.org_id IS NOT NULL OR p.key_source = 'master')",
                                1, params, AIRLOCK_ERROR_MSG(e));
    if (!owners)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    unsigned char *key = secmem_alloc(VAULT_KEY_BYTES);
    int rc = key ? 0 : airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot lock memory for a key");
    for (int i = 0; rc == 0 && i < PQntuples(owners); i++) {
        const char *project_id = PQgetvalue(owners, i, 0), *org_id = PQgetvalue(owners, i, 1);
        struct customer_key none = { NULL, 0 };
        struct airlock_error why;
        int got = *org_id ? org_data_key(v, org_id, key, &why)
                          : project_data_key(v, project_id, none, false, "vault", key, &why);
        if (got == 0)
            reseal_owner(v, project_id, org_id, key);
        else
            log_error("reseal: no data key", "project=%s org=%s error=\"%s\"", project_id,
                      org_id, why.message);
    }
    secmem_free(key, VAULT_KEY_BYTES);
    PQclear(owners);
    return rc;
}
