#include "bench_stats.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"

void bench_series_add(struct bench_series *s, double v)
{
    if (s->n < BENCH_MAX_SAMPLES)
        s->samples[s->n++] = v;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_series_percentile(const struct bench_series *s, double p)
{
    if (s->n == 0)
        return 0;
    double sorted[BENCH_MAX_SAMPLES];
    memcpy(sorted, s->samples, s->n * sizeof(double));
    qsort(sorted, s->n, sizeof(double), compare_doubles);
    size_t rank = (size_t)(p / 100.0 * (double)s->n + 0.5);
    if (rank < 1)
        rank = 1;
    if (rank > s->n)
        rank = s->n;
    return sorted[rank - 1];
}

void bench_report_print(const struct bench_report *r, FILE *out)
{
    fprintf(out, "\nairlock bench — accelerator: %s, %ld CPUs\n", r->accel,
            sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(out, "%-32s %10s %10s %6s  %s\n", "measurement", "median", "p90", "n", "unit");
    for (size_t i = 0; i < r->n_series; i++) {
        const struct bench_series *s = r->series[i];
        fprintf(out, "%-32s %10.2f %10.2f %6zu  %s\n", s->name, bench_series_percentile(s, 50),
                bench_series_percentile(s, 90), s->n, s->unit);
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
        json_object_set_new(o, "name", json_string(s->name));
        json_object_set_new(o, "unit", json_string(s->unit));
        json_object_set_new(o, "n", json_integer((json_int_t)s->n));
        json_object_set_new(o, "median", json_real(bench_series_percentile(s, 50)));
        json_object_set_new(o, "p90", json_real(bench_series_percentile(s, 90)));
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
