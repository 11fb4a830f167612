#include "http_follow.h"

#include <stdlib.h>
#include <string.h>

#include "http_msg.h"
#include "names.h"
#include "sniff.h"

enum follow_state {
    ST_HEAD,    /* collecting a request head (held back) */
    ST_BODY,    /* remaining bytes of a Content-Length body */
    ST_CHUNKED, /* a chunked body */
    ST_OPAQUE,  /* switched protocols: no longer HTTP */
    ST_FAILED,
};

struct http_follow {
    http_follow_check_fn check;
    void *ctx;
    enum follow_state st;
    /* The head being collected: a first request's head had to fit into
     * SNIFF_MAX_BYTES too. */
    uint8_t head[SNIFF_MAX_BYTES];
    size_t head_len;
    struct http_head parsed;
    uint64_t remaining;
    struct http_chunked chunked;
    unsigned requests;    /* heads checked so far */
    bool upgrade_pending; /* the first request asked to switch protocols */
    uint8_t status[12];   /* "HTTP/1.x 101" */
    size_t status_len;
};

struct http_follow *http_follow_new(http_follow_check_fn check, void *ctx)
{
    struct http_follow *f = calloc(1, sizeof(*f));
    if (f) {
        f->check = check;
        f->ctx = ctx;
    }
    return f;
}

void http_follow_free(struct http_follow *f)
{
    free(f);
}

size_t http_follow_held(const struct http_follow *f)
{
    return f->st == ST_HEAD || f->st == ST_OPAQUE ? f->head_len : 0;
}

/* A complete head: checked, then its body framing decides the next state. */
static enum http_follow_result head_done(struct http_follow *f)
{
    char name[NAME_MAX_LEN + 1];
    struct http_head *h = &f->parsed;
    struct http_body body;
    enum sniff_result r = sniff_http_host(f->head, f->head_len, name);
    if (r == SNIFF_MALFORMED || r == SNIFF_NEED_MORE ||
        http_parse_request(f->head, f->head_len, h) != HTTP_COMPLETE || h->len != f->head_len ||
        http_request_body(f->head, h, &body) < 0)
        return HTTP_FOLLOW_MALFORMED;
    if (!f->check(f->ctx, r == SNIFF_FOUND ? name : NULL))
        return HTTP_FOLLOW_DENIED;
    if (f->requests++ == 0 && http_find_header(f->head, h, "upgrade", 0) >= 0)
        f->upgrade_pending = true;
    f->head_len = 0;
    if (body.kind == HTTP_BODY_CHUNKED) {
        f->st = ST_CHUNKED;
        memset(&f->chunked, 0, sizeof(f->chunked));
    } else if (body.kind == HTTP_BODY_LENGTH && body.length > 0) {
        f->st = ST_BODY;
        f->remaining = body.length;
    }
    return HTTP_FOLLOW_OK;
}

/* Collects head bytes from data; *used of them were taken. A blank line
 * before a request is not a head (servers skip it too): it passes. */
static enum http_follow_result head_bytes(struct http_follow *f, const uint8_t *data, size_t len,
                                          size_t *used, size_t *ready)
{
    size_t i = 0;
    enum http_follow_result r = HTTP_FOLLOW_OK;
    while (i < len && f->st == ST_HEAD && r == HTTP_FOLLOW_OK) {
        if (f->head_len == sizeof(f->head))
            return HTTP_FOLLOW_MALFORMED;
        f->head[f->head_len++] = data[i++];
        size_t n = f->head_len;
        if (n < 2 || f->head[n - 2] != '\r' || f->head[n - 1] != '\n')
            continue;
        if (n == 2) {
            f->head_len = 0;
            *ready += 2;
        } else if (n >= 4 && f->head[n - 4] == '\r' && f->head[n - 3] == '\n') {
            r = head_done(f);
            if (r == HTTP_FOLLOW_OK)
                *ready += n;
        }
    }
    *used = i;
    return r;
}

enum http_follow_result http_follow_feed(struct http_follow *f, const uint8_t *data, size_t len,
                                         size_t *ready)
{
    *ready = 0;
    enum http_follow_result r = f->st == ST_FAILED ? HTTP_FOLLOW_MALFORMED : HTTP_FOLLOW_OK;
    for (size_t i = 0; i < len && r == HTTP_FOLLOW_OK;) {
        size_t n = len - i;
        switch (f->st) {
        case ST_HEAD:
            r = head_bytes(f, data + i, len - i, &n, ready);
            break;
        case ST_BODY:
            if (n > f->remaining)
                n = (size_t)f->remaining;
            f->remaining -= n;
            *ready += n;
            if (f->remaining == 0)
                f->st = ST_HEAD;
            break;
        case ST_CHUNKED: {
            bool done;
            ssize_t k = http_chunked_scan(&f->chunked, data + i, n, &done);
            if (k < 0) {
                r = HTTP_FOLLOW_MALFORMED;
                break;
            }
            n = (size_t)k;
            *ready += n;
            if (done)
                f->st = ST_HEAD;
            break;
        }
        case ST_OPAQUE:
            /* A head begun before the switch, then everything. */
            *ready += f->head_len + n;
            f->head_len = 0;
            break;
        case ST_FAILED:
            r = HTTP_FOLLOW_MALFORMED;
            break;
        }
        i += n;
    }
    if (r != HTTP_FOLLOW_OK) {
        f->st = ST_FAILED;
        *ready = 0;
    }
    return r;
}

void http_follow_response(struct http_follow *f, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len && f->upgrade_pending && f->status_len < sizeof(f->status); i++)
        f->status[f->status_len++] = data[i];
    if (!f->upgrade_pending || f->status_len < sizeof(f->status))
        return;
    f->upgrade_pending = false;
    if (memcmp(f->status, "HTTP/1.", 7) == 0 && f->status[8] == ' ' &&
        memcmp(f->status + 9, "101", 3) == 0 && f->st != ST_FAILED)
        f->st = ST_OPAQUE;
}
