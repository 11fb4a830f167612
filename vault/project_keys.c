#include "project_keys.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "clock.h"
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
        crypto_wrap_key(ck.len ? ck.data : v->master_key, "project", project_id, data_key,
                        wrapped) < 0) {
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

static int check_key_size(struct customer_key ck, char *err, size_t errlen)
{
    if (ck.len == VAULT_KEY_BYTES)
        return 0;
    snprintf(err, errlen, "customer_key: must be %d bytes (a 256-bit key), got %zu",
             VAULT_KEY_BYTES, ck.len);
    return -1;
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
    if (byok && ck.len == 0) {
        if (unlocked_keys_get(&v->unlocked, project_id, clock_monotonic_ms(), key))
            return GRPC_STATUS_OK;
        snprintf(err, errlen,
                 "project %s encrypts with its own key (BYOK) and is locked: unlock it with its "
                 "customer_key (UnlockProject; REST POST /v1/secrets/unlock) or send the "
                 "customer_key; nothing was decrypted", project_id);
        return GRPC_STATUS_FAILED_PRECONDITION;
    }
    if (byok && check_key_size(ck, err, errlen) < 0)
        return GRPC_STATUS_INVALID_ARGUMENT;
    if (crypto_unwrap_key(byok ? ck.data : v->master_key, "project", project_id, wrapped, key) <
        0) {
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

/* Unwraps a BYOK project's data key with ck; the statuses of UnlockProject. */
static grpc_status_code unwrap_for_unlock(struct vault *v, const char *project_id,
                                          struct customer_key ck, unsigned char *key, char *err,
                                          size_t errlen)
{
    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES];
    bool byok = false;
    grpc_status_code st = load_wrapped(v, project_id, &byok, wrapped, err, errlen);
    if (st == GRPC_STATUS_NOT_FOUND)
        snprintf(err, errlen, "project %s has no key in vault (no secret, never registered): "
                 "nothing to unlock", project_id);
    if (st != GRPC_STATUS_OK)
        return st;
    if (!byok) {
        snprintf(err, errlen, "project %s uses vault's master key, not a customer key (BYOK): "
                 "there is nothing to unlock", project_id);
        return GRPC_STATUS_FAILED_PRECONDITION;
    }
    if (crypto_unwrap_key(ck.data, "project", project_id, wrapped, key) < 0) {
        snprintf(err, errlen, "project %s: customer_key is wrong (it does not unwrap the "
                 "project's data key); nothing was decrypted, the project stays locked",
                 project_id);
        return GRPC_STATUS_FAILED_PRECONDITION;
    }
    return GRPC_STATUS_OK;
}

/* An unlock or lock on record; -1 (with err) when the row cannot be
 * written. */
static int audit_key_event(struct vault *v, const char *action, const char *project_id,
                           const char *actor, grpc_status_code st, char *err, size_t errlen)
{
    struct audit_event e = { .actor = actor, .action = action, .project_id = project_id,
                             .status = st };
    char audit_err[256];
    if (vault_audit(v, &e, audit_err, sizeof(audit_err)) == 0)
        return 0;
    log_error("audit append failed", "error=\"%s\"", audit_err);
    snprintf(err, errlen, "audit log unavailable: %s", audit_err);
    return -1;
}

grpc_status_code project_unlock(struct vault *v, const char *project_id, struct customer_key ck,
                                uint32_t ttl_s, const char *actor, int64_t *expires_unix_ms,
                                char *err, size_t errlen)
{
    if (vault_check_id("project_id", project_id, true, err, errlen) < 0 ||
        check_key_size(ck, err, errlen) < 0)
        return GRPC_STATUS_INVALID_ARGUMENT;
    if (ttl_s > PROJECT_UNLOCK_MAX_TTL_S) {
        snprintf(err, errlen, "ttl_s: at most %d (a day); 0 = %d", PROJECT_UNLOCK_MAX_TTL_S,
                 PROJECT_UNLOCK_DEFAULT_TTL_S);
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    if (ttl_s == 0)
        ttl_s = PROJECT_UNLOCK_DEFAULT_TTL_S;
    unsigned char *key = secmem_alloc(VAULT_KEY_BYTES);
    if (!key) {
        snprintf(err, errlen, "cannot lock memory for a key");
        return GRPC_STATUS_INTERNAL;
    }
    grpc_status_code st = unwrap_for_unlock(v, project_id, ck, key, err, errlen);
    if (st == GRPC_STATUS_OK &&
        unlocked_keys_put(&v->unlocked, project_id, key,
                          clock_monotonic_ms() + (int64_t)ttl_s * 1000) < 0) {
        snprintf(err, errlen, "cannot lock memory for the project's key");
        st = GRPC_STATUS_INTERNAL;
    }
    secmem_free(key, VAULT_KEY_BYTES);
    /* A project that does not exist leaves no row (nothing happened to it). */
    if (st != GRPC_STATUS_NOT_FOUND &&
        audit_key_event(v, "unlock_project", project_id, actor, st, err, errlen) < 0) {
        /* An unlock that is not on record does not happen. */
        unlocked_keys_drop(&v->unlocked, project_id, clock_monotonic_ms());
        return GRPC_STATUS_INTERNAL;
    }
    if (st == GRPC_STATUS_OK) {
        *expires_unix_ms = clock_realtime_ms() + (int64_t)ttl_s * 1000;
        log_info("project unlocked", "project=%s ttl_s=%u actor=%s", project_id, ttl_s, actor);
    }
    return st;
}

grpc_status_code project_lock(struct vault *v, const char *project_id, const char *actor,
                              bool *was_unlocked, char *err, size_t errlen)
{
    if (vault_check_id("project_id", project_id, true, err, errlen) < 0)
        return GRPC_STATUS_INVALID_ARGUMENT;
    *was_unlocked = unlocked_keys_drop(&v->unlocked, project_id, clock_monotonic_ms());
    if (audit_key_event(v, "lock_project", project_id, actor, GRPC_STATUS_OK, err, errlen) < 0)
        return GRPC_STATUS_INTERNAL;
    log_info("project locked", "project=%s was_unlocked=%d actor=%s", project_id,
             *was_unlocked, actor);
    return GRPC_STATUS_OK;
}
