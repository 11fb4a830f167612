/* A small blocking HTTP client for airlock's own REST API (the CLI and the
 * API benchmark), on libcurl: http:// and https:// URLs, certificates
 * always verified (the system's trust store, or a CA file), one request
 * per connection or several on a kept connection (http_conn), bodies from
 * memory or streamed from a file descriptor, responses read incrementally
 * so SSE streams and large downloads never sit in memory.
 *
 * libcurl's multi interface runs each transfer only while the caller
 * waits in http_send* or a read: a body the caller has not taken yet
 * pauses the transfer, so the socket's flow control holds the server back
 * as it did with a plain read(). */
#ifndef AIRLOCK_HTTP_CLIENT_H
#define AIRLOCK_HTTP_CLIENT_H

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "strbuf.h"

struct http_target {
    char base[300];      /* "http[s]://HOST[:PORT]", without a trailing "/" */
    const char *ca_file; /* PEM CAs trusted for https; NULL: the system's trust store */
};

/* "http[s]://HOST[:PORT][/]" → target (ca_file left NULL); -1 with err
 * otherwise. */
int http_target_parse(const char *url, struct http_target *t, char *err, size_t errlen);

struct http_request {
    const char *method;
    const char *path;            /* with query, already escaped */
    const char *const *headers;  /* "Name: value" lines, NULL-terminated; may be NULL */
    const void *body;            /* a body in memory (copied), or */
    size_t body_len;
    int body_fd;                 /* >= 0: stream body_len bytes from this fd instead */
};

/* Connections kept open between requests (HTTP/1.1 keep-alive), as a
 * long-lived API client holds them: libcurl's connection pool, zeroed
 * when none is open yet. One request at a time: the response must be
 * closed before the next send. A kept connection the server closed while
 * idle is replaced by libcurl before any of the answer arrived. */
struct http_conn {
    CURLM *multi; /* owns the pool */
    CURL *easy;   /* reused, so its TLS session is resumed too */
};

struct http_response {
    int status;
    /* The request failed because the server's certificate did not verify
     * (or the CA file did not load): what to tell the user differs. */
    bool tls_unverified;
    /* reading state */
    struct http_conn *conn; /* the caller's, or own */
    struct http_conn own;   /* http_send's connection of its own */
    struct curl_slist *headers;
    int body_fd;
    uint64_t body_left;
    bool head_done;
    bool paused;            /* the body callback holds back data we had no room for */
    bool done;              /* the transfer ended, with result */
    CURLcode result;
    atomic_bool cancelled;  /* http_cancel */
    char *buf;              /* body bytes not read yet: buf[buf_off..buf_len) */
    size_t buf_off, buf_len, buf_cap;
    char errbuf[CURL_ERROR_SIZE];
};

/* Connects, sends the request and waits for the status line and headers.
 * 0, or -1 with err naming the URL and what failed (connection refused,
 * a certificate that does not verify, no answer, ...). */
int http_send(const struct http_target *t, const struct http_request *req,
              struct http_response *resp, char *err, size_t errlen);
/* The same on conn's kept connection (a new one when it has none open);
 * http_close leaves it open for the next request when the whole answer
 * was read. */
int http_send_on(struct http_conn *conn, const struct http_target *t,
                 const struct http_request *req, struct http_response *resp, char *err,
                 size_t errlen);
/* Closes conn's connections, if any. */
void http_conn_close(struct http_conn *conn);
/* Up to len body bytes; 0 at the end of the body, -1 on a broken body (a
 * connection closed mid-chunk is an error, not an end) or after
 * http_cancel. */
ssize_t http_read_body(struct http_response *resp, void *buf, size_t len);
/* One body line without its "\n" into line (emptied first): 1, 0 at the
 * end of the body, -1 on error. For SSE. */
int http_read_line(struct http_response *resp, struct strbuf *line);
/* The whole remaining body appended to out; 0 or -1. */
int http_read_all(struct http_response *resp, struct strbuf *out);
/* From another thread: a read waiting on resp returns -1 soon after. */
void http_cancel(struct http_response *resp);
/* Ends the response; its status stays readable. */
void http_close(struct http_response *resp);

/* Percent-encodes s for a query value into out. */
void http_query_escape(const char *s, struct strbuf *out);

#endif
