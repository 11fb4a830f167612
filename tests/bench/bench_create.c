/* Sections "create" and "pool": CreateSandbox → guest ready (the answer
 * comes after the guest answered its init), at concurrency 1 and 8, each
 * with vmhost's own breakdown of where the time went.
 *
 *   create  restore from the template snapshot (no pool), and the same
 *           template cold-booted (vmhost --cold-boot) as the reference;
 *   pool    from vmhost --warm-pool 8: a warmed, paused VM is renamed if
 *           the create names an id (as the scheduler's do), continued and
 *           given its guest init; every round starts with a full pool
 *           (the wait is not timed). Then past the empty pool, from vmhost
 *           --warm-pool 1 --warm-pool-spares 1: each round takes the
 *           ready VM (not timed), then times a create that restores into
 *           the QEMU the pool started ahead; and what the pool's refills
 *           cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    /* before each round: one VM ready and a spare QEMU waiting, then the
     * ready VM taken (into taken_id), so the timed create finds the pool
     * empty */
    bool past_pool;
    char *taken_id;
    /* At concurrency 1: two execs of `true` right after each create (not
     * in the create's time), the first running in the guest for the first
     * time what every exec runs (NULL: not measured). */
    struct bench_series *first_exec, *second_exec;
    char *ids[CREATE_WORKERS];
    int seq;
};

/* Spare QEMUs waiting now: each started is logged ready, and each taken
 * (by a create or a refill) logged with qemu=prestarted. */
static bool spare_waits(const struct create_run *c)
{
    return bench_log_count(c->vh->log_path, "msg=\"warm pool spare QEMU ready\"") >
           bench_log_count(c->vh->log_path, " qemu=prestarted ");
}

static int empty_the_pool(struct create_run *c)
{
    if (!itest_wait_pool_ready(c->vh, 1, POOL_FILL_TIMEOUT_MS))
        return -1;
    for (int waited = 0; !spare_waits(c); waited += 50) {
        if (waited > POOL_FILL_TIMEOUT_MS)
            return -1;
        usleep(50 * 1000);
    }
    c->taken_id = bench_create(c->vh, NULL);
    return c->taken_id ? 0 : -1;
}

static int wait_pool(void *arg, int worker, int round)
{
    (void)round;
    struct create_run *c = arg;
    if (worker > 0)
        return 0;
    if (c->past_pool)
        return empty_the_pool(c);
    return !c->wait_pool || itest_wait_pool_ready(c->vh, POOL_SIZE, POOL_FILL_TIMEOUT_MS) ? 0
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
    if (c->taken_id && bench_delete(c->vh, c->taken_id) < 0)
        rc = -1;
    free(c->taken_id);
    c->taken_id = NULL;
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
    { "gate_us", "wait for a slot (--parallel-creates: the CPUs online)" },
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

static const struct bench_stage spare_stages[] = {
    { "take_us", "take the spare: registry, renames, budget, CPU priority" },
    { "restore_us", "device state load + cont (egress attach beside it)" },
    { "hello_us", "guest's first answer (cold translation cache)" },
    { "init_us", "guest init (clock, entropy, hostname)" },
    { "record_us", "sandbox record" },
    { NULL, NULL },
};

/* A refill of the pool (vmhost's "warm pool VM restored"), and a spare's
 * start ("warm pool spare QEMU ready"): background work. */
static const struct bench_stage refill_stages[] = {
    { "restore_us", "refill: restore into a spare (state load, first answer)" },
    { "warm_us", "refill: warm-up (stand-in CA, an exec, pause/continue, init)" },
    { "warm_ca_us", "  warm-up: init with the stand-in CA" },
    { "warm_exec_us", "  warm-up: exec `true`" },
    { "warm_cycle_us", "  warm-up: pause and continue" },
    { "warm_init_us", "  warm-up: init again" },
    { NULL, NULL },
};
static const struct bench_stage spare_start_stages[] = {
    { "us", "spare: disk reflink, namespace, QEMU start (niced, in the background)" },
    { NULL, NULL },
};

static int measure_past_pool(struct bench_ctx *ctx, int runs)
{
    struct itest_vmhost vh;
    const char *const args[] = { "--warm-pool", "1", "--warm-pool-spares", "1", NULL };
    if (itest_vmhost_start(&vh, args) < 0)
        return -1;
    long mark = bench_log_mark(vh.log_path);
    struct create_run c = { .ctx = ctx, .vh = &vh, .named = true, .past_pool = true };
    int rc = measure(&c, 1, runs, "snapshot", spare_stages,
                     "create past the empty pool (into a spare QEMU) → guest ready");
    const char *const refills[] = { "msg=\"warm pool VM restored\"", " qemu=prestarted ", NULL };
    bench_log_series(ctx->report, vh.log_path, mark, refills, refill_stages);
    const char *const spares[] = { "msg=\"warm pool spare QEMU ready\"", NULL };
    bench_log_series(ctx->report, vh.log_path, mark, spares, spare_start_stages);
    if (itest_vmhost_stop(&vh) < 0)
        rc = -1;
    return rc;
}

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
    if (measure_past_pool(ctx, runs) < 0)
        rc = -1;
    return rc;
}
