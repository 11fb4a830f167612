#include "http_client.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsutil.h"

#define HTTP_MAX_HEADER_LINE 8192
#define HTTP_BODY_WITH_HEAD 65536

int http_target_parse(const char *url, struct http_target *t, char *err, size_t errlen)
{
    if (strncmp(url, "http://", 7) != 0) {
        snprintf(err, errlen, "%s: only http:// URLs are supported", url);
        return -1;
    }
    const char *host = url + 7;
    size_t hostlen = strcspn(host, ":/");
    long port = 80;
    if (host[hostlen] == ':') {
        char *end;
        port = strtol(host + hostlen + 1, &end, 10);
        if ((*end && strcmp(end, "/") != 0) || port <= 0 || port > 65535)
            port = -1;
    } else if (host[hostlen] && strcmp(host + hostlen, "/") != 0) {
        port = -1;
    }
    if (hostlen == 0 || hostlen >= sizeof(t->host) || port < 0) {
        snprintf(err, errlen, "%s: expected http://HOST[:PORT]", url);
        return -1;
    }
    snprintf(t->host, sizeof(t->host), "%.*s", (int)hostlen, host);
    t->port = (uint16_t)port;
    return 0;
}

static int tcp_connect(const struct http_target *t, char *err, size_t errlen)
{
    char port[8];
    snprintf(port, sizeof(port), "%u", t->port);
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    int gai = getaddrinfo(t->host, port, &hints, &res);
    if (gai != 0) {
        snprintf(err, errlen, "%s: %s", t->host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        /* A request's head and body are separate writes: without this, on
         * a kept connection (out of TCP's quick-ACK start) the body waits
         * for the server's delayed ACK of the head, 40 ms. */
        int one = 1;
        if (fd >= 0)
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "connect to %s:%u: %s", t->host, t->port, strerror(saved));
    return fd;
}

/* Raw bytes from the connection through resp->buf. */
static ssize_t raw_read(struct http_response *r, void *out, size_t len)
{
    if (r->buf_off == r->buf_len) {
        ssize_t n;
        do
            n = read(r->fd, r->buf, sizeof(r->buf));
        while (n < 0 && errno == EINTR);
        if (n <= 0)
            return n;
        r->buf_off = 0;
        r->buf_len = (size_t)n;
    }
    size_t n = r->buf_len - r->buf_off;
    if (n > len)
        n = len;
    memcpy(out, r->buf + r->buf_off, n);
    r->buf_off += n;
    return (ssize_t)n;
}

/* A CRLF- or LF-terminated protocol line (status, header, chunk size). */
static int raw_line(struct http_response *r, char *line, size_t cap)
{
    size_t n = 0;
    for (;;) {
        char c;
        if (raw_read(r, &c, 1) != 1)
            return -1;
        if (c == '\n')
            break;
        if (n + 1 < cap)
            line[n++] = c;
    }
    if (n && line[n - 1] == '\r')
        n--;
    line[n] = '\0';
    return 0;
}

static int send_request(int fd, const struct http_target *t, const struct http_request *req,
                        bool keep)
{
    struct strbuf head = { 0 };
    strbuf_appendf(&head, "%s %s HTTP/1.1\r\nHost: %s:%u\r\n%s", req->method, req->path,
                   t->host, t->port, keep ? "" : "Connection: close\r\n");
    for (const char *const *h = req->headers; h && *h; h++)
        strbuf_appendf(&head, "%s\r\n", *h);
    if (req->body || req->body_fd >= 0 || strcmp(req->method, "GET") != 0)
        strbuf_appendf(&head, "Content-Length: %zu\r\n", req->body_len);
    strbuf_append(&head, "\r\n");
    /* A small body in memory goes out with the head: one write, one segment. */
    bool with_head = req->body_fd < 0 && req->body_len <= HTTP_BODY_WITH_HEAD;
    if (with_head && req->body_len)
        strbuf_append_n(&head, req->body, req->body_len);
    int rc = strbuf_failed(&head) ? -1 : fs_send_all(fd, head.data, head.len);
    strbuf_free(&head);
    if (rc < 0 || with_head)
        return rc;
    if (req->body_fd >= 0) {
        char buf[65536];
        size_t left = req->body_len;
        while (left > 0) {
            ssize_t n = read(req->body_fd, buf, left < sizeof(buf) ? left : sizeof(buf));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0 || fs_send_all(fd, buf, (size_t)n) < 0)
                return -1;
            left -= (size_t)n;
        }
        return 0;
    }
    return req->body_len ? fs_send_all(fd, req->body, req->body_len) : 0;
}

static int read_head(struct http_response *r, char *err, size_t errlen)
{
    char line[HTTP_MAX_HEADER_LINE];
    int minor;
    if (raw_line(r, line, sizeof(line)) < 0 ||
        sscanf(line, "HTTP/1.%d %d", &minor, &r->status) != 2) {
        snprintf(err, errlen, "the server's answer is not HTTP");
        return -1;
    }
    r->server_closes = minor == 0;
    for (;;) {
        if (raw_line(r, line, sizeof(line)) < 0) {
            snprintf(err, errlen, "the connection closed in the response headers");
            return -1;
        }
        if (!line[0])
            return 0;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        const char *value = colon + 1 + strspn(colon + 1, " \t");
        if (strcasecmp(line, "Content-Length") == 0) {
            r->length_known = true;
            r->remaining = strtoull(value, NULL, 10);
        } else if (strcasecmp(line, "Transfer-Encoding") == 0 && strstr(value, "chunked")) {
            r->chunked = true;
        } else if (strcasecmp(line, "Connection") == 0 && strcasestr(value, "close")) {
            r->server_closes = true;
        } else if (strcasecmp(line, "Content-Type") == 0) {
            snprintf(r->content_type, sizeof(r->content_type), "%s", value);
        }
    }
}

/* Sends req on fd and reads the answer's head into resp. */
static int exchange(int fd, const struct http_target *t, const struct http_request *req,
                    bool keep, struct http_response *resp, char *err, size_t errlen)
{
    memset(resp, 0, sizeof(*resp));
    resp->fd = fd;
    if (send_request(fd, t, req, keep) < 0) {
        /* The server may have answered early (e.g. 401 before the body):
         * its answer is more useful than our write error. */
        shutdown(fd, SHUT_WR);
    }
    if (read_head(resp, err, errlen) < 0)
        return -1;
    bool no_body = resp->status == 204 || resp->status == 304 || strcmp(req->method, "HEAD") == 0;
    resp->done = no_body || (resp->length_known && !resp->chunked && resp->remaining == 0);
    if (resp->chunked)
        resp->remaining = 0;
    /* A body that ends when the connection does leaves nothing to keep. */
    if (!resp->done && !resp->chunked && !resp->length_known)
        resp->server_closes = true;
    return 0;
}

int http_send(const struct http_target *t, const struct http_request *req,
              struct http_response *resp, char *err, size_t errlen)
{
    int fd = tcp_connect(t, err, errlen);
    if (fd < 0) {
        memset(resp, 0, sizeof(*resp));
        resp->fd = -1;
        return -1;
    }
    if (exchange(fd, t, req, false, resp, err, errlen) < 0) {
        http_close(resp);
        return -1;
    }
    return 0;
}

int http_send_on(struct http_conn *conn, const struct http_target *t,
                 const struct http_request *req, struct http_response *resp, char *err,
                 size_t errlen)
{
    bool reused = conn->fd >= 0;
    if (!reused)
        conn->fd = tcp_connect(t, err, errlen);
    int rc = conn->fd < 0 ? -1 : exchange(conn->fd, t, req, true, resp, err, errlen);
    /* Nothing of an answer came on a kept connection: the server closed it
     * while idle and never read the request. Once more on a new one (not
     * with a body streamed from an fd: it was consumed). */
    if (rc < 0 && reused && resp->buf_len == 0 && req->body_fd < 0) {
        close(conn->fd);
        conn->fd = tcp_connect(t, err, errlen);
        rc = conn->fd < 0 ? -1 : exchange(conn->fd, t, req, true, resp, err, errlen);
    }
    if (rc < 0) {
        http_conn_close(conn);
        memset(resp, 0, sizeof(*resp));
        resp->fd = -1;
        return -1;
    }
    resp->conn = conn;
    return 0;
}

void http_conn_close(struct http_conn *conn)
{
    if (conn->fd >= 0)
        close(conn->fd);
    conn->fd = -1;
}

/* Starts the next chunk; false at the last one (or on error, with
 * *failed). */
static bool next_chunk(struct http_response *r, bool *failed)
{
    char line[128];
    if (raw_line(r, line, sizeof(line)) < 0) {
        *failed = true;
        return false;
    }
    if (!line[0] && raw_line(r, line, sizeof(line)) < 0) { /* CRLF after the previous chunk */
        *failed = true;
        return false;
    }
    char *end;
    r->remaining = strtoull(line, &end, 16);
    if (end == line) {
        *failed = true;
        return false;
    }
    if (r->remaining > 0)
        return true;
    /* The last chunk: read its trailers up to the empty line, so a kept
     * connection starts the next answer at its status line. A server that
     * closed before that empty line sent the whole body all the same. */
    do {
        if (raw_line(r, line, sizeof(line)) < 0) {
            r->server_closes = true;
            return false;
        }
    } while (line[0]);
    return false;
}

ssize_t http_read_body(struct http_response *r, void *buf, size_t len)
{
    if (r->done || len == 0)
        return 0;
    if (r->chunked && r->remaining == 0) {
        bool failed = false;
        if (!next_chunk(r, &failed)) {
            r->done = true;
            return failed ? -1 : 0;
        }
    }
    bool bounded = r->chunked || r->length_known;
    if (bounded && len > r->remaining)
        len = (size_t)r->remaining;
    ssize_t n = raw_read(r, buf, len);
    if (n < 0 || (n == 0 && bounded)) {
        r->done = true;
        return -1; /* closed before the announced end */
    }
    if (n == 0) {
        r->done = true;
        return 0;
    }
    if (bounded) {
        r->remaining -= (uint64_t)n;
        if (!r->chunked && r->remaining == 0)
            r->done = true;
    }
    return n;
}

int http_read_line(struct http_response *r, struct strbuf *line)
{
    line->len = 0;
    if (line->data)
        line->data[0] = '\0';
    for (;;) {
        char c;
        ssize_t n = http_read_body(r, &c, 1);
        if (n < 0)
            return -1;
        if (n == 0)
            return line->len ? 1 : 0;
        if (c == '\n')
            return strbuf_failed(line) ? -1 : 1;
        strbuf_append_n(line, &c, 1);
    }
}

int http_read_all(struct http_response *r, struct strbuf *out)
{
    char buf[16384];
    ssize_t n;
    while ((n = http_read_body(r, buf, sizeof(buf))) > 0)
        strbuf_append_n(out, buf, (size_t)n);
    return n < 0 || strbuf_failed(out) ? -1 : 0;
}

void http_close(struct http_response *r)
{
    /* Kept only after a whole answer and nothing beyond it. */
    bool keep = r->conn && r->done && !r->server_closes && r->buf_off == r->buf_len;
    if (r->conn && !keep)
        r->conn->fd = -1;
    if (r->fd >= 0 && !keep)
        close(r->fd);
    r->fd = -1;
    r->conn = NULL;
}

void http_query_escape(const char *s, struct strbuf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            strbuf_append_n(out, (const char *)p, 1);
        else
            strbuf_appendf(out, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
    }
}
