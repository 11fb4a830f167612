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

/* The rows of one sandbox's memory, in MiB, in the order printed. */
enum { ROW_RSS, ROW_PSS, ROW_DIRTY, ROW_BEYOND, ROW_CLEAN, ROW_OWN, ROW_CODE, ROW_FILE, ROW_ANON,
       ROW_OWN_SHARED, ROW_COST, N_ROWS };
static const char *const row_names[N_ROWS] = {
    [ROW_RSS] = "RSS per idle sandbox (QEMU)",
    [ROW_PSS] = "PSS per idle sandbox",
    [ROW_DIRTY] = "  of which guest pages it dirtied (private copies)",
    [ROW_BEYOND] = "RSS beyond the pages it dirtied (target <= 64)",
    [ROW_CLEAN] = "  of which clean template pages (shared by all)",
    [ROW_OWN] = "  of which QEMU's own memory (outside guest RAM)",
    [ROW_CODE] = "    TCG translated code",
    [ROW_FILE] = "    QEMU binary and libraries",
    [ROW_ANON] = "    heap, thread arenas, stacks",
    [ROW_OWN_SHARED] = "    of these, pages other QEMUs map too",
    [ROW_COST] = "PSS beyond the pages it dirtied (shared pages divided)",
};

static void memory_rows(const struct bench_qemu_memory *m, double v[N_ROWS])
{
    v[ROW_RSS] = m->rss_mib;
    v[ROW_PSS] = m->pss_mib;
    v[ROW_DIRTY] = m->ram_dirty_mib;
    v[ROW_BEYOND] = m->rss_mib - m->ram_dirty_mib;
    v[ROW_CLEAN] = m->ram_rss_mib - m->ram_dirty_mib;
    v[ROW_OWN] = m->rss_mib - m->ram_rss_mib;
    v[ROW_CODE] = m->code_mib;
    v[ROW_FILE] = m->file_mib;
    v[ROW_ANON] = m->anon_mib;
    v[ROW_OWN_SHARED] = m->own_shared_mib;
    v[ROW_COST] = m->pss_mib - m->ram_dirty_mib;
}

static void measure_memory(struct idle *d, struct bench_report *r, long avail_before)
{
    struct bench_series *rows[N_ROWS];
    for (int k = 0; k < N_ROWS; k++)
        rows[k] = bench_report_series(r, "MiB", "%s", row_names[k]);
    struct bench_series *total = bench_report_series(r, "MiB", "total RSS of all idle sandboxes");
    struct bench_series *host = bench_report_series(r, "MiB", "host memory used per sandbox");
    double sum = 0;
    for (int i = 0; i < d->n; i++) {
        struct bench_qemu_memory m;
        int pid = bench_qemu_pid(&d->vh, d->ids[i]);
        if (pid < 0 || bench_qemu_memory(pid, &m) < 0)
            continue;
        double v[N_ROWS];
        memory_rows(&m, v);
        for (int k = 0; k < N_ROWS; k++)
            bench_series_add(rows[k], v[k]);
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
    /* Density is what this measures: the node's budget (node_budget.h)
     * promises a vCPU and 8x its memory to each. */
    const char *const args[] = { "--max-sandboxes", max, "--node-cpus", max, "--cpu-overcommit",
                                 "1", "--memory-overcommit", "8", NULL };
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
