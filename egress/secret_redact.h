/* Keeps an injected secret out of what the upstream answers: an API that
 * echoes request headers (or an error that quotes the key) would otherwise
 * hand the agent the secret egress added for it. Every occurrence in the
 * response is masked with '*' of the same length, so Content-Length and
 * chunk sizes stay true. A response body arrives in pieces, so the bytes
 * that could begin an occurrence (the longest tail that is a prefix of
 * the secret, tracked with a KMP automaton) are held back until the next
 * piece or the end; anything else goes on at once, so streamed answers
 * (SSE) are not delayed. Best effort by nature: an upstream that encodes
 * the secret (compression, escaping, split over chunks) hides it from this
 * scan; http_inject.c asks for identity encoding and whole responses. */
#ifndef AIRLOCK_EGRESS_SECRET_REDACT_H
#define AIRLOCK_EGRESS_SECRET_REDACT_H

#include <stddef.h>
#include <stdint.h>

struct secret_redactor {
    const uint8_t *secret; /* not owned */
    size_t len;
    size_t *fail;          /* KMP failure function of the secret */
    uint8_t *buf;          /* held bytes, then the piece being pushed */
    size_t cap, held;
    size_t matched;        /* secret bytes matched at the end of buf */
    size_t sent;           /* bytes of buf handed out by the last call */
    unsigned masked;       /* occurrences masked so far */
};

/* For pieces of at most max_piece bytes. -1 when out of memory. */
int secret_redactor_init(struct secret_redactor *r, const uint8_t *secret, size_t len,
                         size_t max_piece);
/* Zeroes what it holds. */
void secret_redactor_free(struct secret_redactor *r);

/* Masks the next piece of the stream; out and out_len: the bytes that may go
 * on now (valid until the next call). */
void secret_redactor_push(struct secret_redactor *r, const uint8_t *piece, size_t len,
                          const uint8_t **out, size_t *out_len);
/* The end of the stream: what was held back. */
void secret_redactor_finish(struct secret_redactor *r, const uint8_t **out, size_t *out_len);

/* Masks every occurrence of secret in buf (a whole message head) in place;
 * returns how many. */
unsigned secret_mask(uint8_t *buf, size_t len, const uint8_t *secret, size_t slen);

#endif
