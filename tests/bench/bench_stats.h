/* Samples, percentiles and the report (table + JSON) of airlock-bench. A
 * report is a list of sections, each a list of series; a series may carry
 * a note (what it was measured on, why it has fewer samples than asked). */
#ifndef AIRLOCK_BENCH_STATS_H
#define AIRLOCK_BENCH_STATS_H

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#define BENCH_MAX_SAMPLES 1024
#define BENCH_NOTE_MAX 240

struct bench_series {
    const char *section;
    char name[96];
    const char *unit;
    char note[BENCH_NOTE_MAX];
    pthread_mutex_t lock; /* samples come from several threads */
    double samples[BENCH_MAX_SAMPLES];
    size_t n;
};

void bench_series_add(struct bench_series *s, double v);
/* p in 0..100, nearest-rank on a sorted copy; not while samples are
 * still being added. */
double bench_series_percentile(const struct bench_series *s, double p);
void bench_series_note(struct bench_series *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

struct bench_report {
    char accel[16];
    const char *section; /* the one series are added to now */
    struct bench_series **series;
    size_t n_series, cap;
};

/* A new series in the current section; never NULL (exits when out of
 * memory: a bench without memory has nothing to report). */
struct bench_series *bench_report_series(struct bench_report *r, const char *unit,
                                         const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A copy of a series kept elsewhere (a section's static ones) in the
 * current section. */
void bench_report_copy(struct bench_report *r, const struct bench_series *src);
void bench_report_free(struct bench_report *r);

void bench_report_print(const struct bench_report *r, FILE *out);
/* Writes OUT_DIR/bench-<UTC time>.json and OUT_DIR/latest.json. */
int bench_report_write_json(const struct bench_report *r, const char *out_dir, char *err,
                            size_t errlen);

#endif
