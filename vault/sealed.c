#include "sealed.h"

#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "secmem.h"

int sealed_row_load(const PGresult *res, int row, struct sealed_row *s, struct airlock_error *e)
{
    memset(s, 0, sizeof(*s));
    const char *id = PQgetvalue(res, row, SEALED_ID);
    s->f.id = id;
    s->f.project_id = PQgetvalue(res, row, SEALED_PROJECT);
    s->f.org_id = PQgetvalue(res, row, SEALED_ORG);
    s->f.sandbox_id = PQgetvalue(res, row, SEALED_SANDBOX);
    s->f.allow_plaintext = strcmp(PQgetvalue(res, row, SEALED_PLAINTEXT), "t") == 0;
    s->aad_version = atoi(PQgetvalue(res, row, SEALED_AAD_VERSION));
    s->nonce_hex = PQgetvalue(res, row, SEALED_NONCE);
    s->ct_hex = PQgetvalue(res, row, SEALED_CT);
    s->tag_hex = PQgetvalue(res, row, SEALED_TAG);
    int n = PQntuples(res);
    s->f.bindings = calloc((size_t)n, sizeof(*s->f.bindings));
    if (!s->f.bindings)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    for (int i = 0; i < n; i++) {
        if (strcmp(PQgetvalue(res, i, SEALED_ID), id) != 0)
            continue;
        s->f.bindings[s->f.n_bindings].host_pattern = PQgetvalue(res, i, SEALED_PATTERN);
        s->f.bindings[s->f.n_bindings++].injection_rule = PQgetvalue(res, i, SEALED_RULE);
    }
    return 0;
}

void sealed_row_clear(struct sealed_row *s)
{
    free(s->f.bindings);
    memset(s, 0, sizeof(*s));
}

int sealed_row_open(struct sealed_row *s, const unsigned char *key, unsigned char **pt,
                    size_t *len, struct airlock_error *e)
{
    int rc = -1;
    size_t n = strlen(s->ct_hex) / 2;
    unsigned char nonce[VAULT_NONCE_BYTES], tag[VAULT_TAG_BYTES];
    unsigned char *ct = malloc(n ? n : 1), *out = secmem_alloc(n ? n : 1);
    char *aad = secret_aad(&s->f, s->aad_version);
    if (!ct || !out || !aad) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        goto out;
    }
    if (hex_decode(s->ct_hex, ct, n) < 0 || hex_decode(s->nonce_hex, nonce, sizeof(nonce)) < 0 ||
        hex_decode(s->tag_hex, tag, sizeof(tag)) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS, "secret %s: stored ciphertext is malformed",
                          s->f.id);
        goto out;
    }
    if (crypto_open(key, aad, nonce, ct, n, tag, out) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS,
                          "secret %s does not decrypt: its row (owner, scope, bindings or rule) "
                          "was changed outside vault, or its ciphertext is damaged; refused, "
                          "nothing was decrypted (delete and create it again)", s->f.id);
        goto out;
    }
    *pt = out;
    *len = n;
    out = NULL;
    rc = 0;
out:
    secmem_free(out, n ? n : 1);
    free(aad);
    free(ct);
    return rc;
}

int sealed_seal(struct secret_aad_fields *f, const unsigned char *key, const unsigned char *pt,
                size_t len, unsigned char nonce[VAULT_NONCE_BYTES], unsigned char *ct,
                unsigned char tag[VAULT_TAG_BYTES], struct airlock_error *e)
{
    char *aad = secret_aad(f, SECRET_AAD_VERSION);
    int rc = aad ? crypto_seal(key, aad, pt, len, nonce, ct, tag) : -1;
    free(aad);
    return rc < 0 ? airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "encryption failed") : 0;
}
