#include "http_head.h"

#include <http_parser.h>
#include <string.h>
#include <strings.h>

struct parse_state {
    struct http_head *h;
    bool complete, too_many;
};

static int on_url(http_parser *p, const char *at, size_t len)
{
    struct http_head *h = ((struct parse_state *)p->data)->h;
    if (!h->target)
        h->target = at;
    h->target_len = (size_t)(at + len - h->target); /* a URL may come in pieces */
    return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    struct parse_state *st = p->data;
    struct http_head *h = st->h;
    if (h->n_headers && h->headers[h->n_headers - 1].value == NULL) {
        h->headers[h->n_headers - 1].name_len += len; /* the rest of the same name */
        return 0;
    }
    if (h->n_headers == HTTP_HEAD_MAX_HEADERS) {
        st->too_many = true;
        return 1;
    }
    h->headers[h->n_headers++] = (struct http_head_field){ .name = at, .name_len = len };
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    struct http_head *h = ((struct parse_state *)p->data)->h;
    struct http_head_field *f = &h->headers[h->n_headers - 1];
    if (!f->value)
        f->value = at;
    f->value_len = (size_t)(at + len - f->value);
    return 0;
}

/* Stops at the end of the head: the body is not the ingress's to read. */
static int on_headers_complete(http_parser *p)
{
    ((struct parse_state *)p->data)->complete = true;
    http_parser_pause(p, 1);
    return 0;
}

enum http_head_status http_head_parse(const char *buf, size_t len, struct http_head *h)
{
    memset(h, 0, sizeof(*h));
    http_parser_settings settings;
    http_parser_settings_init(&settings);
    settings.on_url = on_url;
    settings.on_header_field = on_header_field;
    settings.on_header_value = on_header_value;
    settings.on_headers_complete = on_headers_complete;
    struct parse_state st = { .h = h };
    http_parser parser;
    http_parser_init(&parser, HTTP_REQUEST);
    parser.data = &st;
    http_parser_execute(&parser, &settings, buf, len);
    if (st.complete)
        return HTTP_HEAD_COMPLETE;
    if (st.too_many || HTTP_PARSER_ERRNO(&parser) != HPE_OK)
        return HTTP_HEAD_INVALID;
    return HTTP_HEAD_INCOMPLETE;
}

static bool copy_out(const char *v, size_t n, char *out, size_t outlen)
{
    if (n >= outlen)
        return false;
    memcpy(out, v, n);
    out[n] = 0;
    return true;
}

bool http_head_get(const struct http_head *h, const char *name, char *out, size_t outlen)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < h->n_headers; i++) {
        const struct http_head_field *f = &h->headers[i];
        if (f->name_len == n && strncasecmp(f->name, name, n) == 0)
            return copy_out(f->value ? f->value : "", f->value_len, out, outlen);
    }
    return false;
}

/* name=value in s[0..len) split by sep (and optional spaces after it). */
static bool find_pair(const char *s, size_t len, char sep, const char *name, char *out,
                      size_t outlen)
{
    size_t n = strlen(name);
    const char *end = s + len;
    while (s < end) {
        while (s < end && *s == ' ')
            s++;
        const char *next = memchr(s, sep, (size_t)(end - s));
        const char *stop = next ? next : end;
        if ((size_t)(stop - s) > n && strncmp(s, name, n) == 0 && s[n] == '=')
            return copy_out(s + n + 1, (size_t)(stop - s - (ptrdiff_t)n - 1), out, outlen);
        s = next ? next + 1 : end;
    }
    return false;
}

bool http_head_query(const struct http_head *h, const char *name, char *out, size_t outlen)
{
    const char *q = h->target ? memchr(h->target, '?', h->target_len) : NULL;
    if (!q)
        return false;
    return find_pair(q + 1, (size_t)(h->target + h->target_len - q - 1), '&', name, out, outlen);
}

bool http_head_cookie(const struct http_head *h, const char *name, char *out, size_t outlen)
{
    for (size_t i = 0; i < h->n_headers; i++) {
        const struct http_head_field *f = &h->headers[i];
        if (f->name_len == 6 && strncasecmp(f->name, "Cookie", 6) == 0 && f->value &&
            find_pair(f->value, f->value_len, ';', name, out, outlen))
            return true;
    }
    return false;
}
