#include "crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

int crypto_seal(const unsigned char key[VAULT_KEY_BYTES], const char *aad, const unsigned char *pt,
                size_t len, unsigned char nonce[VAULT_NONCE_BYTES], unsigned char *ct,
                unsigned char tag[VAULT_TAG_BYTES])
{
    int rc = -1, n = 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx || RAND_bytes(nonce, VAULT_NONCE_BYTES) != 1 ||
        EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce) != 1 ||
        EVP_EncryptUpdate(ctx, NULL, &n, (const unsigned char *)aad, (int)strlen(aad)) != 1 ||
        EVP_EncryptUpdate(ctx, ct, &n, pt, (int)len) != 1 ||
        EVP_EncryptFinal_ex(ctx, ct + n, &n) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, VAULT_TAG_BYTES, tag) != 1)
        goto out;
    rc = 0;
out:
    EVP_CIPHER_CTX_free(ctx);
    return rc;
}

int crypto_open(const unsigned char key[VAULT_KEY_BYTES], const char *aad,
                const unsigned char nonce[VAULT_NONCE_BYTES], const unsigned char *ct, size_t len,
                const unsigned char tag[VAULT_TAG_BYTES], unsigned char *pt)
{
    int rc = -1, n = 0;
    unsigned char tag_copy[VAULT_TAG_BYTES];
    memcpy(tag_copy, tag, sizeof(tag_copy)); /* the ctrl call takes a non-const pointer */
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx || EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce) != 1 ||
        EVP_DecryptUpdate(ctx, NULL, &n, (const unsigned char *)aad, (int)strlen(aad)) != 1 ||
        EVP_DecryptUpdate(ctx, pt, &n, ct, (int)len) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, VAULT_TAG_BYTES, tag_copy) != 1 ||
        EVP_DecryptFinal_ex(ctx, pt + n, &n) != 1) {
        /* GCM releases plaintext before the tag is checked: unverified
         * bytes must not survive. */
        OPENSSL_cleanse(pt, len);
        goto out;
    }
    rc = 0;
out:
    EVP_CIPHER_CTX_free(ctx);
    return rc;
}

static void key_aad(char *aad, size_t len, const char *owner_kind, const char *owner_id)
{
    snprintf(aad, len, "airlock-vault/%s/%s", owner_kind, owner_id);
}

int crypto_wrap_key(const unsigned char kek[VAULT_KEY_BYTES], const char *owner_kind,
                    const char *owner_id, const unsigned char key[VAULT_KEY_BYTES],
                    unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES])
{
    char aad[256];
    key_aad(aad, sizeof(aad), owner_kind, owner_id);
    return crypto_seal(kek, aad, key, VAULT_KEY_BYTES, wrapped, wrapped + VAULT_NONCE_BYTES,
                       wrapped + VAULT_NONCE_BYTES + VAULT_KEY_BYTES);
}

int crypto_unwrap_key(const unsigned char kek[VAULT_KEY_BYTES], const char *owner_kind,
                      const char *owner_id,
                      const unsigned char wrapped[VAULT_WRAPPED_KEY_BYTES],
                      unsigned char key[VAULT_KEY_BYTES])
{
    char aad[256];
    key_aad(aad, sizeof(aad), owner_kind, owner_id);
    return crypto_open(kek, aad, wrapped, wrapped + VAULT_NONCE_BYTES, VAULT_KEY_BYTES,
                       wrapped + VAULT_NONCE_BYTES + VAULT_KEY_BYTES, key);
}
