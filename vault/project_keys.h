/* Per-project data keys: 32 random bytes that encrypt the project's
 * secrets, stored only wrapped — by the master key, or by the project's
 * customer key (BYOK), which vault never stores. */
#ifndef AIRLOCK_VAULT_PROJECT_KEYS_H
#define AIRLOCK_VAULT_PROJECT_KEYS_H

#include <stdbool.h>

#include "vault.h"

/* A customer key as a request carries it: none (len 0) or 32 bytes. */
struct customer_key {
    const unsigned char *data;
    size_t len;
};

/* Creates project_id's data key, wrapped by ck when given (BYOK), else by
 * the master key; audited. ALREADY_EXISTS when it has one. */
grpc_status_code project_register(struct vault *v, const char *project_id,
                                  struct customer_key ck, const char *actor, char *err,
                                  size_t errlen);

/* Unwraps project_id's data key into key (VAULT_KEY_BYTES, locked memory).
 * A project without a key gets one first when register_missing, else
 * NOT_FOUND. FAILED_PRECONDITION when a BYOK project's key is missing or
 * does not unwrap its data key. */
grpc_status_code project_data_key(struct vault *v, const char *project_id, struct customer_key ck,
                                  bool register_missing, const char *actor, unsigned char *key,
                                  char *err, size_t errlen);

#endif
