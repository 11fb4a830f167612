#include "project_keys.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "hex.h"
#include "log.h"
#include "secmem.h"

grpc_status_code project_register(struct vault *v, const char *project_id,
                                  struct customer_key ck, const char *actor, char *err,
                                  size_t errlen)
{
    if (ck.len != 0 && ck.len != VAULT_KEY_BYTES) {
        snprintf(err, errlen, "customer_key: must be %d bytes", VAULT_KEY_BYTES);
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    grpc_status_code st = GRPC_STATUS_INTERNAL;
    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES];
    char wrapped_hex[2 * VAULT_WRAPPED_KEY_BYTES + 1];
    unsigned char *data_key = secmem_alloc(VAULT_KEY_BYTES);
    if (!data_key || RAND_bytes(data_key, VAULT_KEY_BYTES) != 1 ||
        crypto_wrap_key(ck.len ? ck.data : v->master_key, project_id, data_key, wrapped) < 0) {
        snprintf(err, errlen, "cannot create a data key");
        goto out;
    }
    hex_encode(wrapped, sizeof(wrapped), wrapped_hex);
    const char *params[] = { project_id, ck.len ? "customer" : "master", wrapped_hex,
                             actor };
    /* The key and its audit row land together. */
    PGresult *res = db_query(&v->db,
                             "WITH p AS (INSERT INTO vault_projects (project_id, key_source,"
                             "  wrapped_key) VALUES ($1, $2, decode($3, 'hex'))"
                             "  ON CONFLICT DO NOTHING RETURNING project_id),"
                             " a AS (INSERT INTO vault_audit (actor, action, project_id, status)"
                             "  SELECT $4, 'register_project', project_id, 'OK' FROM p)"
                             " SELECT 1 FROM p",
                             4, params, err, errlen);
    if (!res)
        goto out;
    st = PQntuples(res) == 1 ? GRPC_STATUS_OK : GRPC_STATUS_ALREADY_EXISTS;
    if (st == GRPC_STATUS_ALREADY_EXISTS)
        snprintf(err, errlen, "project %s is registered already", project_id);
    else
        log_info("project key created", "project=%s byok=%d", project_id, ck.len != 0);
    PQclear(res);
out:
    secmem_free(data_key, VAULT_KEY_BYTES);
    return st;
}

/* The project's key source and wrapped key; NOT_FOUND when none. */
static grpc_status_code load_wrapped(struct vault *v, const char *project_id, bool *byok,
                                     unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES], char *err,
                                     size_t errlen)
{
    const char *params[] = { project_id };
    PGresult *res = db_query(&v->db,
                             "SELECT key_source, encode(wrapped_key, 'hex') FROM vault_projects"
                             " WHERE project_id = $1",
                             1, params, err, errlen);
    if (!res)
        return GRPC_STATUS_INTERNAL;
    grpc_status_code st = GRPC_STATUS_OK;
    if (PQntuples(res) == 0) {
        snprintf(err, errlen, "project %s has no secrets", project_id);
        st = GRPC_STATUS_NOT_FOUND;
    } else if (hex_decode(PQgetvalue(res, 0, 1), wrapped, VAULT_WRAPPED_KEY_BYTES) < 0) {
        snprintf(err, errlen, "project %s: stored data key is malformed", project_id);
        st = GRPC_STATUS_INTERNAL;
    } else {
        *byok = strcmp(PQgetvalue(res, 0, 0), "customer") == 0;
    }
    PQclear(res);
    return st;
}

grpc_status_code project_data_key(struct vault *v, const char *project_id, struct customer_key ck,
                                  bool register_missing, const char *actor, unsigned char *key,
                                  char *err, size_t errlen)
{
    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES];
    bool byok = false;
    grpc_status_code st = load_wrapped(v, project_id, &byok, wrapped, err, errlen);
    if (st == GRPC_STATUS_NOT_FOUND && register_missing) {
        st = project_register(v, project_id, ck, actor, err, errlen);
        /* ALREADY_EXISTS: another request registered it meanwhile. */
        if (st == GRPC_STATUS_OK || st == GRPC_STATUS_ALREADY_EXISTS)
            st = load_wrapped(v, project_id, &byok, wrapped, err, errlen);
    }
    if (st != GRPC_STATUS_OK)
        return st;
    if (!byok && ck.len) {
        snprintf(err, errlen,
                 "project %s uses vault's master key, not a customer key: send no customer_key",
                 project_id);
        return GRPC_STATUS_FAILED_PRECONDITION;
    }
    if (byok && ck.len != VAULT_KEY_BYTES) {
        snprintf(err, errlen,
                 "project %s encrypts with its own key (BYOK): customer_key (%d bytes) is required",
                 project_id, VAULT_KEY_BYTES);
        return GRPC_STATUS_FAILED_PRECONDITION;
    }
    if (crypto_unwrap_key(byok ? ck.data : v->master_key, project_id, wrapped, key) < 0) {
        if (byok) {
            snprintf(err, errlen, "project %s: customer_key is wrong (it does not unwrap the "
                     "project's data key); nothing was decrypted", project_id);
            return GRPC_STATUS_FAILED_PRECONDITION;
        }
        snprintf(err, errlen, "project %s: the master key does not unwrap the data key "
                 "(another --master-key-file?)", project_id);
        return GRPC_STATUS_INTERNAL;
    }
    return GRPC_STATUS_OK;
}
