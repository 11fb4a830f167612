/* Section "pool_memory": what an idle warm pool holds (issue 19: "idle
 * pool memory reported per VM"). vmhost --warm-pool N (AIRLOCK_BENCH_POOL_VMS,
 * default 4) fills its pool of restored, warmed, paused VMs; no create
 * takes one. Then each pooled VM's QEMU (found by its working directory
 * in vmhost's data directory: a pool-only vmhost runs no other QEMU) is
 * measured from /proc/PID/smaps as the idle section measures sandboxes
 * (bench_memory.h), and vmhost's own figures from its /metrics are put
 * beside them: what the pool reports (guest memory) against what its
 * QEMUs hold. The pool also keeps --warm-pool-spares 2 spare QEMUs
 * (started, the template's state loaded, never run), measured apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_memory.h"
#include "fsutil.h"
#include "http_client.h"
#include "strbuf.h"
#include "test_proc.h"

#define POOL_FILL_TIMEOUT_MS 300000
#define POOL_MAX_VMS 64
#define POOL_SPARES 2

/* The value of the sample "name{template="default"}" in vmhost's /metrics
 * at port, or -1. */
static double default_pool_metric(int port, const char *name)
{
    char url[64], err[256], want[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    snprintf(want, sizeof(want), "\n%s{template=\"default\"} ", name);
    struct http_target t;
    struct http_request req = { .method = "GET", .path = "/metrics", .body_fd = -1 };
    struct http_response resp;
    if (http_target_parse(url, &t, err, sizeof(err)) < 0 ||
        http_send(&t, &req, &resp, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench: GET %s/metrics: %s\n", url, err);
        return -1;
    }
    struct strbuf text = { 0 };
    int rc = http_read_all(&resp, &text);
    int status = resp.status;
    http_close(&resp);
    double v = -1;
    const char *at = strstr(strbuf_str(&text), want);
    if (rc == 0 && status == 200 && at)
        v = strtod(at + strlen(want), NULL);
    else
        fprintf(stderr, "bench: vmhost's /metrics (HTTP %d) has no %s\n", status, want + 1);
    strbuf_free(&text);
    return v;
}

/* The value of " sandbox=" in a log line into id ("" when absent). */
static void line_sandbox(const char *line, char *id, size_t idlen)
{
    const char *at = strstr(line, " sandbox=");
    snprintf(id, idlen, "%.*s", at ? (int)strcspn(at + 9, " ") : 0, at ? at + 9 : "");
}

/* The QEMUs of the spares waiting now: each spare is logged ready under
 * its id, and its id is logged again ("warm pool VM restored") when a
 * refill continues it. */
static size_t spare_qemus(const struct itest_vmhost *vh, pid_t *out, size_t max)
{
    char *log = NULL;
    size_t len = 0, n_ready = 0, n = 0;
    if (fs_read_file(vh->log_path, 16u << 20, &log, &len, NULL, 0) < 0)
        return 0;
    char ready[POOL_MAX_VMS * 2][64];
    for (char *save = NULL, *line = strtok_r(log, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char id[64];
        line_sandbox(line, id, sizeof(id));
        if (strstr(line, "msg=\"warm pool spare QEMU ready\"") && n_ready < POOL_MAX_VMS * 2)
            snprintf(ready[n_ready++], sizeof(ready[0]), "%s", id);
        else if (strstr(line, "msg=\"warm pool VM restored\""))
            for (size_t i = 0; i < n_ready; i++)
                if (strcmp(ready[i], id) == 0)
                    ready[i][0] = '\0'; /* continued into a pooled VM */
    }
    free(log);
    for (size_t i = 0; i < n_ready && n < max; i++) {
        char dir[PATH_MAX];
        if (ready[i][0] &&
            fs_path(dir, sizeof(dir), "%s/store/sandboxes/%s", vh->data_dir, ready[i]) == 0 &&
            itest_find_qemus(dir, &out[n], 1) == 1)
            n++;
    }
    return n;
}

static bool is_spare(pid_t pid, const pid_t *spares, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (spares[i] == pid)
            return true;
    return false;
}

/* Each spare QEMU into rows of its own. */
static int measure_spares(struct bench_report *r, const pid_t *spares, size_t n)
{
    struct bench_series *rss = bench_report_series(r, "MiB", "RSS per spare QEMU");
    struct bench_series *pss = bench_report_series(r, "MiB", "PSS per spare QEMU");
    struct bench_series *dirty = bench_report_series(r, "MiB", "private dirty per spare QEMU");
    int measured = 0;
    for (size_t i = 0; i < n; i++) {
        struct bench_qemu_memory m;
        if (bench_qemu_memory(spares[i], &m) < 0)
            continue;
        bench_series_add(rss, m.rss_mib);
        bench_series_add(pss, m.pss_mib);
        bench_series_add(dirty, m.private_dirty_mib);
        measured++;
    }
    bench_series_note(rss, "%d spares: QEMU started, the template's state loaded, paused, "
                           "never run",
                      measured);
    return measured;
}

/* Each pooled VM's QEMU (spares aside) into the rows; how many were
 * measured. */
static int measure_qemus(struct bench_report *r, const struct itest_vmhost *vh,
                         const pid_t *spares, size_t n_spares)
{
    struct bench_series *rss = bench_report_series(r, "MiB", "RSS per pooled VM (QEMU)");
    struct bench_series *pss = bench_report_series(r, "MiB", "PSS per pooled VM");
    struct bench_series *dirty =
        bench_report_series(r, "MiB", "private dirty per pooled VM (all mappings)");
    struct bench_series *ram_dirty =
        bench_report_series(r, "MiB", "  of which guest pages it dirtied (private copies)");
    struct bench_series *clean =
        bench_report_series(r, "MiB", "  RSS of clean template pages (shared by all)");
    pid_t pids[POOL_MAX_VMS];
    size_t n = itest_find_qemus(vh->data_dir, pids, POOL_MAX_VMS);
    int measured = 0;
    for (size_t i = 0; i < n && i < POOL_MAX_VMS; i++) {
        struct bench_qemu_memory m;
        if (is_spare(pids[i], spares, n_spares) || bench_qemu_memory(pids[i], &m) < 0)
            continue;
        bench_series_add(rss, m.rss_mib);
        bench_series_add(pss, m.pss_mib);
        bench_series_add(dirty, m.private_dirty_mib);
        bench_series_add(ram_dirty, m.ram_dirty_mib);
        bench_series_add(clean, m.ram_rss_mib - m.ram_dirty_mib);
        measured++;
    }
    bench_series_note(rss, "%d pooled QEMUs: restored, warmed up, paused, never handed out",
                      measured);
    return measured;
}

/* vmhost's own figures of the default pool, per ready VM. */
static int vmhost_figures(struct bench_report *r, int port)
{
    double ready = default_pool_metric(port, "airlock_vmhost_pool_ready");
    double bytes = default_pool_metric(port, "airlock_vmhost_pool_memory_bytes");
    struct bench_series *s = bench_report_series(r, "VMs", "vmhost's airlock_vmhost_pool_ready");
    struct bench_series *m =
        bench_report_series(r, "MiB", "vmhost's airlock_vmhost_pool_memory_bytes / ready");
    if (ready <= 0 || bytes < 0)
        return -1;
    bench_series_add(s, ready);
    bench_series_add(m, bytes / ready / (1024.0 * 1024.0));
    bench_series_note(m, "the guest memory it counts, not what the QEMUs hold");
    return 0;
}

int bench_section_pool_memory(struct bench_ctx *ctx)
{
    struct bench_report *r = ctx->report;
    int want = bench_env_count("AIRLOCK_BENCH_POOL_VMS", 4);
    if (want > POOL_MAX_VMS)
        want = POOL_MAX_VMS;
    r->section = "idle warm pool: memory per pooled VM";
    int port = test_free_port();
    if (port < 0)
        return -1;
    char pool[16], listen[32];
    snprintf(pool, sizeof(pool), "%d", want);
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
    char spares_arg[16];
    snprintf(spares_arg, sizeof(spares_arg), "%d", POOL_SPARES);
    const char *const args[] = { "--warm-pool",        pool,       "--metrics-listen", listen,
                                 "--warm-pool-spares", spares_arg, NULL };
    struct itest_vmhost vh;
    if (itest_vmhost_start(&vh, args) < 0)
        return -1;
    fprintf(stderr, "bench: a warm pool of %d, idle\n", want);
    int rc = itest_wait_pool_ready(&vh, (unsigned)want, POOL_FILL_TIMEOUT_MS) ? 0 : -1;
    for (int waited = 0;
         rc == 0 && default_pool_metric(port, "airlock_vmhost_pool_spares") < POOL_SPARES;
         waited += 100) {
        if (waited > POOL_FILL_TIMEOUT_MS)
            rc = -1;
        usleep(100 * 1000);
    }
    pid_t spares[POOL_SPARES];
    size_t n_spares = rc == 0 ? spare_qemus(&vh, spares, POOL_SPARES) : 0;
    if (rc == 0 && (n_spares != POOL_SPARES ||
                    measure_spares(r, spares, n_spares) != POOL_SPARES ||
                    measure_qemus(r, &vh, spares, n_spares) != want))
        rc = -1;
    if (rc == 0 && vmhost_figures(r, port) < 0)
        rc = -1;
    if (itest_vmhost_stop(&vh) < 0)
        rc = -1;
    return rc;
}
