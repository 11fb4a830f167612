/* Figures from the services' own logs (bench_log.c): per-stage breakdowns
 * of vmhost's creates, the scheduler's and gateway's time per request. */
#ifndef AIRLOCK_BENCH_LOG_H
#define AIRLOCK_BENCH_LOG_H

#include "bench_stats.h"
#include "itest.h"

struct bench_stage {
    const char *key;   /* field in the log line: ..ms or ..us */
    const char *label; /* row name */
};

/* The log's current end: lines after it are the ones measured next. */
long bench_log_mark(const char *log_path);

/* Adds a series per stage (stages end with a {NULL}) with the values of
 * the lines logged since mark that contain every string of match
 * (NULL-terminated). */
void bench_log_series(struct bench_report *r, const char *log_path, long mark,
                      const char *const *match, const struct bench_stage *stages);

/* vmhost's creates (msg="sandbox created") logged since mark with from=. */
void bench_log_breakdown(struct bench_report *r, const struct itest_vmhost *vh, long mark,
                         const char *from, const struct bench_stage *stages);

/* How many times the log holds needle. */
size_t bench_log_count(const char *log_path, const char *needle);

#endif
