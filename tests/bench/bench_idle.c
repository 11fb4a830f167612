/* Section "idle": many idle sandboxes on one node (issue 3: 100 without
 * failure). Restores them one after another (AIRLOCK_BENCH_IDLE, default
 * 100) while the host keeps AIRLOCK_BENCH_IDLE_RESERVE_MIB (default 2048)
 * available, checks every one answers an exec, measures each QEMU's
 * memory (bench_memory.h) and the host's, then deletes them all. If fewer
 * fit, the rows say how many and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_memory.h"

#define IDLE_SETTLE_S 5

struct idle {
    struct bench_ctx *ctx;
    struct itest_vmhost vh;
    char **ids;
    int n, want;
    bool create_failed;
    char why[160];
};

static void create_all(struct idle *d, struct bench_series *create)
{
    long reserve = bench_env_count("AIRLOCK_BENCH_IDLE_RESERVE_MIB", 2048);
    for (d->n = 0; d->n < d->want; d->n++) {
        long avail = bench_mem_available_mib();
        if (avail >= 0 && avail < reserve) {
            snprintf(d->why, sizeof(d->why),
                     "stopped at %d of %d: the host had %ld MiB available (reserve %ld MiB)", d->n,
                     d->want, avail, reserve);
            return;
        }
        double t0 = bench_now_ms();
        char *id = bench_create(&d->vh, NULL);
        if (!id) {
            d->create_failed = true;
            snprintf(d->why, sizeof(d->why), "stopped at %d of %d: a create failed (see above)",
                     d->n, d->want);
            return;
        }
        bench_series_add(create, bench_now_ms() - t0);
        bench_record_accel(d->ctx, &d->vh, id);
        d->ids[d->n] = id;
    }
}

/* Every sandbox answers; returns how many did. */
static int exec_all(struct idle *d, struct bench_series *exec)
{
    int ok = 0;
    for (int i = 0; i < d->n; i++) {
        double t0 = bench_now_ms();
        if (bench_exec_true(&d->vh, d->ids[i]) == 0) {
            bench_series_add(exec, bench_now_ms() - t0);
            ok++;
        }
    }
    return ok;
}

static void measure_memory(struct idle *d, struct bench_report *r, long avail_before)
{
    struct bench_series *rss = bench_report_series(r, "MiB", "RSS per idle sandbox (QEMU)");
    struct bench_series *pss = bench_report_series(r, "MiB", "PSS per idle sandbox");
    struct bench_series *dirty =
        bench_report_series(r, "MiB", "  of which guest pages it dirtied (private copies)");
    struct bench_series *beyond =
        bench_report_series(r, "MiB", "RSS beyond the pages it dirtied (target <= 64)");
    struct bench_series *own =
        bench_report_series(r, "MiB", "QEMU's own memory (outside guest RAM)");
    struct bench_series *total = bench_report_series(r, "MiB", "total RSS of all idle sandboxes");
    struct bench_series *host = bench_report_series(r, "MiB", "host memory used per sandbox");
    double sum = 0;
    for (int i = 0; i < d->n; i++) {
        struct bench_qemu_memory m;
        int pid = bench_qemu_pid(&d->vh, d->ids[i]);
        if (pid < 0 || bench_qemu_memory(pid, &m) < 0)
            continue;
        bench_series_add(rss, m.rss_mib);
        bench_series_add(pss, m.pss_mib);
        bench_series_add(dirty, m.ram_dirty_mib);
        bench_series_add(beyond, m.rss_mib - m.ram_dirty_mib);
        bench_series_add(own, m.rss_mib - m.ram_rss_mib);
        sum += m.rss_mib;
    }
    bench_series_add(total, sum);
    bench_series_note(total, "%d sandboxes; RSS counts the template's clean pages once per "
                             "sandbox, PSS shares them out", d->n);
    long avail_after = bench_mem_available_mib();
    if (d->n > 0 && avail_before >= 0 && avail_after >= 0) {
        bench_series_add(host, (double)(avail_before - avail_after) / d->n);
        bench_series_note(host, "drop of MemAvailable / %d: page tables, page cache of disks and "
                                "the memory file, vmhost's share included", d->n);
    }
}

int bench_section_idle(struct bench_ctx *ctx)
{
    struct bench_report *r = ctx->report;
    r->section = "many idle sandboxes on one node";
    struct idle d = { .ctx = ctx, .want = bench_env_count("AIRLOCK_BENCH_IDLE", 100) };
    d.ids = calloc((size_t)d.want, sizeof(*d.ids));
    if (!d.ids)
        return -1;
    char max[16];
    snprintf(max, sizeof(max), "%d", d.want + 8);
    const char *const args[] = { "--max-sandboxes", max, NULL };
    if (itest_vmhost_start(&d.vh, args) < 0) {
        free(d.ids);
        return -1;
    }
    fprintf(stderr, "bench: %d idle sandboxes\n", d.want);
    long avail_before = bench_mem_available_mib();
    struct bench_series *create =
        bench_report_series(r, "ms", "create (restore) while the others idle");
    create_all(&d, create);
    struct bench_series *count = bench_report_series(r, "sandboxes", "idle sandboxes held");
    bench_series_add(count, d.n);
    if (d.why[0])
        bench_series_note(count, "%s", d.why);
    sleep(IDLE_SETTLE_S);
    struct bench_series *busy = bench_report_series(r, "%", "host CPU busy while they idle");
    bench_series_add(busy, bench_cpu_busy_percent(IDLE_SETTLE_S));
    bench_series_note(busy, "TCG guests tick even when idle");
    struct bench_series *exec =
        bench_report_series(r, "ms", "exec `true` in each (all must answer)");
    int answered = exec_all(&d, exec);
    if (answered != d.n)
        bench_series_note(exec, "only %d of %d answered", answered, d.n);
    measure_memory(&d, r, avail_before);

    fprintf(stderr, "bench: deleting %d idle sandboxes\n", d.n);
    /* Fewer than asked for lack of memory is a result, not a failure. */
    int rc = !d.create_failed && answered == d.n ? 0 : -1;
    for (int i = 0; i < d.n; i++) {
        if (bench_delete(&d.vh, d.ids[i]) < 0)
            rc = -1;
        free(d.ids[i]);
    }
    free(d.ids);
    if (itest_vmhost_stop(&d.vh) < 0)
        rc = -1;
    return rc;
}
