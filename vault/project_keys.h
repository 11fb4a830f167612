/* Per-project data keys: 32 random bytes that encrypt the project's
 * secrets, stored only wrapped — by the master key, or by the project's
 * customer key (BYOK), which vault never stores. */
#ifndef AIRLOCK_VAULT_PROJECT_KEYS_H
#define AIRLOCK_VAULT_PROJECT_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "vault.h"

/* A customer key as a request carries it: none (len 0) or 32 bytes. */
struct customer_key {
    const unsigned char *data;
    size_t len;
};

/* Creates project_id's data key, wrapped by ck when given (BYOK), else by
 * the master key; audited. AIRLOCK_ERR_EXISTS when it has one. */
int project_register(struct vault *v, const char *project_id, struct customer_key ck,
                     const char *actor, struct airlock_error *e);

/* Unwraps project_id's data key into key (VAULT_KEY_BYTES, locked memory).
 * A project without a key gets one first when register_missing, else
 * not found. A BYOK project without ck uses its unlocked key;
 * AIRLOCK_ERR_STATE when it is locked or ck does not unwrap its data key,
 * invalid when ck is not 32 bytes. */
int project_data_key(struct vault *v, const char *project_id, struct customer_key ck,
                     bool register_missing, const char *actor, unsigned char *key,
                     struct airlock_error *e);

#define PROJECT_UNLOCK_DEFAULT_TTL_S 3600
#define PROJECT_UNLOCK_MAX_TTL_S 86400

/* UnlockProject: checks ck against the BYOK project's wrapped data key and
 * holds the data key (not ck) for ttl_s seconds (0 = the default); audited,
 * the customer key never. *expires_unix_ms on 0. */
int project_unlock(struct vault *v, const char *project_id, struct customer_key ck,
                   uint32_t ttl_s, const char *actor, int64_t *expires_unix_ms,
                   struct airlock_error *e);

/* LockProject: zeroes and forgets the project's unlocked key; audited. */
int project_lock(struct vault *v, const char *project_id, const char *actor, bool *was_unlocked,
                 struct airlock_error *e);

#endif
