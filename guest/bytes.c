#include "bytes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *bytes_to_cstr(const ProtobufCBinaryData *b)
{
    if (b->len && memchr(b->data, 0, b->len)) {
        errno = EINVAL;
        return NULL;
    }
    char *s = malloc(b->len + 1);
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    if (b->len)
        memcpy(s, b->data, b->len);
    s[b->len] = '\0';
    return s;
}

char *bytes_to_path(const ProtobufCBinaryData *b)
{
    if (b->len == 0) {
        errno = EINVAL;
        return NULL;
    }
    char *s = bytes_to_cstr(b);
    if (!s || s[0] == '/')
        return s;
    char *abs = malloc(b->len + 2);
    if (abs) {
        abs[0] = '/';
        memcpy(abs + 1, s, b->len + 1);
    } else {
        errno = ENOMEM;
    }
    free(s);
    return abs;
}

struct quoted quoted_bytes(const void *data, size_t len)
{
    struct quoted q;
    const unsigned char *p = data;
    size_t o = 0;
    const size_t room = sizeof(q.s) - 5; /* closing quote, "...", NUL */
    q.s[o++] = '"';
    size_t i;
    for (i = 0; i < len; i++) {
        unsigned char c = p[i];
        bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
        if (o + (plain ? 1 : 4) > room)
            break;
        if (plain)
            q.s[o++] = (char)c;
        else
            o += (size_t)snprintf(q.s + o, 5, "\\x%02x", c);
    }
    q.s[o++] = '"';
    if (i < len) {
        memcpy(q.s + o, "...", 3);
        o += 3;
    }
    q.s[o] = '\0';
    return q;
}

struct quoted quoted(const char *s)
{
    return quoted_bytes(s, strlen(s));
}
