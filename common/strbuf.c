#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct strbuf *sb, size_t extra)
{
    if (sb->oom)
        return false;
    if (sb->len + extra + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *bigger = realloc(sb->data, cap);
    if (!bigger) {
        sb->oom = true;
        return false;
    }
    sb->data = bigger;
    sb->cap = cap;
    return true;
}

void strbuf_append_n(struct strbuf *sb, const char *s, size_t n)
{
    if (!reserve(sb, n))
        return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void strbuf_append(struct strbuf *sb, const char *s)
{
    strbuf_append_n(sb, s, strlen(s));
}

void strbuf_appendf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

const char *strbuf_str(const struct strbuf *sb)
{
    return sb->data ? sb->data : "";
}

bool strbuf_failed(const struct strbuf *sb)
{
    return sb->oom;
}

void strbuf_free(struct strbuf *sb)
{
    free(sb->data);
    *sb = (struct strbuf){ 0 };
}
