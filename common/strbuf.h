/* A growing NUL-terminated string. Allocation failure is remembered
 * (strbuf_failed) instead of being checked after every append. */
#ifndef AIRLOCK_STRBUF_H
#define AIRLOCK_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
    char *data; /* NULL until the first append; strbuf_str() never returns NULL */
    size_t len;
    size_t cap;
    bool oom;
};

void strbuf_append(struct strbuf *sb, const char *s);
void strbuf_append_n(struct strbuf *sb, const char *s, size_t n);
void strbuf_appendf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *strbuf_str(const struct strbuf *sb);
bool strbuf_failed(const struct strbuf *sb);
void strbuf_free(struct strbuf *sb);

#endif
