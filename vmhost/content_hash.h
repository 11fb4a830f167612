/* SHA-256 content hash of a list of inputs (OpenSSL EVP): image and probe cache keys.
 *
 * Each input is added with a label and its length, so that two different
 * input lists can never produce the same byte stream. */
#ifndef AIRLOCK_CONTENT_HASH_H
#define AIRLOCK_CONTENT_HASH_H

#include <stddef.h>

struct content_hash {
    void *ctx; /* EVP_MD_CTX */
};

int content_hash_init(struct content_hash *h, char *err, size_t errlen);
void content_hash_add(struct content_hash *h, const char *label, const void *data, size_t len);
void content_hash_add_str(struct content_hash *h, const char *label, const char *s);
int content_hash_add_file(struct content_hash *h, const char *label, const char *path, char *err,
                        size_t errlen);
/* Writes 64 hex digits + NUL and frees the context. */
void content_hash_final(struct content_hash *h, char hex[65]);
/* Frees the context without a result (error paths); safe after final. */
void content_hash_free(struct content_hash *h);

#endif
