#include "http_client.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* How long one wait for the socket lasts before the loop looks at
 * http_cancel again (curl_multi_wakeup ends it sooner). */
#define HTTP_POLL_MS 1000

int http_target_parse(const char *url, struct http_target *t, char *err, size_t errlen)
{
    size_t scheme = strncmp(url, "https://", 8) == 0 ? 8 : strncmp(url, "http://", 7) == 0 ? 7 : 0;
    if (!scheme) {
        snprintf(err, errlen, "%s: only http:// and https:// URLs are supported", url);
        return -1;
    }
    const char *host = url + scheme;
    size_t hostlen = strcspn(host, ":/");
    const char *rest = host + hostlen;
    bool ok = hostlen > 0;
    if (*rest == ':') {
        char *end;
        long port = strtol(rest + 1, &end, 10);
        ok = ok && end != rest + 1 && port > 0 && port <= 65535 && (!*end || strcmp(end, "/") == 0);
    } else {
        ok = ok && (!*rest || strcmp(rest, "/") == 0);
    }
    size_t len = strlen(url);
    if (len && url[len - 1] == '/')
        len--;
    if (!ok || len >= sizeof(t->base)) {
        snprintf(err, errlen, "%s: expected http[s]://HOST[:PORT]", url);
        return -1;
    }
    snprintf(t->base, sizeof(t->base), "%.*s", (int)len, url);
    t->ca_file = NULL;
    return 0;
}

static void global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The end of a response head: its status, unless it was an interim 1xx
 * (100 Continue) with the real one still to come. */
static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    struct http_response *r = arg;
    if (n >= 1 && (data[0] == '\r' || data[0] == '\n')) {
        long code = 0;
        curl_easy_getinfo(r->conn->easy, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200) {
            r->status = (int)code;
            r->head_done = true;
        }
    }
    return size * n;
}

/* Body bytes into buf; while the caller has not taken the last ones, the
 * transfer pauses (libcurl keeps these and hands them over again on
 * unpause). */
static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct http_response *r = arg;
    if (r->buf_off < r->buf_len) {
        r->paused = true;
        return CURL_WRITEFUNC_PAUSE;
    }
    if (n > r->buf_cap) {
        char *grown = realloc(r->buf, n);
        if (!grown)
            return 0; /* libcurl fails the transfer */
        r->buf = grown;
        r->buf_cap = n;
    }
    (void)size; /* always 1 */
    memcpy(r->buf, data, n);
    r->buf_off = 0;
    r->buf_len = n;
    return n;
}

/* A streamed request body: body_left bytes of body_fd. */
static size_t on_upload(char *out, size_t size, size_t n, void *arg)
{
    struct http_response *r = arg;
    size_t want = size * n;
    if (want > r->body_left)
        want = (size_t)r->body_left;
    if (want == 0)
        return 0;
    ssize_t got;
    do
        got = read(r->body_fd, out, want);
    while (got < 0 && errno == EINTR);
    if (got <= 0)
        return CURL_READFUNC_ABORT; /* the file ended before the length we announced */
    r->body_left -= (uint64_t)got;
    return (size_t)got;
}

static bool head_arrived(const struct http_response *r)
{
    return r->head_done;
}

static bool body_buffered(const struct http_response *r)
{
    return r->buf_off < r->buf_len;
}

/* Runs the transfer until ready(r) or its end. */
static void run_until(struct http_response *r, bool (*ready)(const struct http_response *))
{
    while (!ready(r) && !r->done) {
        if (atomic_load(&r->cancelled)) {
            r->done = true;
            r->result = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        int running = 0;
        CURLMcode mc = curl_multi_perform(r->conn->multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(r->conn->multi, &left)))
            if (msg->msg == CURLMSG_DONE) {
                r->done = true;
                r->result = msg->data.result;
            }
        if (mc != CURLM_OK) {
            r->done = true;
            r->result = CURLE_FAILED_INIT;
            snprintf(r->errbuf, sizeof(r->errbuf), "%s", curl_multi_strerror(mc));
        }
        if (!ready(r) && !r->done)
            curl_multi_poll(r->conn->multi, NULL, 0, HTTP_POLL_MS, NULL);
    }
}

static bool has_header(const char *const *headers, const char *name)
{
    size_t len = strlen(name);
    for (const char *const *h = headers; h && *h; h++)
        if (strncasecmp(*h, name, len) == 0 && (*h)[len] == ':')
            return true;
    return false;
}

/* The request's options on a freshly reset easy handle. */
static int configure(struct http_response *r, const struct http_target *t,
                     const struct http_request *req, const char *url)
{
    CURL *e = r->conn->easy;
    for (const char *const *h = req->headers; h && *h; h++)
        if (!(r->headers = curl_slist_append(r->headers, *h)))
            return -1;
    bool in_memory = req->body_fd < 0 && (req->body || strcmp(req->method, "GET") != 0);
    /* libcurl would label a body from memory as a form. */
    if (in_memory && !has_header(req->headers, "Content-Type") &&
        !(r->headers = curl_slist_append(r->headers, "Content-Type:")))
        return -1;
    CURLcode rc = CURLE_OK;
#define SET(opt, val) \
    if (rc == CURLE_OK) \
        rc = curl_easy_setopt(e, opt, val)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    /* Always verified; a private CA is trusted only through ca_file. */
    SET(CURLOPT_SSL_VERIFYPEER, 1L);
    SET(CURLOPT_SSL_VERIFYHOST, 2L);
    if (t->ca_file)
        SET(CURLOPT_CAINFO, t->ca_file);
    /* The gateway is reached directly, as the URL says: a proxy set in the
     * environment for other traffic does not reroute (or see) API keys. */
    SET(CURLOPT_PROXY, "");
    SET(CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM around name lookups */
    SET(CURLOPT_ERRORBUFFER, r->errbuf);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, r);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, r);
    SET(CURLOPT_HTTPHEADER, r->headers);
    if (req->body_fd >= 0) {
        r->body_fd = req->body_fd;
        r->body_left = req->body_len;
        SET(CURLOPT_UPLOAD, 1L);
        SET(CURLOPT_READFUNCTION, on_upload);
        SET(CURLOPT_READDATA, r);
        SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)req->body_len);
    } else if (in_memory) {
        /* Copied: the caller may free its body once the answer's head is
         * in, even if the server answered before reading all of it. */
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        SET(CURLOPT_COPYPOSTFIELDS, req->body ? req->body : "");
    }
    if (strcmp(req->method, "GET") != 0)
        SET(CURLOPT_CUSTOMREQUEST, req->method);
#undef SET
    return rc == CURLE_OK ? 0 : -1;
}

static bool tls_unverified(CURLcode rc)
{
    return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE;
}

int http_send_on(struct http_conn *conn, const struct http_target *t,
                 const struct http_request *req, struct http_response *resp, char *err,
                 size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init);
    memset(resp, 0, sizeof(*resp));
    resp->body_fd = -1;
    if (!conn->multi)
        conn->multi = curl_multi_init();
    if (!conn->easy)
        conn->easy = curl_easy_init();
    char url[sizeof(t->base) + 4096];
    snprintf(url, sizeof(url), "%s%s", t->base, req->path);
    if (!conn->multi || !conn->easy) {
        snprintf(err, errlen, "%s: out of memory for the request", url);
        return -1;
    }
    resp->conn = conn;
    /* Reset keeps the easy handle's TLS sessions; the pool is the multi's. */
    curl_easy_reset(conn->easy);
    if (configure(resp, t, req, url) < 0 ||
        curl_multi_add_handle(conn->multi, conn->easy) != CURLM_OK) {
        snprintf(err, errlen, "%s: cannot set up the request", url);
        http_close(resp);
        return -1;
    }
    run_until(resp, head_arrived);
    if (resp->head_done)
        return 0;
    resp->tls_unverified = tls_unverified(resp->result);
    snprintf(err, errlen, "%s: %s", url,
             resp->errbuf[0] ? resp->errbuf : curl_easy_strerror(resp->result));
    http_close(resp);
    return -1;
}

int http_send(const struct http_target *t, const struct http_request *req,
              struct http_response *resp, char *err, size_t errlen)
{
    struct http_conn own = { 0 };
    int rc = http_send_on(&own, t, req, resp, err, errlen);
    if (rc < 0) {
        http_conn_close(&own);
        return -1;
    }
    /* The response owns the connection from here: http_close closes it. */
    resp->own = own;
    resp->conn = &resp->own;
    return 0;
}

void http_conn_close(struct http_conn *conn)
{
    if (conn->easy)
        curl_easy_cleanup(conn->easy);
    if (conn->multi)
        curl_multi_cleanup(conn->multi);
    conn->easy = NULL;
    conn->multi = NULL;
}

ssize_t http_read_body(struct http_response *r, void *buf, size_t len)
{
    if (!r->conn)
        return -1;
    if (!body_buffered(r)) {
        if (r->paused && !r->done) {
            r->paused = false;
            curl_easy_pause(r->conn->easy, CURLPAUSE_CONT); /* may refill buf at once */
        }
        run_until(r, body_buffered);
    }
    if (body_buffered(r)) {
        size_t n = r->buf_len - r->buf_off;
        if (n > len)
            n = len;
        memcpy(buf, r->buf + r->buf_off, n);
        r->buf_off += n;
        return (ssize_t)n;
    }
    return r->result == CURLE_OK ? 0 : -1;
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

void http_cancel(struct http_response *r)
{
    atomic_store(&r->cancelled, true);
    curl_multi_wakeup(r->conn->multi);
}

void http_close(struct http_response *r)
{
    if (!r->conn)
        return;
    /* A transfer removed before its end takes its connection with it:
     * only a whole answer leaves a connection to keep. */
    curl_multi_remove_handle(r->conn->multi, r->conn->easy);
    if (r->conn == &r->own)
        http_conn_close(&r->own);
    curl_slist_free_all(r->headers);
    free(r->buf);
    r->headers = NULL;
    r->buf = NULL;
    r->buf_off = r->buf_len = r->buf_cap = 0;
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
