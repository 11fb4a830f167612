/* Follows the requests a guest sends on one plaintext HTTP/1.x connection,
 * so that every request is checked, not only the first: a kept-alive or
 * pipelined second request naming another host is refused like a first
 * one would be. Request heads are found by tracking each body's length
 * (http_msg.h: Content-Length or chunked); anything that would let egress
 * and a server disagree on where a request starts (both lengths, a
 * transfer coding other than chunked, broken chunk framing, a head over
 * 16 KiB) is refused. The bytes of a head are held back until the whole
 * head has been checked. Pure: no I/O, fuzzed by tests/fuzz. */
#ifndef AIRLOCK_EGRESS_HTTP_FOLLOW_H
#define AIRLOCK_EGRESS_HTTP_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decides one request: name is its normalized Host, NULL when it has
 * none. true lets it through. */
typedef bool (*http_follow_check_fn)(void *ctx, const char *name);

enum http_follow_result {
    HTTP_FOLLOW_OK,
    HTTP_FOLLOW_DENIED,    /* the check refused a request */
    HTTP_FOLLOW_MALFORMED, /* framing egress will not guess at */
};

struct http_follow;

/* NULL when out of memory. */
struct http_follow *http_follow_new(http_follow_check_fn check, void *ctx);
void http_follow_free(struct http_follow *f);

/* Feeds the next len bytes the guest sent. On OK *ready is how many of the
 * bytes not yet forwarded (those held back by earlier calls, then these)
 * may go upstream now; the rest begin a request head that is not complete
 * yet and must be kept for the next call. Anything but OK ends the
 * connection. */
enum http_follow_result http_follow_feed(struct http_follow *f, const uint8_t *data, size_t len,
                                         size_t *ready);

/* Bytes currently held back (a partial head). */
size_t http_follow_held(const struct http_follow *f);

/* Feeds the first bytes of the server's answer. Only a "101 Switching
 * Protocols" answer to an Upgrade request that opened the connection
 * stops the following (the connection is no longer HTTP); an upgrade
 * anywhere else is followed as HTTP and so fails closed. */
void http_follow_response(struct http_follow *f, const uint8_t *data, size_t len);

#endif
