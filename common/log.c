#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

    char tail[1024] = "";
    if (fmt && *fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(tail, sizeof(tail), fmt, ap);
        va_end(ap);
    }
    pthread_mutex_lock(&log_lock);
    fprintf(stderr, "ts=%s.%03ldZ level=%s svc=%s msg=\"%s\"%s%s\n", when, ts.tv_nsec / 1000000,
            log_level_name(level), log_service, msg, *tail ? " " : "", tail);
    pthread_mutex_unlock(&log_lock);
}
