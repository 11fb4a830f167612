#include "airlock_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int airlock_error_set(struct airlock_error *e, enum airlock_err class, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
    e->class = class;
    return -1;
}

int airlock_error_prefix(struct airlock_error *e, const char *fmt, ...)
{
    char inner[sizeof(e->message)];
    memcpy(inner, e->message, sizeof(inner));
    inner[sizeof(inner) - 1] = '\0';
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof(e->message))
        snprintf(e->message + n, sizeof(e->message) - (size_t)n, "%s", inner);
    return -1;
}

int airlock_error_suffix(struct airlock_error *e, const char *fmt, ...)
{
    char tail[sizeof(e->message)];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tail, sizeof(tail), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    size_t len = strnlen(e->message, sizeof(e->message) - 1), tail_len = strlen(tail);
    size_t room = sizeof(e->message) - 1 - tail_len;
    if (len > room) /* the message is cut, not what follows it */
        len = room;
    memcpy(e->message + len, tail, tail_len + 1);
    return -1;
}

int airlock_error_classify(struct airlock_error *e, enum airlock_err class)
{
    e->message[sizeof(e->message) - 1] = '\0'; /* whatever the writer did */
    e->class = class;
    return -1;
}

void airlock_error_clear(struct airlock_error *e)
{
    e->class = AIRLOCK_OK;
    e->message[0] = '\0';
}

bool airlock_error_is_set(const struct airlock_error *e)
{
    return e->class != AIRLOCK_OK;
}
