#include "dns_wire.h"

#include <string.h>

#define DNS_HEADER_LEN 12
#define DNS_FLAG_QR 0x8000
#define DNS_FLAG_RD 0x0100
#define DNS_FLAG_RA 0x0080
#define DNS_OPCODE_MASK 0x7800

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

/* Skips a possibly compressed name starting at *off; with text != NULL
 * also writes it dotted (at most NAME_MAX_LEN + 1 bytes; longer names or
 * pointers make text invalid: *text_ok = 0). -1 when malformed. */
static int name_skip(const uint8_t *msg, size_t len, size_t *off, char *text, int *text_ok)
{
    size_t pos = *off, out = 0;
    int jumped = 0;
    size_t hops = 0;
    if (text_ok)
        *text_ok = 1;
    for (;;) {
        if (pos >= len)
            return -1;
        uint8_t l = msg[pos];
        if (l == 0) {
            if (!jumped)
                *off = pos + 1;
            break;
        }
        if ((l & 0xc0) == 0xc0) {
            if (pos + 1 >= len || ++hops > 16)
                return -1;
            size_t target = ((size_t)(l & 0x3f) << 8) | msg[pos + 1];
            if (target >= pos) /* only backwards: no loops */
                return -1;
            if (!jumped)
                *off = pos + 2;
            jumped = 1;
            if (text_ok)
                *text_ok = 0; /* questions from guests never need pointers */
            pos = target;
            continue;
        }
        if (l & 0xc0)
            return -1;
        if (pos + 1 + l > len)
            return -1;
        if (text && text_ok && *text_ok) {
            /* A dot inside a label would read as two labels. */
            if (out + l + 1 > NAME_MAX_LEN || memchr(msg + pos + 1, '.', l)) {
                *text_ok = 0;
            } else {
                if (out)
                    text[out++] = '.';
                memcpy(text + out, msg + pos + 1, l);
                out += l;
            }
        }
        pos += 1 + (size_t)l;
    }
    if (text && text_ok && *text_ok)
        text[out] = '\0';
    return 0;
}

int dns_parse_query(const uint8_t *msg, size_t len, struct dns_question *q)
{
    memset(q, 0, sizeof(*q));
    if (len < DNS_HEADER_LEN)
        return -1;
    uint16_t flags = get16(msg + 2);
    if ((flags & DNS_FLAG_QR) || (flags & DNS_OPCODE_MASK) || get16(msg + 4) != 1)
        return -1;
    q->id = get16(msg);
    size_t off = DNS_HEADER_LEN;
    char raw[NAME_MAX_LEN + 1];
    int raw_ok;
    if (name_skip(msg, len, &off, raw, &raw_ok) < 0 || off + 4 > len)
        return -1;
    q->qtype = get16(msg + off);
    q->qclass = get16(msg + off + 2);
    q->end = off + 4;
    q->name_valid = raw_ok && name_normalize(raw, strlen(raw), q->name) == 0;
    return 0;
}

size_t dns_build_answer(const uint8_t *query, const struct dns_question *q, enum dns_rcode rcode,
                        const uint32_t *addrs, size_t n_addrs, uint32_t ttl, uint8_t *out,
                        size_t outlen)
{
    size_t need = q->end + n_addrs * 16;
    if (need > outlen)
        return 0;
    memcpy(out, query, q->end);
    put16(out + 2, (uint16_t)(DNS_FLAG_QR | (get16(query + 2) & DNS_FLAG_RD) | DNS_FLAG_RA |
                              (uint16_t)rcode));
    put16(out + 4, 1);
    put16(out + 6, (uint16_t)n_addrs);
    put16(out + 8, 0);
    put16(out + 10, 0);
    uint8_t *p = out + q->end;
    for (size_t i = 0; i < n_addrs; i++, p += 16) {
        put16(p, 0xc000 | DNS_HEADER_LEN); /* the question's name */
        put16(p + 2, DNS_TYPE_A);
        put16(p + 4, DNS_CLASS_IN);
        put32(p + 6, ttl);
        put16(p + 10, 4);
        put32(p + 12, addrs[i]);
    }
    return need;
}

size_t dns_build_formerr(const uint8_t *query, size_t len, uint8_t *out, size_t outlen)
{
    if (len < DNS_HEADER_LEN || outlen < DNS_HEADER_LEN)
        return 0;
    memset(out, 0, DNS_HEADER_LEN);
    memcpy(out, query, 2);
    put16(out + 2, DNS_FLAG_QR | DNS_RCODE_FORMERR);
    return DNS_HEADER_LEN;
}

size_t dns_build_query(uint16_t id, const char *name, uint16_t qtype, uint8_t *out,
                       size_t outlen)
{
    size_t nl = strlen(name);
    size_t need = DNS_HEADER_LEN + nl + 2 + 4;
    if (need > outlen)
        return 0;
    memset(out, 0, DNS_HEADER_LEN);
    put16(out, id);
    put16(out + 2, DNS_FLAG_RD);
    put16(out + 4, 1);
    uint8_t *p = out + DNS_HEADER_LEN;
    const char *label = name;
    for (;;) {
        const char *dot = strchr(label, '.');
        size_t ll = dot ? (size_t)(dot - label) : strlen(label);
        *p++ = (uint8_t)ll;
        memcpy(p, label, ll);
        p += ll;
        if (!dot)
            break;
        label = dot + 1;
    }
    *p++ = 0;
    put16(p, qtype);
    put16(p + 2, DNS_CLASS_IN);
    return need;
}

int dns_parse_reply_a(const uint8_t *msg, size_t len, uint16_t id, uint32_t *addrs, size_t max,
                      size_t *n_addrs, uint32_t *ttl, int *rcode)
{
    *n_addrs = 0;
    *ttl = UINT32_MAX;
    if (len < DNS_HEADER_LEN || get16(msg) != id || !(get16(msg + 2) & DNS_FLAG_QR))
        return -1;
    *rcode = get16(msg + 2) & 0xf;
    size_t qd = get16(msg + 4), an = get16(msg + 6);
    size_t off = DNS_HEADER_LEN;
    for (size_t i = 0; i < qd; i++) {
        if (name_skip(msg, len, &off, NULL, NULL) < 0 || off + 4 > len)
            return -1;
        off += 4;
    }
    for (size_t i = 0; i < an; i++) {
        if (name_skip(msg, len, &off, NULL, NULL) < 0 || off + 10 > len)
            return -1;
        uint16_t type = get16(msg + off), klass = get16(msg + off + 2);
        uint32_t rr_ttl = ((uint32_t)get16(msg + off + 4) << 16) | get16(msg + off + 6);
        size_t rdlen = get16(msg + off + 8);
        off += 10;
        if (off + rdlen > len)
            return -1;
        if (type == DNS_TYPE_A && klass == DNS_CLASS_IN && rdlen == 4 && *n_addrs < max) {
            addrs[(*n_addrs)++] = ((uint32_t)get16(msg + off) << 16) | get16(msg + off + 2);
            if (rr_ttl < *ttl)
                *ttl = rr_ttl;
        }
        off += rdlen;
    }
    if (*n_addrs == 0)
        *ttl = 0;
    return 0;
}
