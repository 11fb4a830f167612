/* A small blocking HTTP/1.1 client for airlock's own REST API (the CLI and
 * the API benchmark): plain TCP to an http:// URL, one request per
 * connection (Connection: close) or several on a kept connection
 * (http_conn), bodies from memory or streamed from a file descriptor,
 * responses read incrementally (Content-Length, chunked, or until close)
 * so SSE streams and large downloads never sit in memory. */
#ifndef AIRLOCK_HTTP_CLIENT_H
#define AIRLOCK_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "strbuf.h"

struct http_target {
    char host[256];
    uint16_t port;
};

/* "http://HOST[:PORT][/]" → target; -1 with err otherwise. */
int http_target_parse(const char *url, struct http_target *t, char *err, size_t errlen);

struct http_request {
    const char *method;
    const char *path;            /* with query, already escaped */
    const char *const *headers;  /* "Name: value" lines, NULL-terminated; may be NULL */
    const void *body;            /* a body in memory, or */
    size_t body_len;
    int body_fd;                 /* >= 0: stream body_len bytes from this fd instead */
};

/* A connection kept open between requests (HTTP/1.1 keep-alive), as a
 * long-lived API client holds one. fd -1: none open. One request at a
 * time: the response must be closed before the next send. */
struct http_conn {
    int fd;
};

struct http_response {
    int status;
    char content_type[128];
    /* reading state */
    int fd;
    struct http_conn *conn; /* kept connection it came on, or NULL */
    bool server_closes;     /* "Connection: close" in the answer */
    bool chunked;
    bool length_known;
    uint64_t remaining;          /* of the body (length known) or of the current chunk */
    bool done;
    char buf[16384];
    size_t buf_off, buf_len;
};

/* Connects, sends the request and reads the status line and headers. 0, or
 * -1 with err (connection refused, a malformed answer, ...). */
int http_send(const struct http_target *t, const struct http_request *req,
              struct http_response *resp, char *err, size_t errlen);
/* The same on conn: its open connection when it has one (a kept
 * connection the server closed meanwhile is replaced once, before any of
 * the answer arrived), else a new one it keeps. http_close leaves the
 * connection open for the next request when the whole answer was read. */
int http_send_on(struct http_conn *conn, const struct http_target *t,
                 const struct http_request *req, struct http_response *resp, char *err,
                 size_t errlen);
/* Closes conn's connection, if any. */
void http_conn_close(struct http_conn *conn);
/* Up to len body bytes; 0 at the end of the body, -1 on a broken body (a
 * connection closed mid-chunk is an error, not an end). */
ssize_t http_read_body(struct http_response *resp, void *buf, size_t len);
/* One body line without its "\n" into line (emptied first): 1, 0 at the
 * end of the body, -1 on error. For SSE. */
int http_read_line(struct http_response *resp, struct strbuf *line);
/* The whole remaining body appended to out; 0 or -1. */
int http_read_all(struct http_response *resp, struct strbuf *out);
void http_close(struct http_response *resp);

/* Percent-encodes s for a query value into out. */
void http_query_escape(const char *s, struct strbuf *out);

#endif
