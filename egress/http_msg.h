/* HTTP/1.x messages as egress sees them on the connections it intercepts
 * (hosts with a credential binding): the head of a request or response,
 * how its body is framed, and chunked framing scanned as it streams past.
 * Pure functions over bytes that never read past len and never allocate.
 * Strict wherever leniency could make a request mean one thing to egress
 * and another to the upstream (request smuggling): bare LF, folded lines,
 * control bytes, Content-Length with Transfer-Encoding, two lengths and
 * codings other than chunked are all refused. Fuzzed by tests/fuzz. */
#ifndef AIRLOCK_EGRESS_HTTP_MSG_H
#define AIRLOCK_EGRESS_HTTP_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HTTP_HEAD_MAX (64 * 1024)
#define HTTP_HEADERS_MAX 128
#define HTTP_METHOD_MAX 32
#define HTTP_TARGET_MAX 8192

/* A range of the buffer the head was parsed from. */
struct http_span {
    uint32_t off, len;
};

struct http_header {
    struct http_span name, value; /* value without surrounding blanks */
};

struct http_head {
    struct http_span method, target; /* requests */
    unsigned status;                 /* responses: 100..599 */
    unsigned minor;                  /* HTTP/1.<minor>: 0 or 1 */
    size_t n_headers;
    struct http_header headers[HTTP_HEADERS_MAX];
    size_t len;                      /* the head's bytes, blank line included */
};

enum http_result {
    HTTP_NEED_MORE, /* no blank line yet: read on */
    HTTP_COMPLETE,  /* h describes buf[0, h->len) */
    HTTP_MALFORMED,
    HTTP_TOO_LARGE, /* more than HTTP_HEAD_MAX bytes or HTTP_HEADERS_MAX lines */
};

enum http_result http_parse_request(const uint8_t *buf, size_t len, struct http_head *h);
enum http_result http_parse_response(const uint8_t *buf, size_t len, struct http_head *h);

/* Case-insensitive comparison of a span with text. */
bool http_span_equals(const uint8_t *buf, struct http_span s, const char *text);
/* The index of the first header named name at or after index from, or -1. */
int http_find_header(const uint8_t *buf, const struct http_head *h, const char *name, size_t from);
/* Whether a header named name lists token (comma-separated, any case),
 * e.g. "Connection: keep-alive, Upgrade" has "upgrade". */
bool http_has_token(const uint8_t *buf, const struct http_head *h, const char *name,
                    const char *token);

enum http_body_kind {
    HTTP_BODY_NONE,
    HTTP_BODY_LENGTH,      /* length bytes */
    HTTP_BODY_CHUNKED,     /* see http_chunked_scan */
    HTTP_BODY_UNTIL_CLOSE, /* responses only: up to the end of the connection */
};

struct http_body {
    enum http_body_kind kind;
    uint64_t length;
};

/* -1 when the framing is ambiguous or not supported (the request is
 * refused with 400), and for a body on GET, HEAD, DELETE, OPTIONS or TRACE,
 * which an upstream may ignore and so read as the next request. */
int http_request_body(const uint8_t *buf, const struct http_head *h, struct http_body *b);
/* head_request: the request was HEAD (no body whatever the headers say).
 * -1 when the framing is ambiguous. */
int http_response_body(const uint8_t *buf, const struct http_head *h, bool head_request,
                       struct http_body *b);

/* Whether the connection stays open after this message (HTTP/1.1 unless
 * "Connection: close"; HTTP/1.0 only with "Connection: keep-alive"). */
bool http_keep_alive(const uint8_t *buf, const struct http_head *h);

/* Scanner state of one chunked body; zero-initialize. */
struct http_chunked {
    int state;
    uint64_t left;     /* data bytes left in the current chunk */
    unsigned digits;   /* of the chunk size read so far */
    size_t line;       /* bytes of the current size or trailer line */
};

/* Scans the next len bytes of a chunked body (size lines, data, trailers).
 * Returns how many of them belong to the body — all, or fewer when the
 * body ends inside buf, which sets *done — or -1 when the framing is
 * malformed. The caller forwards those bytes as they are. */
ssize_t http_chunked_scan(struct http_chunked *c, const uint8_t *buf, size_t len, bool *done);

#endif
