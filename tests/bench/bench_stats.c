#include "bench_stats.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"

void bench_series_add(struct bench_series *s, double v)
{
    pthread_mutex_lock(&s->lock);
    if (s->n < BENCH_MAX_SAMPLES)
        s->samples[s->n++] = v;
    pthread_mutex_unlock(&s->lock);
}

void bench_series_note(struct bench_series *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&s->lock);
    vsnprintf(s->note, sizeof(s->note), fmt, ap);
    pthread_mutex_unlock(&s->lock);
    va_end(ap);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_series_percentile(const struct bench_series *s, double p)
{
    size_t n = s->n;
    double *sorted = n ? malloc(n * sizeof(double)) : NULL;
    if (!sorted)
        return 0;
    memcpy(sorted, s->samples, n * sizeof(double));
    qsort(sorted, n, sizeof(double), compare_doubles);
    size_t rank = (size_t)(p / 100.0 * (double)n + 0.5);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    double v = sorted[rank - 1];
    free(sorted);
    return v;
}

struct bench_series *bench_report_series(struct bench_report *r, const char *unit,
                                         const char *fmt, ...)
{
    if (r->n_series == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        struct bench_series **grown = realloc(r->series, cap * sizeof(*grown));
        if (!grown) {
            fprintf(stderr, "bench: out of memory\n");
            exit(1);
        }
        r->series = grown;
        r->cap = cap;
    }
    struct bench_series *s = calloc(1, sizeof(*s));
    if (!s) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    pthread_mutex_init(&s->lock, NULL);
    s->section = r->section ? r->section : "";
    s->unit = unit;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->name, sizeof(s->name), fmt, ap);
    va_end(ap);
    r->series[r->n_series++] = s;
    return s;
}

void bench_report_copy(struct bench_report *r, const struct bench_series *src)
{
    struct bench_series *s = bench_report_series(r, src->unit, "%s", src->name);
    memcpy(s->note, src->note, sizeof(s->note));
    memcpy(s->samples, src->samples, src->n * sizeof(double));
    s->n = src->n;
}

void bench_report_free(struct bench_report *r)
{
    for (size_t i = 0; i < r->n_series; i++) {
        pthread_mutex_destroy(&r->series[i]->lock);
        free(r->series[i]);
    }
    free(r->series);
    r->series = NULL;
    r->n_series = r->cap = 0;
}

void bench_report_print(const struct bench_report *r, FILE *out)
{
    fprintf(out, "\nairlock bench — accelerator: %s, %ld CPUs\n", r->accel,
            sysconf(_SC_NPROCESSORS_ONLN));
    const char *section = NULL;
    for (size_t i = 0; i < r->n_series; i++) {
        const struct bench_series *s = r->series[i];
        if (!section || strcmp(section, s->section) != 0) {
            section = s->section;
            fprintf(out, "\n[%s]\n%-52s %10s %10s %6s  %s\n", section, "measurement", "median",
                    "p90", "n", "unit");
        }
        if (s->n == 0)
            fprintf(out, "%-52s %10s %10s %6zu  %s\n", s->name, "-", "-", s->n, s->unit);
        else
            fprintf(out, "%-52s %10.2f %10.2f %6zu  %s\n", s->name,
                    bench_series_percentile(s, 50), bench_series_percentile(s, 90), s->n, s->unit);
        if (s->note[0])
            fprintf(out, "    └ %s\n", s->note);
    }
}

int bench_report_write_json(const struct bench_report *r, const char *out_dir, char *err,
                            size_t errlen)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    struct utsname u;
    uname(&u);

    json_t *root = json_object();
    json_object_set_new(root, "time", json_string(stamp));
    json_object_set_new(root, "accel", json_string(r->accel));
    json_object_set_new(root, "host_kernel", json_string(u.release));
    json_object_set_new(root, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    json_t *results = json_array();
    for (size_t i = 0; i < r->n_series; i++) {
        const struct bench_series *s = r->series[i];
        json_t *o = json_object();
        json_object_set_new(o, "section", json_string(s->section));
        json_object_set_new(o, "name", json_string(s->name));
        json_object_set_new(o, "unit", json_string(s->unit));
        json_object_set_new(o, "n", json_integer((json_int_t)s->n));
        if (s->n) {
            json_object_set_new(o, "median", json_real(bench_series_percentile(s, 50)));
            json_object_set_new(o, "p90", json_real(bench_series_percentile(s, 90)));
        }
        if (s->note[0])
            json_object_set_new(o, "note", json_string(s->note));
        json_array_append_new(results, o);
    }
    json_object_set_new(root, "results", results);
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    json_decref(root);
    if (!text) {
        snprintf(err, errlen, "cannot encode the bench report");
        return -1;
    }
    char path[4096];
    int rc = 0;
    snprintf(path, sizeof(path), "%s/bench-%s.json", out_dir, stamp);
    if (fs_write_file_atomic(path, text, strlen(text), 0644, err, errlen) < 0)
        rc = -1;
    snprintf(path, sizeof(path), "%s/latest.json", out_dir);
    if (rc == 0 && fs_write_file_atomic(path, text, strlen(text), 0644, err, errlen) < 0)
        rc = -1;
    if (rc == 0)
        printf("results: %s/bench-%s.json\n", out_dir, stamp);
    free(text);
    return rc;
}
