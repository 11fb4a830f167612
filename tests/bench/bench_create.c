/* Sections "create" and "pool": CreateSandbox → guest ready (the answer
 * comes after the guest answered its init), at concurrency 1 and 8, each
 * with vmhost's own breakdown of where the time went.
 *
 *   create  restore from the template snapshot (no pool), and the same
 *           template cold-booted (vmhost --cold-boot) as the reference;
 *   pool    from vmhost --warm-pool 8: a warmed, paused VM is renamed if
 *           the create names an id (as the scheduler's do), continued and
 *           given its guest init; every round starts with a full pool
 *           (the wait is not timed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_log.h"

#define CREATE_WORKERS 8
#define POOL_SIZE 8
#define POOL_FILL_TIMEOUT_MS 300000

struct create_run {
    struct bench_ctx *ctx;
    struct itest_vmhost *vh;
    bool named;      /* the create names its id, as the scheduler does */
    bool wait_pool;  /* before each round: the pool is full again */
    /* At concurrency 1: two execs of `true` right after each create (not
     * in the create's time), the first running in the guest for the first
     * time what every exec runs (NULL: not measured). */
    struct bench_series *first_exec, *second_exec;
    char *ids[CREATE_WORKERS];
    int seq;
};

static int wait_pool(void *arg, int worker, int round)
{
    (void)round;
    struct create_run *c = arg;
    return worker > 0 || !c->wait_pool ||
                   itest_wait_pool_ready(c->vh, POOL_SIZE, POOL_FILL_TIMEOUT_MS)
               ? 0
               : -1;
}

static int run_create(void *arg, int worker, int round)
{
    struct create_run *c = arg;
    char id[64];
    snprintf(id, sizeof(id), "bench-%d-%d-%d", c->seq, round, worker);
    c->ids[worker] = bench_create(c->vh, c->named ? id : NULL);
    return c->ids[worker] ? 0 : -1;
}

static int after_create(void *arg, int worker, int round)
{
    (void)round;
    struct create_run *c = arg;
    if (!c->ids[worker])
        return 0;
    bench_record_accel(c->ctx, c->vh, c->ids[worker]);
    int rc = 0;
    struct bench_series *execs[] = { c->first_exec, c->second_exec };
    for (int i = 0; rc == 0 && i < 2 && execs[i]; i++) {
        double t0 = bench_now_ms();
        rc = bench_exec_true(c->vh, c->ids[worker]);
        bench_series_add(execs[i], bench_now_ms() - t0);
    }
    if (bench_delete(c->vh, c->ids[worker]) < 0)
        rc = -1;
    free(c->ids[worker]);
    c->ids[worker] = NULL;
    return rc;
}

/* workers x rounds creates into a new series, then vmhost's breakdown of
 * them (creates logged with from=). */
static int measure(struct create_run *c, int workers, int rounds, const char *from,
                   const struct bench_stage *stages, const char *label)
{
    static int seq;
    c->seq = ++seq;
    struct bench_report *r = c->ctx->report;
    struct bench_series *s = bench_report_series(r, "ms", "%s, concurrency %d", label, workers);
    fprintf(stderr, "bench: %s, concurrency %d (%d)\n", label, workers, workers * rounds);
    long mark = bench_log_mark(c->vh->log_path);
    struct bench_op op = { .before = wait_pool, .run = run_create,
                           .after = after_create, .arg = c };
    if (workers == 1) {
        c->first_exec = bench_report_series(r, "ms", "  then exec `true`, the first");
        bench_series_note(c->first_exec, "the guest runs an exec's paths (fork, exec, "
                                         "ld.so) for the first time since its restore");
        c->second_exec = bench_report_series(r, "ms", "  then exec `true` again");
    }
    int rc = bench_rounds(&op, workers, rounds, s);
    c->first_exec = c->second_exec = NULL;
    bench_log_breakdown(r, c->vh, mark, from, stages);
    return rc;
}

static const struct bench_stage restore_stages[] = {
    { "disk_us", "disk reflink" },
    { "net_us", "network namespace, TAP, nftables" },
    { "qemu_us", "QEMU start → QMP answers" },
    { "restore_us", "device state load + cont" },
    { "hello_us", "guest's first answer (cold translation cache)" },
    { "init_us", "guest init (clock, entropy, hostname)" },
    { "record_us", "sandbox record" },
    { NULL, NULL },
};

static const struct bench_stage boot_stages[] = {
    { "qemu_us", "QEMU start → QMP answers" },
    { "hello_us", "kernel boot → guest's first answer" },
    { "init_us", "guest init" },
    { "record_us", "sandbox record" },
    { NULL, NULL },
};

static const struct bench_stage pool_stages[] = {
    { "name_us", "registry + rename (directory, namespace)" },
    { "cont_us", "QMP cont" },
    { "policy_us", "egress attach / policy" },
    { "init_us", "guest init (warmed up)" },
    { "record_us", "sandbox record" },
    { NULL, NULL },
};

int bench_section_create(struct bench_ctx *ctx)
{
    ctx->report->section = "create without pool (restore from the template snapshot)";
    struct itest_vmhost vh;
    if (itest_vmhost_start(&vh, NULL) < 0)
        return -1;
    struct create_run c = { .ctx = ctx, .vh = &vh, .named = true };
    int runs = bench_env_count("AIRLOCK_BENCH_CREATES", 20);
    int rounds = bench_env_count("AIRLOCK_BENCH_ROUNDS", 3);
    int rc = measure(&c, 1, runs, "snapshot", restore_stages, "create (restore) → guest ready");
    if (measure(&c, CREATE_WORKERS, rounds, "snapshot", restore_stages,
                "create (restore) → guest ready") < 0)
        rc = -1;
    if (itest_vmhost_stop(&vh) < 0)
        rc = -1;

    const char *const cold_args[] = { "--cold-boot", NULL };
    if (itest_vmhost_start(&vh, cold_args) < 0)
        return -1;
    if (measure(&c, 1, bench_env_count("AIRLOCK_BENCH_BOOTS", 5), "cold-boot", boot_stages,
                "cold boot of the same template (reference)") < 0)
        rc = -1;
    if (itest_vmhost_stop(&vh) < 0)
        rc = -1;
    return rc;
}

int bench_section_pool(struct bench_ctx *ctx)
{
    ctx->report->section = "create with warm pool (vmhost --warm-pool 8)";
    struct itest_vmhost vh;
    const char *const args[] = { "--warm-pool", "8", NULL };
    if (itest_vmhost_start(&vh, args) < 0)
        return -1;
    struct create_run c = { .ctx = ctx, .vh = &vh, .wait_pool = true };
    int runs = bench_env_count("AIRLOCK_BENCH_CREATES", 20);
    int rounds = bench_env_count("AIRLOCK_BENCH_ROUNDS", 3);
    int rc = measure(&c, 1, runs, "pool", pool_stages, "create from pool, id by the node");
    c.named = true;
    if (measure(&c, 1, runs, "pool", pool_stages, "create from pool, id by the caller") < 0)
        rc = -1;
    if (measure(&c, CREATE_WORKERS, rounds, "pool", pool_stages,
                "create from pool, id by the caller") < 0)
        rc = -1;
    if (itest_vmhost_stop(&vh) < 0)
        rc = -1;
    return rc;
}
