/* A secret's ciphertext with what its AAD covers, as read from the
 * database, and the one seal and open of a secret's value. */
#ifndef AIRLOCK_VAULT_SEALED_H
#define AIRLOCK_VAULT_SEALED_H

#include <libpq-fe.h>

#include "airlock_error.h"
#include "crypto.h"
#include "secret_aad.h"

/* The columns sealed_row_load reads, first in a query's select list over
 * vault_secrets s JOIN vault_bindings b (one row per binding). */
#define SEALED_COLUMNS                                                                         \
    "s.id, coalesce(s.project_id, ''), coalesce(s.org_id, ''), s.sandbox_id,"                  \
    " s.allow_plaintext, s.aad_version, encode(s.nonce, 'hex'),"                               \
    " encode(s.ciphertext, 'hex'), encode(s.tag, 'hex'), b.host_pattern, b.injection_rule"
enum {
    SEALED_ID, SEALED_PROJECT, SEALED_ORG, SEALED_SANDBOX, SEALED_PLAINTEXT, SEALED_AAD_VERSION,
    SEALED_NONCE, SEALED_CT, SEALED_TAG, SEALED_PATTERN, SEALED_RULE, SEALED_N_COLUMNS
};

struct sealed_row {
    struct secret_aad_fields f; /* strings point into the result */
    int aad_version;
    const char *nonce_hex, *ct_hex, *tag_hex;
};

/* The secret of res's row with all its bindings: every row of res with
 * the same id (the query must return all of a secret's bindings, which a
 * WHERE on vault_secrets' columns alone does). Valid while res is; -1
 * with e internal when out of memory. sealed_row_clear after. */
int sealed_row_load(const PGresult *res, int row, struct sealed_row *s, struct airlock_error *e);
void sealed_row_clear(struct sealed_row *s);

/* Decrypts s under key with the AAD of its version into *pt (locked
 * memory, *len bytes: secmem_free(*pt, *len ? *len : 1)). A tag that does
 * not verify — the row was edited outside vault, or its ciphertext is
 * damaged — is DATA_LOSS naming the secret, and nothing is decrypted. */
int sealed_row_open(struct sealed_row *s, const unsigned char *key, unsigned char **pt,
                    size_t *len, struct airlock_error *e);

/* Encrypts pt for the secret f describes with the current AAD version
 * (SECRET_AAD_VERSION); ct has len bytes. -1 with e internal. */
int sealed_seal(struct secret_aad_fields *f, const unsigned char *key, const unsigned char *pt,
                size_t len, unsigned char nonce[VAULT_NONCE_BYTES], unsigned char *ct,
                unsigned char tag[VAULT_TAG_BYTES], struct airlock_error *e);

#endif
