/* The AAD of a secret's ciphertext, computed here only (seal and open).
 * Version 2 covers everything that decides where the value goes and for
 * whom, so a row edited in PostgreSQL no longer decrypts: the id, the
 * owner (project or org), the scope (sandbox), plain HTTP allowed or not,
 * and every binding (host pattern, injection rule). Version 1, what vault
 * wrote before, covered the id alone; such rows are re-sealed as version
 * 2 when vault holds their key (reseal.h). */
#ifndef AIRLOCK_VAULT_SECRET_AAD_H
#define AIRLOCK_VAULT_SECRET_AAD_H

#include <stdbool.h>
#include <stddef.h>

#define SECRET_AAD_VERSION 2

struct secret_binding {
    const char *host_pattern, *injection_rule;
};

/* A secret as its AAD sees it; "" for an owner or scope it has not. */
struct secret_aad_fields {
    const char *id, *project_id, *org_id, *sandbox_id;
    bool allow_plaintext;
    struct secret_binding *bindings; /* sorted in place by secret_aad */
    size_t n_bindings;
};

/* Version 1: "airlock-vault/secret/<id>". Version 2:
 * "airlock-vault/secret/v2/" then netstrings ("<length>:<bytes>,") of id,
 * project_id, org_id, sandbox_id, "1"/"0" (plaintext allowed), the number
 * of bindings, and each binding's host pattern and rule in byte order of
 * the pattern (unique per secret): one encoding per row, whatever order
 * the database returned the bindings in. malloc'd; NULL when out of
 * memory or version is unknown. */
char *secret_aad(struct secret_aad_fields *f, int version);

#endif
