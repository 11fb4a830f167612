#include "project_keys.h"

#include <openssl/rand.h>
#include <string.h>

#include "audit.h"
#include "clock.h"
#include "crypto.h"
#include "hex.h"
#include "log.h"
#include "reseal.h"
#include "secmem.h"

int project_register(struct vault *v, const char *project_id, struct customer_key ck,
                     const char *actor, struct airlock_error *e)
{
    if (ck.len != 0 && ck.len != VAULT_KEY_BYTES)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "customer_key: must be %d bytes",
                                 VAULT_KEY_BYTES);
    int rc = -1;
    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES];
    char wrapped_hex[2 * VAULT_WRAPPED_KEY_BYTES + 1];
    unsigned char *data_key = secmem_alloc(VAULT_KEY_BYTES);
    if (!data_key || RAND_bytes(data_key, VAULT_KEY_BYTES) != 1 ||
        crypto_wrap_key(ck.len ? ck.data : v->master_key, "project", project_id, data_key,
                        wrapped) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot create a data key");
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
                             4, params, AIRLOCK_ERROR_MSG(e));
    if (!res) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto out;
    }
    if (PQntuples(res) == 1) {
        rc = 0;
        log_info("project key created", "project=%s byok=%d", project_id, ck.len != 0);
    } else {
        airlock_error_set(e, AIRLOCK_ERR_EXISTS, "project %s is registered already", project_id);
    }
    PQclear(res);
out:
    secmem_free(data_key, VAULT_KEY_BYTES);
    return rc;
}

/* The project's key source and wrapped key; not found when none. */
static int load_wrapped(struct vault *v, const char *project_id, bool *byok,
                        unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES], struct airlock_error *e)
{
    const char *params[] = { project_id };
    PGresult *res = db_query(&v->db,
                             "SELECT key_source, encode(wrapped_key, 'hex') FROM vault_projects"
                             " WHERE project_id = $1",
                             1, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    int rc = 0;
    if (PQntuples(res) == 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "project %s has no secrets", project_id);
    else if (hex_decode(PQgetvalue(res, 0, 1), wrapped, VAULT_WRAPPED_KEY_BYTES) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL,
                               "project %s: stored data key is malformed", project_id);
    else
        *byok = strcmp(PQgetvalue(res, 0, 0), "customer") == 0;
    PQclear(res);
    return rc;
}

static int check_key_size(struct customer_key ck, struct airlock_error *e)
{
    if (ck.len == VAULT_KEY_BYTES)
        return 0;
    return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                             "customer_key: must be %d bytes (a 256-bit key), got %zu",
                             VAULT_KEY_BYTES, ck.len);
}

int project_data_key(struct vault *v, const char *project_id, struct customer_key ck,
                     bool register_missing, const char *actor, unsigned char *key,
                     struct airlock_error *e)
{
    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES];
    bool byok = false;
    int rc = load_wrapped(v, project_id, &byok, wrapped, e);
    if (rc < 0 && e->class == AIRLOCK_ERR_NOT_FOUND && register_missing) {
        rc = project_register(v, project_id, ck, actor, e);
        /* Exists: another request registered it meanwhile. */
        if (rc == 0 || e->class == AIRLOCK_ERR_EXISTS)
            rc = load_wrapped(v, project_id, &byok, wrapped, e);
    }
    if (rc < 0)
        return -1;
    if (!byok && ck.len)
        return airlock_error_set(
            e, AIRLOCK_ERR_STATE,
            "project %s uses vault's master key, not a customer key: send no customer_key",
            project_id);
    if (byok && ck.len == 0) {
        if (unlocked_keys_get(&v->unlocked, project_id, clock_monotonic_ms(), key))
            return 0;
        return airlock_error_set(
            e, AIRLOCK_ERR_STATE,
            "project %s encrypts with its own key (BYOK) and is locked: unlock it with its "
            "customer_key (UnlockProject; REST POST /v1/secrets/unlock) or send the "
            "customer_key; nothing was decrypted", project_id);
    }
    if (byok && check_key_size(ck, e) < 0)
        return -1;
    if (crypto_unwrap_key(byok ? ck.data : v->master_key, "project", project_id, wrapped, key) <
        0) {
        if (byok)
            return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                     "project %s: customer_key is wrong (it does not unwrap the "
                                     "project's data key); nothing was decrypted", project_id);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL,
                                 "project %s: the master key does not unwrap the data key "
                                 "(another --master-key-file?)", project_id);
    }
    return 0;
}

/* Unwraps a BYOK project's data key with ck; the failures of UnlockProject. */
static int unwrap_for_unlock(struct vault *v, const char *project_id, struct customer_key ck,
                             unsigned char *key, struct airlock_error *e)
{
    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES];
    bool byok = false;
    if (load_wrapped(v, project_id, &byok, wrapped, e) < 0) {
        if (e->class == AIRLOCK_ERR_NOT_FOUND)
            airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND,
                              "project %s has no key in vault (no secret, never registered): "
                              "nothing to unlock", project_id);
        return -1;
    }
    if (!byok)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "project %s uses vault's master key, not a customer key (BYOK): "
                                 "there is nothing to unlock", project_id);
    if (crypto_unwrap_key(ck.data, "project", project_id, wrapped, key) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "project %s: customer_key is wrong (it does not unwrap the "
                                 "project's data key); nothing was decrypted, the project stays "
                                 "locked", project_id);
    return 0;
}

/* An unlock or lock on record, ended as outcome says (NULL: OK). */
static int audit_key_event(struct vault *v, const char *action, const char *project_id,
                           const char *actor, const struct airlock_error *outcome,
                           struct airlock_error *e)
{
    struct audit_event ev = { .actor = actor, .action = action, .project_id = project_id,
                              .outcome = outcome };
    return vault_audit(v, &ev, e);
}

int project_unlock(struct vault *v, const char *project_id, struct customer_key ck,
                   uint32_t ttl_s, const char *actor, int64_t *expires_unix_ms,
                   struct airlock_error *e)
{
    if (vault_check_id("project_id", project_id, true, e) < 0 || check_key_size(ck, e) < 0)
        return -1;
    if (ttl_s > PROJECT_UNLOCK_MAX_TTL_S)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "ttl_s: at most %d (a day); 0 = %d",
                                 PROJECT_UNLOCK_MAX_TTL_S, PROJECT_UNLOCK_DEFAULT_TTL_S);
    if (ttl_s == 0)
        ttl_s = PROJECT_UNLOCK_DEFAULT_TTL_S;
    unsigned char *key = secmem_alloc(VAULT_KEY_BYTES);
    if (!key)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot lock memory for a key");
    int rc = unwrap_for_unlock(v, project_id, ck, key, e);
    if (rc == 0 && unlocked_keys_put(&v->unlocked, project_id, key,
                                     clock_monotonic_ms() + (int64_t)ttl_s * 1000) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL,
                               "cannot lock memory for the project's key");
    /* The first time since start vault holds this key: the project's old
     * rows get the full AAD. */
    if (rc == 0)
        reseal_owner(v, project_id, "", key);
    secmem_free(key, VAULT_KEY_BYTES);
    /* A project that does not exist leaves no row (nothing happened to it). */
    if ((rc == 0 || e->class != AIRLOCK_ERR_NOT_FOUND) &&
        audit_key_event(v, "unlock_project", project_id, actor, rc == 0 ? NULL : e, e) < 0) {
        /* An unlock that is not on record does not happen. */
        unlocked_keys_drop(&v->unlocked, project_id, clock_monotonic_ms());
        return -1;
    }
    if (rc == 0) {
        *expires_unix_ms = clock_realtime_ms() + (int64_t)ttl_s * 1000;
        log_info("project unlocked", "project=%s ttl_s=%u actor=%s", project_id, ttl_s, actor);
    }
    return rc;
}

int project_lock(struct vault *v, const char *project_id, const char *actor, bool *was_unlocked,
                 struct airlock_error *e)
{
    if (vault_check_id("project_id", project_id, true, e) < 0)
        return -1;
    *was_unlocked = unlocked_keys_drop(&v->unlocked, project_id, clock_monotonic_ms());
    if (audit_key_event(v, "lock_project", project_id, actor, NULL, e) < 0)
        return -1;
    log_info("project locked", "project=%s was_unlocked=%d actor=%s", project_id,
             *was_unlocked, actor);
    return 0;
}
