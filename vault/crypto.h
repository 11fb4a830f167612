/* AES-256-GCM through OpenSSL EVP: secrets under a project's data key, and
 * data keys under the master key or a customer's key. The AAD binds each
 * ciphertext to what it belongs to (a project id; a secret's id, owner,
 * scope and bindings: secret_aad.h), so a row copied onto another, or
 * edited, cannot be decrypted there. */
#ifndef AIRLOCK_VAULT_CRYPTO_H
#define AIRLOCK_VAULT_CRYPTO_H

#include <stddef.h>

#define VAULT_KEY_BYTES 32
#define VAULT_NONCE_BYTES 12
#define VAULT_TAG_BYTES 16
/* A wrapped data key: nonce || ciphertext || tag. */
#define VAULT_WRAPPED_KEY_BYTES (VAULT_NONCE_BYTES + VAULT_KEY_BYTES + VAULT_TAG_BYTES)

/* Encrypts len bytes of pt into ct (len bytes) with a fresh random nonce.
 * 0 or -1. */
int crypto_seal(const unsigned char key[VAULT_KEY_BYTES], const char *aad, const unsigned char *pt,
                size_t len, unsigned char nonce[VAULT_NONCE_BYTES], unsigned char *ct,
                unsigned char tag[VAULT_TAG_BYTES]);

/* Decrypts into pt (len bytes); -1 when the tag does not verify (wrong key,
 * wrong AAD or tampering), and then pt holds nothing. */
int crypto_open(const unsigned char key[VAULT_KEY_BYTES], const char *aad,
                const unsigned char nonce[VAULT_NONCE_BYTES], const unsigned char *ct, size_t len,
                const unsigned char tag[VAULT_TAG_BYTES], unsigned char *pt);

/* Data-key wrapping, AAD "airlock-vault/<owner_kind>/<owner_id>" (kind
 * "project" or "org"). */
int crypto_wrap_key(const unsigned char kek[VAULT_KEY_BYTES], const char *owner_kind,
                    const char *owner_id, const unsigned char key[VAULT_KEY_BYTES],
                    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES]);
int crypto_unwrap_key(const unsigned char kek[VAULT_KEY_BYTES], const char *owner_kind,
                      const char *owner_id,
                      const unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES],
                      unsigned char key[VAULT_KEY_BYTES]);

#endif
