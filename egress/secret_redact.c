#include "secret_redact.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#define MASK_BYTE '*'

int secret_redactor_init(struct secret_redactor *r, const uint8_t *secret, size_t len,
                         size_t max_piece)
{
    memset(r, 0, sizeof(*r));
    if (len == 0)
        return -1;
    r->secret = secret;
    r->len = len;
    r->cap = len + max_piece;
    r->fail = calloc(len, sizeof(*r->fail));
    r->buf = malloc(r->cap);
    if (!r->fail || !r->buf) {
        secret_redactor_free(r);
        return -1;
    }
    /* fail[i]: the longest proper prefix of secret[0..i] that is also its
     * suffix. */
    for (size_t i = 1, k = 0; i < len; i++) {
        while (k && secret[i] != secret[k])
            k = r->fail[k - 1];
        if (secret[i] == secret[k])
            k++;
        r->fail[i] = k;
    }
    return 0;
}

void secret_redactor_free(struct secret_redactor *r)
{
    /* The failure function says much about the secret's shape. */
    if (r->fail)
        OPENSSL_cleanse(r->fail, r->len * sizeof(*r->fail));
    if (r->buf)
        OPENSSL_cleanse(r->buf, r->cap);
    free(r->buf);
    free(r->fail);
    r->buf = NULL;
    r->fail = NULL;
}

void secret_redactor_push(struct secret_redactor *r, const uint8_t *piece, size_t len,
                          const uint8_t **out, size_t *out_len)
{
    /* What the last call held back moves to the front. */
    memmove(r->buf, r->buf + r->sent, r->held);
    if (len > r->cap - r->held)
        len = r->cap - r->held; /* callers push at most max_piece */
    memcpy(r->buf + r->held, piece, len);
    size_t total = r->held + len;
    for (size_t i = r->held; i < total; i++) {
        size_t k = r->matched;
        while (k && r->buf[i] != r->secret[k])
            k = r->fail[k - 1];
        if (r->buf[i] == r->secret[k])
            k++;
        if (k == r->len) {
            /* Every byte of it is still in buf: a partial match is held. */
            memset(r->buf + i + 1 - r->len, MASK_BYTE, r->len);
            r->masked++;
            k = 0;
        }
        r->matched = k;
    }
    /* Held: the bytes that may still become the secret. */
    r->held = r->matched;
    r->sent = total - r->held;
    *out = r->buf;
    *out_len = r->sent;
}

void secret_redactor_finish(struct secret_redactor *r, const uint8_t **out, size_t *out_len)
{
    memmove(r->buf, r->buf + r->sent, r->held);
    *out = r->buf;
    *out_len = r->held;
    r->sent = r->held;
    r->held = 0;
    r->matched = 0;
}

unsigned secret_mask(uint8_t *buf, size_t len, const uint8_t *secret, size_t slen)
{
    unsigned n = 0;
    uint8_t *p = buf, *end = buf + len;
    while (slen && (size_t)(end - p) >= slen && (p = memmem(p, (size_t)(end - p), secret, slen))) {
        memset(p, MASK_BYTE, slen);
        p += slen;
        n++;
    }
    return n;
}
