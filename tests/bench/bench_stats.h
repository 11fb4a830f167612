/* Samples, percentiles and the report (table + JSON) of airlock-bench. */
#ifndef AIRLOCK_BENCH_STATS_H
#define AIRLOCK_BENCH_STATS_H

#include <stddef.h>
#include <stdio.h>

#define BENCH_MAX_SAMPLES 1024

struct bench_series {
    const char *name;
    const char *unit;
    double samples[BENCH_MAX_SAMPLES];
    size_t n;
};

void bench_series_add(struct bench_series *s, double v);
/* p in 0..100, nearest-rank on a sorted copy. */
double bench_series_percentile(const struct bench_series *s, double p);

struct bench_report {
    const char *accel;
    struct bench_series **series;
    size_t n_series;
};

void bench_report_print(const struct bench_report *r, FILE *out);
/* Writes OUT_DIR/bench-<UTC time>.json and OUT_DIR/latest.json. */
int bench_report_write_json(const struct bench_report *r, const char *out_dir, char *err,
                            size_t errlen);

#endif
