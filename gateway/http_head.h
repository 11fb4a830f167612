/* The head of an HTTP/1.x request (request line and headers) as read
 * ahead from a connection, parsed by Debian's http-parser (nodejs's,
 * libhttp-parser) rather than by hand: the ingress routes a connection
 * by it before anything else reads it (ingress.h). */
#ifndef AIRLOCK_GATEWAY_HTTP_HEAD_H
#define AIRLOCK_GATEWAY_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_HEAD_MAX_HEADERS 100

struct http_head_field {
    const char *name, *value; /* into the parsed buffer, not terminated */
    size_t name_len, value_len;
};

struct http_head {
    const char *target; /* the request target ("/path?query") */
    size_t target_len;
    struct http_head_field headers[HTTP_HEAD_MAX_HEADERS];
    size_t n_headers;
};

enum http_head_status {
    HTTP_HEAD_COMPLETE,
    HTTP_HEAD_INCOMPLETE, /* the empty line that ends the head is not in buf yet */
    HTTP_HEAD_INVALID,    /* not an HTTP/1.x request (or too many headers) */
};

/* Parses buf[0..len); fields point into buf. */
enum http_head_status http_head_parse(const char *buf, size_t len, struct http_head *h);

/* The value of header name (case-insensitive) into out, NUL-terminated;
 * false when absent or longer than outlen - 1. */
bool http_head_get(const struct http_head *h, const char *name, char *out, size_t outlen);

/* The value of query parameter name of the target (no percent-decoding:
 * the ingress's own parameters are plain) into out; false when absent. */
bool http_head_query(const struct http_head *h, const char *name, char *out, size_t outlen);

/* The value of cookie name in the Cookie header into out; false when
 * absent. */
bool http_head_cookie(const struct http_head *h, const char *name, char *out, size_t outlen);

#endif
