#include "http_inject.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "http_msg.h"
#include "log.h"
#include "names.h"
#include "secret_redact.h"
#include "sniff.h"
#include "vault_client.h"

#define IO_CHUNK 16384
/* A whole head plus what may arrive behind it in the same read. */
#define BUF_CAP (HTTP_HEAD_MAX + IO_CHUNK)

struct session {
    const struct http_inject_env *env;
    struct conn_stream *guest;
    struct conn_stream up;
    bool up_open;
    uint8_t *in;   /* guest bytes not consumed yet */
    size_t in_len;
    uint8_t *uin;  /* upstream bytes not consumed yet */
    size_t uin_len;
    struct http_inject_stats *st;
};

static void consume(uint8_t *buf, size_t *len, size_t n)
{
    memmove(buf, buf + n, *len - n);
    *len -= n;
}

/* Reads from s into buf until it holds a complete head. *eof: the stream
 * ended before its first byte (a clean end between requests). */
static enum http_result read_head(struct conn_stream *s, uint8_t *buf, size_t *len, bool response,
                                  struct http_head *h, bool *eof)
{
    size_t scanned = 0;
    *eof = false;
    for (;;) {
        /* Parse only once the blank line is there: a guest trickling bytes
         * must not make egress re-parse the head at every read. */
        size_t from = scanned >= 3 ? scanned - 3 : 0;
        if (*len > from && memmem(buf + from, *len - from, "\r\n\r\n", 4))
            return response ? http_parse_response(buf, *len, h) : http_parse_request(buf, *len, h);
        if (*len >= HTTP_HEAD_MAX)
            return HTTP_TOO_LARGE;
        ssize_t n = conn_stream_read(s, buf + *len, BUF_CAP - *len);
        if (n <= 0) {
            *eof = *len == 0;
            return HTTP_MALFORMED;
        }
        scanned = *len;
        *len += (size_t)n;
    }
}

/* Writes a piece of a body to `to`, through redact when there is one. */
static int write_body(struct conn_stream *to, struct secret_redactor *redact, const uint8_t *data,
                      size_t len)
{
    if (!redact)
        return conn_stream_write(to, data, len);
    const uint8_t *out;
    size_t out_len;
    secret_redactor_push(redact, data, len, &out, &out_len);
    return out_len ? conn_stream_write(to, out, out_len) : 0;
}

/* Copies one body framed as b from `from` to `to` (NULL: read and dropped),
 * masking redact's secret (NULL: as it is). Its first bytes may be in buf
 * already; bytes behind it stay there. -1 when a side fails or the body is
 * malformed or cut short. */
static int copy_body(struct conn_stream *from, struct conn_stream *to, const struct http_body *b,
                     uint8_t *buf, size_t *len, uint64_t *count, struct secret_redactor *redact)
{
    uint64_t left = b->length;
    struct http_chunked chunked = { 0 };
    bool done = b->kind == HTTP_BODY_NONE || (b->kind == HTTP_BODY_LENGTH && left == 0);
    while (!done) {
        if (*len == 0) {
            ssize_t n = conn_stream_read(from, buf, BUF_CAP);
            if (n == 0 && b->kind == HTTP_BODY_UNTIL_CLOSE)
                break;
            if (n <= 0)
                return -1;
            *len = (size_t)n;
        }
        size_t take = *len;
        if (b->kind == HTTP_BODY_LENGTH) {
            take = *len < left ? *len : (size_t)left;
            left -= take;
            done = left == 0;
        } else if (b->kind == HTTP_BODY_CHUNKED) {
            ssize_t k = http_chunked_scan(&chunked, buf, *len, &done);
            if (k < 0)
                return -1;
            take = (size_t)k;
        }
        if (to) {
            if (write_body(to, redact, buf, take) < 0)
                return -1;
            *count += take;
        }
        consume(buf, len, take);
    }
    if (!redact)
        return 0;
    const uint8_t *held;
    size_t held_len;
    secret_redactor_finish(redact, &held, &held_len);
    return held_len ? conn_stream_write(to, held, held_len) : 0;
}

/* egress's own answer; the connection ends after it (the guest may have a
 * body under way that egress does not read). */
static void answer(struct session *s, int status, const char *reason, const char *code,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void answer(struct session *s, int status, const char *reason, const char *code,
                   const char *fmt, ...)
{
    char body[1200], head[512];
    int bl = snprintf(body, sizeof(body), "airlock egress: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body + bl, sizeof(body) - (size_t)bl - 1, fmt, ap);
    va_end(ap);
    size_t body_len = strlen(body);
    body[body_len++] = '\n';
    int hl = snprintf(head, sizeof(head),
                      "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      "Content-Length: %zu\r\nX-Airlock-Egress-Error: %s\r\n"
                      "Connection: close\r\n\r\n",
                      status, reason, body_len, code);
    if (conn_stream_write(s->guest, head, (size_t)hl) == 0 &&
        conn_stream_write(s->guest, body, body_len) == 0)
        s->st->received += (uint64_t)hl + body_len;
    s->st->failure = code;
}

/* Every request must name the connection's host, once, in Host and in an
 * absolute-form target: the credential belongs to that host only. */
static bool names_connection_host(const uint8_t *buf, const struct http_head *h, const char *name)
{
    int i = http_find_header(buf, h, "host", 0);
    if (i < 0 || http_find_header(buf, h, "host", (size_t)i + 1) >= 0)
        return false;
    char host[NAME_MAX_LEN + 1];
    struct http_span v = h->headers[i].value;
    if (sniff_authority_host((const char *)buf + v.off, v.len, host) < 0 ||
        strcmp(host, name) != 0)
        return false;
    const char *auth;
    size_t alen;
    int form = sniff_target_authority((const char *)buf + h->target.off, h->target.len, &auth,
                                      &alen);
    return form == 0 ||
           (form == 1 && sniff_authority_host(auth, alen, host) == 0 && strcmp(host, name) == 0);
}

/* Headers egress does not pass on: the 100-continue it answers itself, and
 * protocol upgrades, which it cannot follow (WebSocket to a host with a
 * credential binding is not supported). With a secret in the request, also
 * what would let the guest get an echo of it in a shape the response scan
 * cannot see (secret_redact.h): compressed, or cut into byte ranges. */
static bool dropped_header(const uint8_t *buf, const struct http_header *hd, bool injecting)
{
    static const char *const always[] = { "expect", "upgrade" };
    static const char *const with_secret[] = { "accept-encoding", "range", "if-range" };
    for (size_t i = 0; i < sizeof(always) / sizeof(*always); i++)
        if (http_span_equals(buf, hd->name, always[i]))
            return true;
    for (size_t i = 0; injecting && i < sizeof(with_secret) / sizeof(*with_secret); i++)
        if (http_span_equals(buf, hd->name, with_secret[i]))
            return true;
    return false;
}

static size_t count_in(const uint8_t *p, size_t len, const char *needle, size_t nlen)
{
    size_t n = 0;
    for (const uint8_t *q = p; nlen && (q = memmem(q, len - (size_t)(q - p), needle, nlen));
         q += nlen)
        n++;
    return n;
}

/* Appends a value with every placeholder replaced by the secret. */
static size_t put_value(uint8_t *out, const uint8_t *v, size_t len,
                        const Airlock__Vault__V1__Injection *inj)
{
    size_t plen = inj ? strlen(inj->placeholder) : 0, o = 0;
    const uint8_t *p = v, *end = v + len;
    while (p < end) {
        const uint8_t *hit = plen ? memmem(p, (size_t)(end - p), inj->placeholder, plen) : NULL;
        size_t lit = (size_t)((hit ? hit : end) - p);
        memcpy(out + o, p, lit);
        o += lit;
        p += lit;
        if (hit) {
            memcpy(out + o, inj->secret_value.data, inj->secret_value.len);
            o += inj->secret_value.len;
            p += plen;
        }
    }
    return o;
}

/* The head to send upstream (malloc'd; *injected tells whether it carries
 * the secret: zero it after use). NULL when out of memory. */
static uint8_t *rewrite_head(const uint8_t *buf, const struct http_head *h,
                             const Airlock__Vault__V1__Injection *inj, size_t *out_len,
                             bool *injected)
{
    /* The placeholder is replaced in the bound header only: in any other
     * header (User-Agent, Cookie, X-Api-Key) an upstream may echo or log
     * the secret. Elsewhere it goes as it is: it is no secret. */
    size_t plen = inj ? strlen(inj->placeholder) : 0, holes = 0;
    for (size_t i = 0; i < h->n_headers && plen; i++)
        if (http_span_equals(buf, h->headers[i].name, inj->header_name))
            holes += count_in(buf + h->headers[i].value.off, h->headers[i].value.len,
                              inj->placeholder, plen);
    /* Without a placeholder in the bound header, the bound header goes in. */
    bool add = inj && holes == 0;
    /* Each header may grow by a byte (": "), the added one brings its
     * name, value, ": ", CRLF and sprintf's NUL. */
    size_t cap = h->len + 5 + h->n_headers +
                 (inj ? strlen(inj->header_name) + strlen(inj->header_value) +
                            holes * inj->secret_value.len
                      : 0);
    uint8_t *out = malloc(cap);
    if (!out)
        return NULL;
    const uint8_t *line_end = memmem(buf, h->len, "\r\n", 2);
    size_t o = (size_t)(line_end - buf) + 2;
    memcpy(out, buf, o);
    for (size_t i = 0; i < h->n_headers; i++) {
        const struct http_header *hd = &h->headers[i];
        if (dropped_header(buf, hd, inj != NULL) ||
            (add && http_span_equals(buf, hd->name, inj->header_name)))
            continue;
        memcpy(out + o, buf + hd->name.off, hd->name.len);
        o += hd->name.len;
        memcpy(out + o, ": ", 2);
        o += 2;
        bool bound = holes && http_span_equals(buf, hd->name, inj->header_name);
        o += put_value(out + o, buf + hd->value.off, hd->value.len, bound ? inj : NULL);
        memcpy(out + o, "\r\n", 2);
        o += 2;
    }
    if (add)
        o += (size_t)sprintf((char *)out + o, "%s: %s\r\n", inj->header_name, inj->header_value);
    memcpy(out + o, "\r\n", 2);
    *out_len = o + 2;
    *injected = inj != NULL;
    return out;
}

/* vault's answer must fit in a header line whatever vault stored. */
static bool injection_safe(const Airlock__Vault__V1__Injection *inj)
{
    size_t n = strlen(inj->header_name);
    bool ok = n > 0 && strspn(inj->header_name, "!#$%&'*+-.^_`|~0123456789"
                                                "abcdefghijklmnopqrstuvwxyz"
                                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == n &&
              strcspn(inj->header_value, "\r\n") == strlen(inj->header_value) &&
              inj->placeholder[0] != '\0' && inj->secret_value.len > 0;
    for (size_t i = 0; ok && i < inj->secret_value.len; i++)
        ok = inj->secret_value.data[i] != '\r' && inj->secret_value.data[i] != '\n' &&
             inj->secret_value.data[i] != '\0';
    return ok;
}

/* An upstream connection that is readable before a request was sent has
 * closed (or sent garbage): a new one is made. */
static int ensure_upstream(struct session *s, char *err, size_t errlen)
{
    if (s->up_open) {
        struct pollfd pfd = { .fd = s->up.fd, .events = POLLIN };
        if (poll(&pfd, 1, 0) == 0 && s->uin_len == 0)
            return 0;
        s->env->disconnect(s->env->ctx, &s->up);
        s->up_open = false;
        s->uin_len = 0;
    }
    if (s->env->connect(s->env->ctx, &s->up, err, errlen) < 0)
        return -1;
    s->up_open = true;
    return 0;
}

/* relay_response with redact (NULL: nothing to mask) made. */
static int relay_through(struct session *s, bool head_request, bool guest_keep_alive,
                         struct secret_redactor *redact)
{
    struct http_head head, *h = &head;
    for (;;) {
        bool eof;
        errno = 0;
        enum http_result r = read_head(&s->up, s->uin, &s->uin_len, true, h, &eof);
        /* The upstream's SO_RCVTIMEO (intercept.c): silent for the idle
         * timeout. */
        if (r == HTTP_MALFORMED && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            answer(s, 504, "Gateway Timeout", "upstream_timeout",
                   "the upstream %s sent no answer for the idle timeout", s->env->name);
            return 0;
        }
        struct http_body body;
        if (r != HTTP_COMPLETE || h->status == 101 ||
            http_response_body(s->uin, h, head_request, &body) < 0) {
            answer(s, 502, "Bad Gateway", "upstream_response_malformed",
                   "the upstream %s sent no valid HTTP/1.x response", s->env->name);
            return 0;
        }
        if (redact)
            redact->masked += secret_mask(s->uin, h->len, redact->secret, redact->len);
        if (conn_stream_write(s->guest, s->uin, h->len) < 0) {
            s->st->failure = "guest_gone";
            return 0;
        }
        s->st->received += h->len;
        bool upstream_keep_alive = http_keep_alive(s->uin, h);
        consume(s->uin, &s->uin_len, h->len);
        if (h->status < 200)
            continue;
        if (copy_body(&s->up, s->guest, &body, s->uin, &s->uin_len, &s->st->received, redact) < 0) {
            s->st->failure = "response_body_failed";
            return 0;
        }
        if (!upstream_keep_alive || s->uin_len) {
            s->env->disconnect(s->env->ctx, &s->up);
            s->up_open = false;
            s->uin_len = 0;
        }
        return guest_keep_alive && upstream_keep_alive && body.kind != HTTP_BODY_UNTIL_CLOSE;
    }
}

/* Relays the response (interim ones first) to the guest, with the secret
 * of inj (if the request carried one) masked wherever the upstream echoed
 * it (secret_redact.h). 1: the connection may carry another request; 0:
 * it ends. */
static int relay_response(struct session *s, bool head_request, bool guest_keep_alive,
                          const Airlock__Vault__V1__Injection *inj)
{
    if (!inj)
        return relay_through(s, head_request, guest_keep_alive, NULL);
    struct secret_redactor redact;
    if (secret_redactor_init(&redact, inj->secret_value.data, inj->secret_value.len, BUF_CAP) <
        0) {
        answer(s, 502, "Bad Gateway", "out_of_memory", "out of memory");
        return 0;
    }
    int rc = relay_through(s, head_request, guest_keep_alive, &redact);
    if (redact.masked)
        log_warn("the upstream echoed the injected secret: masked in the response",
                 "sandbox=%s host=%s secret=%s times=%u", s->env->sandbox_id, s->env->name,
                 inj->secret_id, redact.masked);
    s->st->redacted += redact.masked;
    secret_redactor_free(&redact);
    return rc;
}

static void log_refusal(struct session *s, const char *what, const char *method, const char *err)
{
    log_warn(what, "sandbox=%s host=%s method=%s error=\"%s\"", s->env->sandbox_id, s->env->name,
             method, err);
}

/* Sends the request (head rewritten, body as it comes) on the connected
 * upstream and relays the response. 1: the connection may carry another
 * request; 0: it ends. */
static int forward(struct session *s, const struct http_head *h, const struct http_body *body,
                   const Airlock__Vault__V1__Injection *inj, const char *method)
{
    bool guest_keep_alive = http_keep_alive(s->in, h);
    bool head_request = strcmp(method, "HEAD") == 0;
    /* egress dropped Expect, so the upstream will not say 100: egress
     * does, once the request is sure to go out. */
    if (http_has_token(s->in, h, "expect", "100-continue") &&
        conn_stream_write(s->guest, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0) {
        s->st->failure = "guest_gone";
        return 0;
    }
    size_t len = 0;
    bool injected = false;
    uint8_t *head = rewrite_head(s->in, h, inj, &len, &injected);
    if (!head) {
        answer(s, 502, "Bad Gateway", "out_of_memory", "out of memory");
        return 0;
    }
    int wrote = conn_stream_write(&s->up, head, len);
    OPENSSL_cleanse(head, len);
    free(head);
    if (wrote < 0) {
        answer(s, 502, "Bad Gateway", "upstream_unavailable", "the upstream %s went away",
               s->env->name);
        return 0;
    }
    s->st->sent += len;
    if (injected) {
        s->st->injected++;
        log_info("credential injected", "sandbox=%s host=%s secret=%s method=%s",
                 s->env->sandbox_id, s->env->name, inj->secret_id, method);
    }
    consume(s->in, &s->in_len, h->len);
    if (copy_body(s->guest, &s->up, body, s->in, &s->in_len, &s->st->sent, NULL) < 0) {
        s->st->failure = "request_body_failed";
        return 0;
    }
    return relay_response(s, head_request, guest_keep_alive, inj);
}

/* One request and its response. 1: go on with the next; 0: stop. */
static int serve_one(struct session *s)
{
    struct http_head h;
    bool eof;
    enum http_result r = read_head(s->guest, s->in, &s->in_len, false, &h, &eof);
    if (r != HTTP_COMPLETE) {
        if (!eof)
            answer(s, r == HTTP_TOO_LARGE ? 431 : 400,
                   r == HTTP_TOO_LARGE ? "Request Header Fields Too Large" : "Bad Request",
                   "malformed_request", "not a valid HTTP/1.x request head");
        return 0;
    }
    char method[HTTP_METHOD_MAX + 1], target[HTTP_TARGET_MAX + 1], err[1024];
    snprintf(method, sizeof(method), "%.*s", (int)h.method.len, (const char *)s->in + h.method.off);
    snprintf(target, sizeof(target), "%.*s", (int)h.target.len, (const char *)s->in + h.target.off);
    struct http_body body;
    if (!names_connection_host(s->in, &h, s->env->name)) {
        answer(s, 421, "Misdirected Request", "host_mismatch",
               "every request on this connection must name %s in Host, once", s->env->name);
        return 0;
    }
    if (strcmp(method, "CONNECT") == 0 || http_request_body(s->in, &h, &body) < 0) {
        answer(s, 400, "Bad Request", "malformed_request",
               "CONNECT, or a body framing egress does not accept (Content-Length with "
               "Transfer-Encoding, two lengths, a coding other than chunked)");
        return 0;
    }
    s->st->requests++;
    /* The upstream first: a credential is taken from its budget (and
     * audited) only for a request that can go out. */
    if (ensure_upstream(s, err, sizeof(err)) < 0) {
        log_refusal(s, "upstream unavailable", method, err);
        answer(s, 502, "Bad Gateway", "upstream_unavailable", "%s", err);
        return 0;
    }
    Airlock__Vault__V1__Injection *inj = NULL;
    grpc_status_code vst = s->env->resolve ? s->env->resolve(s->env->ctx, method, target, &inj,
                                                             err, sizeof(err))
                                           : GRPC_STATUS_NOT_FOUND;
    if (vst == GRPC_STATUS_RESOURCE_EXHAUSTED) {
        log_refusal(s, "credential rate limit reached", method, err);
        answer(s, 429, "Too Many Requests", "rate_limited",
               "the rate limit of the credential for %s is reached; the request was not sent",
               s->env->name);
        return 0;
    }
    if (vst == GRPC_STATUS_PERMISSION_DENIED) {
        /* A secret bound for TLS only, asked for by plain HTTP: the
         * secret would cross the network in clear. */
        log_refusal(s, "credential refused over plain HTTP", method, err);
        answer(s, 403, "Forbidden", "plaintext_refused",
               "the credential for %s goes into TLS connections only, the request was not "
               "sent: %s", s->env->name, err);
        return 0;
    }
    if (vst == GRPC_STATUS_FAILED_PRECONDITION) {
        /* A BYOK project that is not unlocked: the agent's operator can
         * fix it (POST /v1/secrets/unlock), so say so rather than 502. */
        log_refusal(s, "credential locked", method, err);
        answer(s, 503, "Service Unavailable", "credential_locked",
               "the credential for %s is locked, the request was not sent: %s", s->env->name,
               err);
        return 0;
    }
    if (vst != GRPC_STATUS_OK && vst != GRPC_STATUS_NOT_FOUND) {
        log_refusal(s, "credential unavailable", method, err);
        answer(s, 502, "Bad Gateway", "credential_unavailable",
               "no credential for %s, the request was not sent: %s", s->env->name, err);
        return 0;
    }
    if (inj && !injection_safe(inj)) {
        answer(s, 502, "Bad Gateway", "credential_unusable",
               "the credential for %s cannot go into a header line", s->env->name);
        vault_injection_free(inj);
        return 0;
    }
    int rc = forward(s, &h, &body, inj, method);
    vault_injection_free(inj);
    return rc;
}

void http_inject_serve(const struct http_inject_env *env, struct conn_stream *guest,
                       const uint8_t *prefix, size_t prefix_len, struct http_inject_stats *st)
{
    memset(st, 0, sizeof(*st));
    struct session s = { .env = env, .guest = guest, .st = st };
    s.in = malloc(BUF_CAP);
    s.uin = malloc(BUF_CAP);
    if (!s.in || !s.uin || prefix_len > BUF_CAP) {
        st->failure = "out_of_memory";
        goto out;
    }
    if (prefix_len)
        memcpy(s.in, prefix, prefix_len);
    s.in_len = prefix_len;
    while (serve_one(&s))
        ;
out:
    if (s.up_open)
        env->disconnect(env->ctx, &s.up);
    if (s.in)
        OPENSSL_cleanse(s.in, BUF_CAP);
    if (s.uin)
        OPENSSL_cleanse(s.uin, BUF_CAP);
    free(s.in);
    free(s.uin);
}
