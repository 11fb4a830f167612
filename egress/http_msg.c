#include "http_msg.h"

#include <string.h>
#include <strings.h>

#define CHUNK_LINE_MAX 4096
#define CHUNK_SIZE_DIGITS_MAX 15 /* < 2^60: no overflow */
#define CONTENT_LENGTH_DIGITS_MAX 18

static bool is_tchar(uint8_t c)
{
    return c > 0x20 && c < 0x7f && !strchr("()<>@,;:\\\"/[]?={}", c);
}

/* VCHAR, obs-text, SP and HTAB: what a field value or reason phrase may
 * hold. */
static bool is_field_char(uint8_t c)
{
    return c == '\t' || c == ' ' || (c > 0x20 && c != 0x7f);
}

static bool is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* The end of the head (just past its blank line), or 0 when it is not in
 * buf yet. */
static size_t head_end(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i + 4 <= len; i++)
        if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n')
            return i + 4;
    return 0;
}

static struct http_span span(size_t off, size_t len)
{
    return (struct http_span){ (uint32_t)off, (uint32_t)len };
}

/* "HTTP/1.0" or "HTTP/1.1" at p; sets minor. */
static bool parse_version(const uint8_t *p, size_t left, unsigned *minor)
{
    if (left < 8 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1'))
        return false;
    *minor = (unsigned)(p[7] - '0');
    return true;
}

/* Header lines from pos to the blank line that ends the head at end. */
static enum http_result parse_headers(const uint8_t *buf, size_t pos, size_t end,
                                      struct http_head *h)
{
    while (pos < end - 2) {
        if (h->n_headers == HTTP_HEADERS_MAX)
            return HTTP_TOO_LARGE;
        size_t name = pos;
        while (pos < end && is_tchar(buf[pos]))
            pos++;
        /* Also refuses folded lines (leading blank) and "Name :". */
        if (pos == name || buf[pos] != ':')
            return HTTP_MALFORMED;
        size_t name_len = pos - name;
        pos++;
        while (buf[pos] == ' ' || buf[pos] == '\t')
            pos++;
        size_t value = pos;
        while (is_field_char(buf[pos]))
            pos++;
        if (buf[pos] != '\r' || buf[pos + 1] != '\n')
            return HTTP_MALFORMED;
        size_t value_end = pos;
        while (value_end > value && (buf[value_end - 1] == ' ' || buf[value_end - 1] == '\t'))
            value_end--;
        h->headers[h->n_headers++] = (struct http_header){ span(name, name_len),
                                                           span(value, value_end - value) };
        pos += 2;
    }
    return HTTP_COMPLETE;
}

/* The blank line is found first, so the line parsers below may read up to
 * it without further length checks: every line ends in CRLF before end. */
static enum http_result find_head(const uint8_t *buf, size_t len, size_t *end)
{
    *end = head_end(buf, len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX);
    if (*end)
        return HTTP_COMPLETE;
    return len >= HTTP_HEAD_MAX ? HTTP_TOO_LARGE : HTTP_NEED_MORE;
}

enum http_result http_parse_request(const uint8_t *buf, size_t len, struct http_head *h)
{
    size_t end;
    enum http_result r = find_head(buf, len, &end);
    if (r != HTTP_COMPLETE)
        return r;
    memset(h, 0, sizeof(*h));
    size_t pos = 0;
    while (is_tchar(buf[pos]) && pos < HTTP_METHOD_MAX)
        pos++;
    if (pos == 0 || buf[pos] != ' ')
        return HTTP_MALFORMED;
    h->method = span(0, pos);
    size_t target = ++pos;
    while (buf[pos] > 0x20 && buf[pos] < 0x7f)
        pos++;
    if (pos == target || pos - target > HTTP_TARGET_MAX || buf[pos] != ' ')
        return HTTP_MALFORMED;
    h->target = span(target, pos - target);
    pos++;
    if (!parse_version(buf + pos, end - pos, &h->minor) || buf[pos + 8] != '\r' ||
        buf[pos + 9] != '\n')
        return HTTP_MALFORMED;
    r = parse_headers(buf, pos + 10, end, h);
    h->len = end;
    return r;
}

enum http_result http_parse_response(const uint8_t *buf, size_t len, struct http_head *h)
{
    size_t end;
    enum http_result r = find_head(buf, len, &end);
    if (r != HTTP_COMPLETE)
        return r;
    memset(h, 0, sizeof(*h));
    if (!parse_version(buf, end, &h->minor) || buf[8] != ' ' || !is_digit(buf[9]) ||
        !is_digit(buf[10]) || !is_digit(buf[11]))
        return HTTP_MALFORMED;
    h->status = (unsigned)((buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0'));
    if (h->status < 100 || h->status > 599)
        return HTTP_MALFORMED;
    size_t pos = 12;
    /* "HTTP/1.1 200\r\n" without a reason is common enough to accept. */
    if (buf[pos] == ' ')
        while (is_field_char(buf[++pos]))
            ;
    if (buf[pos] != '\r' || buf[pos + 1] != '\n')
        return HTTP_MALFORMED;
    r = parse_headers(buf, pos + 2, end, h);
    h->len = end;
    return r;
}

bool http_span_equals(const uint8_t *buf, struct http_span s, const char *text)
{
    return strlen(text) == s.len && strncasecmp((const char *)buf + s.off, text, s.len) == 0;
}

int http_find_header(const uint8_t *buf, const struct http_head *h, const char *name, size_t from)
{
    for (size_t i = from; i < h->n_headers; i++)
        if (http_span_equals(buf, h->headers[i].name, name))
            return (int)i;
    return -1;
}

bool http_has_token(const uint8_t *buf, const struct http_head *h, const char *name,
                    const char *token)
{
    for (int i = http_find_header(buf, h, name, 0); i >= 0;
         i = http_find_header(buf, h, name, (size_t)i + 1)) {
        struct http_span v = h->headers[i].value;
        size_t pos = v.off, end = (size_t)v.off + v.len;
        while (pos < end) {
            while (pos < end && (buf[pos] == ' ' || buf[pos] == '\t' || buf[pos] == ','))
                pos++;
            size_t start = pos;
            while (pos < end && buf[pos] != ',')
                pos++;
            size_t stop = pos;
            while (stop > start && (buf[stop - 1] == ' ' || buf[stop - 1] == '\t'))
                stop--;
            if (stop > start && http_span_equals(buf, span(start, stop - start), token))
                return true;
        }
    }
    return false;
}

/* The value of the only Content-Length header: 1 found, 0 none, -1 not a
 * number or more than one. */
static int content_length(const uint8_t *buf, const struct http_head *h, uint64_t *out)
{
    int i = http_find_header(buf, h, "content-length", 0);
    if (i < 0)
        return 0;
    if (http_find_header(buf, h, "content-length", (size_t)i + 1) >= 0)
        return -1;
    struct http_span v = h->headers[i].value;
    if (v.len == 0 || v.len > CONTENT_LENGTH_DIGITS_MAX)
        return -1;
    uint64_t n = 0;
    for (uint32_t k = 0; k < v.len; k++) {
        if (!is_digit(buf[v.off + k]))
            return -1;
        n = n * 10 + (uint64_t)(buf[v.off + k] - '0');
    }
    *out = n;
    return 1;
}

/* Transfer-Encoding: 0 none, 1 exactly "chunked" once, -1 anything else
 * (another coding, or a list a second reader might split differently). */
static int transfer_encoding(const uint8_t *buf, const struct http_head *h)
{
    int i = http_find_header(buf, h, "transfer-encoding", 0);
    if (i < 0)
        return 0;
    if (http_find_header(buf, h, "transfer-encoding", (size_t)i + 1) >= 0 ||
        !http_span_equals(buf, h->headers[i].value, "chunked"))
        return -1;
    return 1;
}

/* Chunked or a length from the headers; with neither, unframed (no body
 * for a request, up to the close for a response). */
static int body_from_headers(const uint8_t *buf, const struct http_head *h,
                             enum http_body_kind unframed, struct http_body *b)
{
    int te = transfer_encoding(buf, h);
    uint64_t n = 0;
    int cl = content_length(buf, h, &n);
    if (te < 0 || cl < 0 || (te && cl))
        return -1;
    *b = te ? (struct http_body){ HTTP_BODY_CHUNKED, 0 }
         : cl ? (struct http_body){ HTTP_BODY_LENGTH, n }
              : (struct http_body){ unframed, 0 };
    return 0;
}

/* Methods whose body has no defined meaning (RFC 9110 9.3): many servers
 * ignore one and read the next request from where the body starts, so a
 * body there is where a hidden request would go. */
static bool body_has_no_meaning(const uint8_t *buf, const struct http_head *h)
{
    static const char *const methods[] = { "GET", "HEAD", "DELETE", "OPTIONS", "TRACE" };
    for (size_t i = 0; i < sizeof(methods) / sizeof(*methods); i++)
        if (h->method.len == strlen(methods[i]) &&
            memcmp(buf + h->method.off, methods[i], h->method.len) == 0)
            return true;
    return false;
}

int http_request_body(const uint8_t *buf, const struct http_head *h, struct http_body *b)
{
    /* HTTP/1.0 has no transfer codings: a server might ignore it. */
    if (h->minor == 0 && http_find_header(buf, h, "transfer-encoding", 0) >= 0)
        return -1;
    if (body_from_headers(buf, h, HTTP_BODY_NONE, b) < 0)
        return -1;
    /* "Content-Length: 0" frames nothing either way. */
    if (body_has_no_meaning(buf, h) && b->kind != HTTP_BODY_NONE &&
        !(b->kind == HTTP_BODY_LENGTH && b->length == 0))
        return -1;
    return 0;
}

int http_response_body(const uint8_t *buf, const struct http_head *h, bool head_request,
                       struct http_body *b)
{
    if (head_request || h->status < 200 || h->status == 204 || h->status == 304) {
        *b = (struct http_body){ HTTP_BODY_NONE, 0 };
        return 0;
    }
    return body_from_headers(buf, h, HTTP_BODY_UNTIL_CLOSE, b);
}

bool http_keep_alive(const uint8_t *buf, const struct http_head *h)
{
    if (http_has_token(buf, h, "connection", "close"))
        return false;
    return h->minor == 1 || http_has_token(buf, h, "connection", "keep-alive");
}

enum {
    CH_SIZE,       /* hex digits of the chunk size */
    CH_EXT,        /* ";ext" up to CR */
    CH_SIZE_LF,
    CH_DATA,
    CH_DATA_CR,
    CH_DATA_LF,
    CH_TRAILER,    /* at the start of a trailer line or the final blank line */
    CH_TRAILER_LINE,
    CH_TRAILER_LF,
    CH_END_LF,
    CH_DONE,
};

static int hex_value(uint8_t c)
{
    if (is_digit(c))
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

/* States that take exactly one byte: which, and the state after it. */
static const struct {
    uint8_t want;
    int next;
} one_byte[CH_DONE] = {
    [CH_DATA_CR] = { '\r', CH_DATA_LF },
    [CH_DATA_LF] = { '\n', CH_SIZE },
    [CH_TRAILER_LF] = { '\n', CH_TRAILER },
    [CH_END_LF] = { '\n', CH_DONE },
};

ssize_t http_chunked_scan(struct http_chunked *c, const uint8_t *buf, size_t len, bool *done)
{
    *done = c->state == CH_DONE;
    size_t i = 0;
    while (i < len && !*done) {
        uint8_t b = buf[i];
        switch (c->state) {
        case CH_SIZE:
            if (hex_value(b) >= 0) {
                if (++c->digits > CHUNK_SIZE_DIGITS_MAX)
                    return -1;
                c->left = c->left * 16 + (uint64_t)hex_value(b);
            } else if (c->digits && (b == ';' || b == '\r')) {
                c->state = b == ';' ? CH_EXT : CH_SIZE_LF;
            } else {
                return -1;
            }
            break;
        case CH_EXT:
        case CH_TRAILER_LINE: /* up to CR, bounded */
            if (b == '\r')
                c->state = c->state == CH_EXT ? CH_SIZE_LF : CH_TRAILER_LF;
            else if (!is_field_char(b) || ++c->line > CHUNK_LINE_MAX)
                return -1;
            break;
        case CH_SIZE_LF:
            if (b != '\n')
                return -1;
            c->digits = 0;
            c->line = 0;
            c->state = c->left ? CH_DATA : CH_TRAILER;
            break;
        case CH_DATA: {
            size_t take = len - i < c->left ? len - i : (size_t)c->left;
            c->left -= take;
            i += take;
            if (c->left == 0)
                c->state = CH_DATA_CR;
            continue;
        }
        case CH_TRAILER:
            if (b == '\r') {
                c->state = CH_END_LF;
            } else if (is_tchar(b)) {
                c->line = 1;
                c->state = CH_TRAILER_LINE;
            } else {
                return -1;
            }
            break;
        default:
            if (c->state < 0 || c->state >= CH_DONE || !one_byte[c->state].want ||
                b != one_byte[c->state].want)
                return -1;
            c->state = one_byte[c->state].next;
            *done = c->state == CH_DONE;
            break;
        }
        i++;
    }
    return (ssize_t)i;
}
