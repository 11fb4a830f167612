#include "sniff.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#define TLS_RECORD_HANDSHAKE 0x16
#define TLS_HANDSHAKE_CLIENT_HELLO 0x01
#define TLS_EXT_SERVER_NAME 0x0000
#define TLS_EXT_ENCRYPTED_CLIENT_HELLO 0xfe0d /* draft-ietf-tls-esni (ECH) */
#define TLS_EXT_ENCRYPTED_SERVER_NAME 0xffce  /* the older ESNI drafts */
#define TLS_SNI_HOST_NAME 0x00

/* A bounds-checked reader over a byte range. */
struct reader {
    const uint8_t *p;
    size_t left;
    bool bad;
};

static uint32_t rd_uint(struct reader *r, size_t n)
{
    uint32_t v = 0;
    if (r->left < n) {
        r->bad = true;
        r->left = 0;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | r->p[i];
    r->p += n;
    r->left -= n;
    return v;
}

/* A sub-reader over the next n bytes, which the parent skips. */
static struct reader rd_sub(struct reader *r, size_t n)
{
    struct reader sub = { .p = r->p, .left = n };
    if (r->left < n) {
        r->bad = true;
        r->left = 0;
        sub.left = 0;
        sub.bad = true;
        return sub;
    }
    r->p += n;
    r->left -= n;
    return sub;
}

/* The ClientHello body (after the 4-byte handshake header). */
static enum sniff_result parse_client_hello(struct reader hello, char *name)
{
    rd_uint(&hello, 2);                       /* legacy_version */
    rd_sub(&hello, 32);                       /* random */
    rd_sub(&hello, rd_uint(&hello, 1));       /* legacy_session_id */
    rd_sub(&hello, rd_uint(&hello, 2));       /* cipher_suites */
    rd_sub(&hello, rd_uint(&hello, 1));       /* legacy_compression_methods */
    if (hello.bad)
        return SNIFF_MALFORMED;
    if (hello.left == 0)
        return SNIFF_NONE; /* no extensions at all */
    struct reader exts = rd_sub(&hello, rd_uint(&hello, 2));
    if (hello.bad || hello.left != 0)
        return SNIFF_MALFORMED;
    bool found = false, hidden = false;
    name[0] = '\0';
    while (exts.left > 0) {
        uint32_t type = rd_uint(&exts, 2);
        struct reader ext = rd_sub(&exts, rd_uint(&exts, 2));
        if (exts.bad)
            return SNIFF_MALFORMED;
        hidden |= type == TLS_EXT_ENCRYPTED_CLIENT_HELLO || type == TLS_EXT_ENCRYPTED_SERVER_NAME;
        if (type != TLS_EXT_SERVER_NAME)
            continue;
        /* Two server_name extensions or two names: which one would the
         * server use? Refuse rather than guess. */
        if (found)
            return SNIFF_MALFORMED;
        struct reader list = rd_sub(&ext, rd_uint(&ext, 2));
        if (ext.bad || ext.left != 0)
            return SNIFF_MALFORMED;
        uint32_t name_type = rd_uint(&list, 1);
        struct reader host = rd_sub(&list, rd_uint(&list, 2));
        if (list.bad || list.left != 0 || name_type != TLS_SNI_HOST_NAME)
            return SNIFF_MALFORMED;
        if (name_normalize((const char *)host.p, host.left, name) < 0)
            return SNIFF_MALFORMED;
        found = true;
    }
    return hidden ? SNIFF_NAME_HIDDEN : found ? SNIFF_FOUND : SNIFF_NONE;
}

enum sniff_result sniff_tls_sni(const uint8_t *buf, size_t len, char *name)
{
    /* The ClientHello may be split over several handshake records (a known
     * evasion of single-record parsers): reassemble their payloads. */
    uint8_t hs[SNIFF_MAX_BYTES];
    size_t hs_len = 0;
    struct reader in = { .p = buf, .left = len };
    for (;;) {
        if (hs_len >= 4) {
            size_t body = ((size_t)hs[1] << 16) | ((size_t)hs[2] << 8) | hs[3];
            if (hs[0] != TLS_HANDSHAKE_CLIENT_HELLO || body + 4 > sizeof(hs))
                return SNIFF_MALFORMED;
            if (hs_len >= body + 4) {
                struct reader hello = { .p = hs + 4, .left = body };
                return parse_client_hello(hello, name);
            }
        }
        if (in.left < 5)
            return len >= SNIFF_MAX_BYTES ? SNIFF_MALFORMED : SNIFF_NEED_MORE;
        uint32_t type = rd_uint(&in, 1);
        uint32_t major = rd_uint(&in, 1);
        rd_uint(&in, 1);
        size_t rec_len = rd_uint(&in, 2);
        if (type != TLS_RECORD_HANDSHAKE || major != 3 || rec_len == 0 || rec_len > 16384)
            return SNIFF_MALFORMED;
        if (in.left < rec_len)
            return len >= SNIFF_MAX_BYTES ? SNIFF_MALFORMED : SNIFF_NEED_MORE;
        if (hs_len + rec_len > sizeof(hs))
            return SNIFF_MALFORMED;
        memcpy(hs + hs_len, in.p, rec_len);
        hs_len += rec_len;
        rd_sub(&in, rec_len);
    }
}

static const uint8_t *find_bytes(const uint8_t *buf, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(buf + i, needle, n) == 0)
            return buf + i;
    return NULL;
}

int sniff_authority_host(const char *s, size_t len, char *name)
{
    const char *colon = memchr(s, ':', len);
    if (colon) {
        size_t plen = len - (size_t)(colon - s) - 1;
        if (plen == 0 || plen > 5)
            return -1;
        for (size_t i = 0; i < plen; i++)
            if (colon[1 + i] < '0' || colon[1 + i] > '9')
                return -1;
        len = (size_t)(colon - s);
    }
    return name_normalize(s, len, name);
}

static bool is_token_char(uint8_t c)
{
    return c > 0x20 && c < 0x7f && !strchr("()<>@,;:\\\"/[]?={}", c);
}

bool sniff_http_is_request(const uint8_t *buf, size_t len)
{
    size_t i = 0;
    while (i < len && i < 32 && is_token_char(buf[i]))
        i++;
    if (i == 0 || i >= len || buf[i] != ' ')
        return false;
    size_t target = ++i;
    while (i < len && buf[i] > 0x20 && buf[i] < 0x7f)
        i++;
    static const char version[] = " HTTP/1.";
    if (i == target || len - i < sizeof(version) + 2 ||
        memcmp(buf + i, version, sizeof(version) - 1) != 0)
        return false;
    i += sizeof(version) - 1;
    return buf[i] >= '0' && buf[i] <= '9' && buf[i + 1] == '\r' && buf[i + 2] == '\n';
}

static bool has_bare_cr_or_lf(const uint8_t *line, size_t len)
{
    return memchr(line, '\r', len) || memchr(line, '\n', len);
}

/* "name:" with name a non-empty token. */
static bool is_field_line(const uint8_t *line, size_t len)
{
    size_t i = 0;
    while (i < len && is_token_char(line[i]))
        i++;
    return i > 0 && i < len && line[i] == ':';
}

static bool is_ascii_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int sniff_target_authority(const char *t, size_t len, const char **auth, size_t *alen)
{
    /* Only visible ASCII, as http_msg's request line takes: a server
     * decoding other bytes its own way could see another target. */
    for (size_t k = 0; k < len; k++)
        if ((unsigned char)t[k] <= 0x20 || (unsigned char)t[k] >= 0x7f)
            return -1;
    if (len > 0 && t[0] == '/')
        return 0;
    if (len == 1 && t[0] == '*')
        return 0;
    /* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986) */
    size_t i = 0;
    while (i < len && (is_ascii_alpha(t[i]) ||
                       (i > 0 && ((t[i] >= '0' && t[i] <= '9') || t[i] == '+' || t[i] == '-' ||
                                   t[i] == '.'))))
        i++;
    if (i == 0 || len - i < 3 || memcmp(t + i, "://", 3) != 0)
        return -1;
    i += 3;
    size_t start = i;
    while (i < len && t[i] != '/' && t[i] != '?' && t[i] != '#')
        i++;
    if (i == start)
        return -1;
    *auth = t + start;
    *alen = i - start;
    return 1;
}

enum sniff_result sniff_http_host(const uint8_t *buf, size_t len, char *name)
{
    /* Request line: METHOD SP target SP HTTP/1.x — anything else is not
     * HTTP and claims no name. */
    size_t m = 0;
    while (m < len && m < 32 && is_token_char(buf[m]))
        m++;
    if (m == len)
        return len >= SNIFF_MAX_BYTES ? SNIFF_NONE : SNIFF_NEED_MORE;
    if (m == 0 || buf[m] != ' ')
        return SNIFF_NONE;
    const uint8_t *end = find_bytes(buf, len, "\r\n\r\n");
    if (!end)
        return len >= SNIFF_MAX_BYTES ? SNIFF_MALFORMED : SNIFF_NEED_MORE;
    size_t head_len = (size_t)(end - buf) + 2; /* keep the last line's CRLF */
    const uint8_t *line_end = find_bytes(buf, head_len, "\r\n");
    const uint8_t *target = buf + m + 1;
    const uint8_t *target_end = memchr(target, ' ', (size_t)(line_end - target));
    if (!target_end || (size_t)(line_end - target_end) < 9 ||
        memcmp(target_end + 1, "HTTP/1.", 7) != 0)
        return SNIFF_MALFORMED;
    /* egress is not a proxy: CONNECT would ask it to tunnel elsewhere. */
    if (m == 7 && memcmp(buf, "CONNECT", 7) == 0)
        return SNIFF_MALFORMED;
    if (has_bare_cr_or_lf(buf, (size_t)(line_end - buf)))
        return SNIFF_MALFORMED;

    bool have_host = false;
    for (const uint8_t *line = line_end + 2; line < buf + head_len;) {
        const uint8_t *eol = find_bytes(line, (size_t)(buf + head_len - line), "\r\n");
        if (!eol)
            return SNIFF_MALFORMED;
        size_t ll = (size_t)(eol - line);
        /* Folded header lines could hide a second Host: refuse. */
        if (ll > 0 && (line[0] == ' ' || line[0] == '\t'))
            return SNIFF_MALFORMED;
        /* A bare LF ends a line for some servers, and "Host :" is a Host
         * for some: only "token:" fields on CRLF lines are unambiguous. */
        if (has_bare_cr_or_lf(line, ll) || (ll > 0 && !is_field_line(line, ll)))
            return SNIFF_MALFORMED;
        if (ll >= 5 && strncasecmp((const char *)line, "host:", 5) == 0) {
            if (have_host)
                return SNIFF_MALFORMED;
            const char *v = (const char *)line + 5;
            size_t vl = ll - 5;
            while (vl > 0 && (*v == ' ' || *v == '\t'))
                v++, vl--;
            while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                vl--;
            if (sniff_authority_host(v, vl, name) < 0)
                return SNIFF_MALFORMED;
            have_host = true;
        }
        line = eol + 2;
    }
    /* An absolute-form target ("GET http://x/ HTTP/1.1", any scheme) must
     * name the same host as Host, or the two could point different ways. */
    const char *auth;
    size_t al;
    int form = sniff_target_authority((const char *)target, (size_t)(target_end - target), &auth,
                                      &al);
    if (form < 0)
        return SNIFF_MALFORMED;
    if (form == 1) {
        char target_host[NAME_MAX_LEN + 1];
        if (!have_host || sniff_authority_host(auth, al, target_host) < 0 ||
            strcmp(target_host, name) != 0)
            return SNIFF_MALFORMED;
    }
    return have_host ? SNIFF_FOUND : SNIFF_NONE;
}

enum sniff_result sniff_name(const uint8_t *buf, size_t len, char *name)
{
    if (len == 0)
        return SNIFF_NEED_MORE;
    if (buf[0] == TLS_RECORD_HANDSHAKE)
        return sniff_tls_sni(buf, len, name);
    return sniff_http_host(buf, len, name);
}
