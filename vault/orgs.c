#include "orgs.h"

#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "hex.h"
#include "log.h"
#include "secmem.h"

static const char *actor_of(const char *actor)
{
    return *actor ? actor : "unknown";
}

/* Fills out from a row of (org_id, created ms). */
static int org_from_row(const PGresult *res, Airlock__Vault__V1__Org *out,
                        struct airlock_error *e)
{
    airlock__vault__v1__org__init(out);
    out->org_id = strdup(PQgetvalue(res, 0, 0));
    out->created_unix_ms = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    if (out->org_id)
        return 0;
    return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
}

int org_create(struct vault *v, const Airlock__Vault__V1__OrgRequest *req,
               Airlock__Vault__V1__Org *out, struct airlock_error *e)
{
    if (vault_check_id("org_id", req->org_id, true, e) < 0)
        return -1;
    int rc = -1;
    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES];
    char wrapped_hex[2 * VAULT_WRAPPED_KEY_BYTES + 1];
    PGresult *res = NULL;
    unsigned char *data_key = secmem_alloc(VAULT_KEY_BYTES);
    if (!data_key || RAND_bytes(data_key, VAULT_KEY_BYTES) != 1 ||
        crypto_wrap_key(v->master_key, "org", req->org_id, data_key, wrapped) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot create a data key");
        goto out;
    }
    hex_encode(wrapped, sizeof(wrapped), wrapped_hex);
    const char *params[] = { req->org_id, wrapped_hex, actor_of(req->actor) };
    /* The org and its audit row land together. */
    res = db_query(&v->db,
                   "WITH o AS (INSERT INTO vault_orgs (org_id, wrapped_key)"
                   "  VALUES ($1, decode($2, 'hex')) ON CONFLICT DO NOTHING"
                   "  RETURNING org_id, created_at),"
                   " a AS (INSERT INTO vault_audit (actor, action, project_id, org_id, status)"
                   "  SELECT $3, 'create_org', '', org_id, 'OK' FROM o)"
                   " SELECT org_id, (extract(epoch FROM created_at) * 1000)::bigint FROM o",
                   3, params, AIRLOCK_ERROR_MSG(e));
    if (!res) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto out;
    }
    if (PQntuples(res) == 0) {
        airlock_error_set(e, AIRLOCK_ERR_EXISTS, "org_id: org %s exists already", req->org_id);
        goto out;
    }
    rc = org_from_row(res, out, e);
    log_info("org created", "org=%s", req->org_id);
out:
    PQclear(res);
    secmem_free(data_key, VAULT_KEY_BYTES);
    return rc;
}

/* The org's row (org_id, created ms, wrapped key hex); not found naming
 * it when there is none. */
static int org_row(struct vault *v, const char *org_id, PGresult **res, struct airlock_error *e)
{
    const char *params[] = { org_id };
    *res = db_query(&v->db,
                    "SELECT org_id, (extract(epoch FROM created_at) * 1000)::bigint,"
                    " encode(wrapped_key, 'hex') FROM vault_orgs WHERE org_id = $1",
                    1, params, AIRLOCK_ERROR_MSG(e));
    if (!*res)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    if (PQntuples(*res) == 1)
        return 0;
    PQclear(*res);
    *res = NULL;
    return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND,
                             "org_id: org %s not found (create it first)", org_id);
}

int org_get(struct vault *v, const Airlock__Vault__V1__OrgRequest *req,
            Airlock__Vault__V1__Org *out, struct airlock_error *e)
{
    if (vault_check_id("org_id", req->org_id, true, e) < 0)
        return -1;
    PGresult *res = NULL;
    int rc = org_row(v, req->org_id, &res, e);
    if (rc == 0)
        rc = org_from_row(res, out, e);
    PQclear(res);
    return rc;
}

void org_clear(Airlock__Vault__V1__Org *out)
{
    vault_free_string(out->org_id);
    airlock__vault__v1__org__init(out);
}

int org_set_project(struct vault *v, const Airlock__Vault__V1__SetProjectOrgRequest *req,
                    Airlock__Vault__V1__Org *out, struct airlock_error *e)
{
    if (vault_check_id("project_id", req->project_id, true, e) < 0 ||
        vault_check_id("org_id", req->org_id, true, e) < 0)
        return -1;
    PGresult *org = NULL;
    if (org_row(v, req->org_id, &org, e) < 0)
        return -1;
    const char *params[] = { req->project_id, req->org_id, actor_of(req->actor) };
    PGresult *res = db_query(&v->db,
                             "WITH m AS (INSERT INTO vault_project_orgs (project_id, org_id)"
                             "  VALUES ($1, $2) ON CONFLICT (project_id)"
                             "  DO UPDATE SET org_id = EXCLUDED.org_id RETURNING project_id),"
                             " a AS (INSERT INTO vault_audit (actor, action, project_id, org_id,"
                             "  status) SELECT $3, 'set_project_org', project_id, $2, 'OK' FROM m)"
                             " SELECT 1 FROM m",
                             3, params, AIRLOCK_ERROR_MSG(e));
    int rc = res ? org_from_row(org, out, e) : airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    if (res)
        log_info("project joined org", "project=%s org=%s", req->project_id, req->org_id);
    PQclear(res);
    PQclear(org);
    return rc;
}

int org_data_key(struct vault *v, const char *org_id, unsigned char *key,
                 struct airlock_error *e)
{
    PGresult *res = NULL;
    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES];
    if (org_row(v, org_id, &res, e) < 0)
        return -1;
    int rc = 0;
    if (hex_decode(PQgetvalue(res, 0, 2), wrapped, sizeof(wrapped)) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "org %s: stored data key is malformed",
                               org_id);
    else if (crypto_unwrap_key(v->master_key, "org", org_id, wrapped, key) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL,
                               "org %s: the master key does not unwrap the data key "
                               "(another --master-key-file?)", org_id);
    PQclear(res);
    return rc;
}
