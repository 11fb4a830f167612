#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LINE_MAX_TAIL 1024

static const char *log_service = "airlock";
static enum log_level log_min_level = LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_init(const char *service, enum log_level min_level)
{
    log_service = service;
    log_min_level = min_level;
}

static const char *log_level_name(enum log_level l)
{
    static const char *names[] = { "debug", "info", "warn", "error" };
    return names[l];
}

/* The line being built; what does not fit is cut. */
struct line {
    char *buf;
    size_t cap, len;
};

/* len stays below cap: the terminator always fits. */
static void put_char(struct line *l, char c)
{
    if (l->len + 1 < l->cap)
        l->buf[l->len++] = c;
    l->buf[l->len] = '\0';
}

static void put_raw(struct line *l, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put_char(l, s[i]);
}

static bool needs_quotes(const char *s, size_t n)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f)
            return true;
    }
    return false;
}

/* s inside double quotes: \ and " escaped, control bytes as \n, \r, \t
 * or \xHH, so no value can end its quotes or the line. */
static void put_escaped(struct line *l, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            put_char(l, '\\');
            put_char(l, (char)c);
        } else if (c == '\n' || c == '\r' || c == '\t') {
            put_char(l, '\\');
            put_char(l, c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        } else if (c < ' ' || c == 0x7f) {
            put_raw(l, "\\x", 2);
            put_char(l, hex[c >> 4]);
            put_char(l, hex[c & 15]);
        } else {
            put_char(l, (char)c);
        }
    }
}

/* A string value: inside quotes of the format (quoted), escaped;
 * bare, quoted and escaped only when it would otherwise not be one
 * logfmt value (empty, spaces, '=', quotes, control bytes). */
static void put_value(struct line *l, const char *s, size_t n, bool quoted)
{
    if (quoted) {
        put_escaped(l, s, n);
    } else if (needs_quotes(s, n)) {
        put_char(l, '"');
        put_escaped(l, s, n);
        put_char(l, '"');
    } else {
        put_raw(l, s, n);
    }
}

/* One conversion of fmt (at its '%'): its spec copied to spec, its
 * argument taken from ap and formatted (strings through put_value).
 * Returns the conversion's length in fmt. */
static size_t put_conversion(struct line *l, const char *fmt, bool quoted, va_list *ap)
{
    char spec[32];
    size_t i = 1;
    while (fmt[i] && strchr("-+ #0", fmt[i]))
        i++;
    int star[2], n_star = 0;
    for (int part = 0; part < 2; part++) {
        if (part == 1) {
            if (fmt[i] != '.')
                break;
            i++;
        }
        if (fmt[i] == '*') {
            star[n_star++] = va_arg(*ap, int);
            i++;
        }
        while (fmt[i] >= '0' && fmt[i] <= '9')
            i++;
    }
    size_t len_at = i;
    while (fmt[i] && strchr("hlzjtL", fmt[i]))
        i++;
    char conv = fmt[i];
    size_t spec_len = conv ? i + 1 : i;
    if (spec_len >= sizeof(spec) || !conv) {
        put_raw(l, fmt, spec_len);
        return spec_len;
    }
    memcpy(spec, fmt, spec_len);
    spec[spec_len] = '\0';
    char out[LINE_MAX_TAIL];
    int n = 0;
    const char *length = fmt + len_at;
    size_t length_n = i - len_at;
    /* The argument's type: what the length modifier and conversion say
     * (the format attribute has the compiler check every caller). */
#define FORMAT_ARG(type)                                                                        \
    (n_star == 2   ? snprintf(out, sizeof(out), spec, star[0], star[1], va_arg(*ap, type))      \
     : n_star == 1 ? snprintf(out, sizeof(out), spec, star[0], va_arg(*ap, type))               \
                   : snprintf(out, sizeof(out), spec, va_arg(*ap, type)))
    bool ll = length_n == 2 && length[0] == 'l';
    bool l1 = length_n == 1 && length[0] == 'l';
    bool z = length_n == 1 && (length[0] == 'z' || length[0] == 't' || length[0] == 'j');
    switch (conv) {
    case 'd':
    case 'i':
        n = ll ? FORMAT_ARG(long long) : l1 ? FORMAT_ARG(long) : z ? FORMAT_ARG(ptrdiff_t)
                                                               : FORMAT_ARG(int);
        break;
    case 'u':
    case 'x':
    case 'X':
    case 'o':
        n = ll ? FORMAT_ARG(unsigned long long) : l1 ? FORMAT_ARG(unsigned long)
            : z  ? FORMAT_ARG(size_t)
                 : FORMAT_ARG(unsigned);
        break;
    case 'c':
        n = FORMAT_ARG(int);
        break;
    case 'e':
    case 'f':
    case 'g':
    case 'E':
    case 'F':
    case 'G':
        n = FORMAT_ARG(double);
        break;
    case 'p':
        n = FORMAT_ARG(void *);
        break;
    case 's': {
        const char *s = va_arg(*ap, const char *);
        /* Precision (%.300s, %.*s) bounds the bytes read, as printf's. */
        s = s ? s : "(null)";
        n = n_star == 2   ? snprintf(out, sizeof(out), spec, star[0], star[1], s)
            : n_star == 1 ? snprintf(out, sizeof(out), spec, star[0], s)
                          : snprintf(out, sizeof(out), spec, s);
        size_t got = n < 0 ? 0 : (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1;
        put_value(l, out, got, quoted);
        return spec_len;
    }
    case '%':
        put_char(l, '%');
        return spec_len;
    default:
        put_raw(l, fmt, spec_len);
        return spec_len;
    }
#undef FORMAT_ARG
    if (n > 0)
        put_raw(l, out, (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1);
    return spec_len;
}

/* fmt with its arguments, the string ones made safe values. */
static void format_tail(struct line *l, const char *fmt, va_list ap)
{
    va_list args;
    va_copy(args, ap);
    bool in_quotes = false; /* inside a quoted value of the format's own text */
    for (size_t i = 0; fmt[i];) {
        if (fmt[i] != '%') {
            if (fmt[i] == '"')
                in_quotes = !in_quotes;
            put_char(l, fmt[i++]);
            continue;
        }
        i += put_conversion(l, fmt + i, in_quotes, &args);
    }
    va_end(args);
}

void log_event(enum log_level level, const char *msg, const char *fmt, ...)
{
    if (level < log_min_level)
        return;
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);

    char tail[LINE_MAX_TAIL] = "", quoted_msg[512] = "";
    struct line t = { .buf = tail, .cap = sizeof(tail) };
    if (fmt && *fmt) {
        va_list ap;
        va_start(ap, fmt);
        format_tail(&t, fmt, ap);
        va_end(ap);
    }
    struct line m = { .buf = quoted_msg, .cap = sizeof(quoted_msg) };
    put_escaped(&m, msg, strlen(msg));
    pthread_mutex_lock(&log_lock);
    fprintf(stderr, "ts=%s.%03ldZ level=%s svc=%s msg=\"%s\"%s%s\n", when, ts.tv_nsec / 1000000,
            log_level_name(level), log_service, quoted_msg, *tail ? " " : "", tail);
    pthread_mutex_unlock(&log_lock);
}
