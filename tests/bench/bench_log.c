/* Figures from the services' own logs: every vmhost create logs
 * `msg="sandbox created" ... from=<how> <stage>_us=N` (vmhost/sandbox.c),
 * the scheduler and gateway log `ms=N` per request. The bench reads the
 * lines logged since a mark and adds one series per figure beside the
 * client-side one. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_log.h"
#include "fsutil.h"

long bench_log_mark(const char *log_path)
{
    struct stat st;
    return stat(log_path, &st) == 0 ? (long)st.st_size : 0;
}

/* The number after " key=" in line, as ms (keys ending in "us" are
 * microseconds); -1 when absent. */
static double field_ms(const char *line, const char *key)
{
    char needle[64];
    snprintf(needle, sizeof(needle), " %s=", key);
    const char *p = strstr(line, needle);
    if (!p)
        return -1;
    double v = strtod(p + strlen(needle), NULL);
    size_t n = strlen(key);
    return n >= 2 && strcmp(key + n - 2, "us") == 0 ? v / 1000 : v;
}

static bool line_matches(const char *line, const char *const *match)
{
    for (; *match; match++)
        if (!strstr(line, *match))
            return false;
    return true;
}

void bench_log_series(struct bench_report *r, const char *log_path, long mark,
                      const char *const *match, const struct bench_stage *stages)
{
    size_t n = 0;
    while (stages[n].key)
        n++;
    struct bench_series **out = calloc(n, sizeof(*out));
    if (!out)
        return;
    for (size_t i = 0; i < n; i++)
        out[i] = bench_report_series(r, "ms", "  └ %s", stages[i].label);
    char *text = NULL;
    size_t len = 0;
    if (fs_read_file(log_path, 64u << 20, &text, &len, NULL, 0) == 0 && (size_t)mark <= len) {
        for (char *save = NULL, *line = strtok_r(text + mark, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
            if (!line_matches(line, match))
                continue;
            for (size_t i = 0; i < n; i++) {
                double v = field_ms(line, stages[i].key);
                if (v >= 0)
                    bench_series_add(out[i], v);
            }
        }
    }
    free(text);
    free(out);
}

void bench_log_breakdown(struct bench_report *r, const struct itest_vmhost *vh, long mark,
                         const char *from, const struct bench_stage *stages)
{
    char want[64];
    snprintf(want, sizeof(want), " from=%s ", from);
    const char *const match[] = { "msg=\"sandbox created\"", want, NULL };
    bench_log_series(r, vh->log_path, mark, match, stages);
}

size_t bench_log_count(const char *log_path, const char *needle)
{
    char *text = NULL;
    size_t len = 0, n = 0;
    if (fs_read_file(log_path, 64u << 20, &text, &len, NULL, 0) == 0)
        for (const char *p = text; (p = strstr(p, needle)); p++)
            n++;
    free(text);
    return n;
}
