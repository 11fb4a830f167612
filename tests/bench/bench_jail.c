/* Section "jail": what the QEMU jail (docs/jail.md) costs. A jailed vmhost
 * runs beside one started with --no-jail (a switch kept for this
 * comparison alone); every operation alternates between the two, the
 * order swapped every round, so the host's drift hits both alike:
 *
 *   create from the pool  vmhost --warm-pool 2, ids by the caller (as the
 *                         scheduler's); before every create both pools are
 *                         full again, so no refill (whose QEMU start is
 *                         where a pooled VM's jail is paid) overlaps a
 *                         timed create; target: the jail adds <= 2 ms
 *   create (restore)      no pool; with vmhost's "QEMU start → QMP" stage,
 *                         which holds the jail's setup (jail_open, clone3,
 *                         mounts, pivot_root, cgroup, exec with the
 *                         preload) and "state load + cont"; target <= 10 ms
 *   fork                  ForkSandbox count 1 of a live sandbox, with the
 *                         fork's own QEMU start stage
 *   idle memory           idle sandboxes per side: RSS, PSS and QEMU's
 *                         own memory (outside guest RAM) of each QEMU
 *
 * Before any VM, the jail around single programs (bench_jail_setup.h):
 * its own steps around /usr/bin/true, and QEMU -M none to its QMP answer
 * unjailed, with QEMU's seccomp options, and jailed, which tell what a
 * create's difference is made of. Targets are notes, never checks.
 * Counts: AIRLOCK_BENCH_JAIL_ROUNDS (default 20) samples per side and
 * operation, _JAIL_IDLE (4) idle sandboxes per side, _JAIL_SETUPS (40)
 * runs around true (half as many QEMU starts each way). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"
#include "bench_jail_setup.h"
#include "bench_log.h"
#include "bench_memory.h"

#define JAIL_POOL_SIZE 2
#define JAIL_POOL_TIMEOUT_MS 300000
#define JAIL_IDLE_SETTLE_S 5
#define JAIL_MAX_IDLE 16

enum side_kind { JAILED, UNJAILED, N_SIDES };
static const char *const side_names[N_SIDES] = { "jailed", "unjailed" };
static const char *const side_ids[N_SIDES] = { "jail", "nojail" }; /* sandbox id prefixes */

struct jail_pair;

struct jail_side {
    struct jail_pair *pair;
    enum side_kind which;
    struct itest_vmhost vh;
    bool running;
    char *source; /* fork: the live sandbox forked */
    char *made;   /* what the timed operation made, deleted after it */
    int seq;
};

struct jail_pair {
    struct bench_ctx *ctx;
    struct jail_side sides[N_SIDES];
    bool pooled;
};

static int drop_sources(struct jail_pair *p)
{
    int rc = 0;
    for (int s = 0; s < N_SIDES; s++) {
        struct jail_side *d = &p->sides[s];
        if (d->source && bench_delete(&d->vh, d->source) < 0)
            rc = -1;
        free(d->source);
        d->source = NULL;
    }
    return rc;
}

static int pair_stop(struct jail_pair *p)
{
    int rc = drop_sources(p);
    for (int s = 0; s < N_SIDES; s++) {
        struct jail_side *d = &p->sides[s];
        if (d->running && itest_vmhost_stop(&d->vh) < 0)
            rc = -1;
        d->running = false;
    }
    return rc;
}

/* Both vmhosts, the same but for --no-jail (and --warm-pool if pooled). */
static int pair_start(struct jail_pair *p, struct bench_ctx *ctx, bool pooled)
{
    *p = (struct jail_pair){ .ctx = ctx, .pooled = pooled };
    char pool[16];
    snprintf(pool, sizeof(pool), "%d", JAIL_POOL_SIZE);
    for (int s = 0; s < N_SIDES; s++) {
        const char *args[4];
        size_t n = 0;
        if (pooled) {
            args[n++] = "--warm-pool";
            args[n++] = pool;
        }
        if (s == UNJAILED)
            args[n++] = "--no-jail";
        args[n] = NULL;
        struct jail_side *d = &p->sides[s];
        d->pair = p;
        d->which = (enum side_kind)s;
        if (itest_vmhost_start(&d->vh, args) < 0) {
            pair_stop(p);
            return -1;
        }
        d->running = true;
    }
    return 0;
}

/* Before a timed create from a pool: both pools full (untimed). */
static int wait_pools(void *arg, int worker, int round)
{
    (void)worker, (void)round;
    struct jail_side *d = arg;
    for (int s = 0; s < N_SIDES; s++)
        if (!itest_wait_pool_ready(&d->pair->sides[s].vh, JAIL_POOL_SIZE, JAIL_POOL_TIMEOUT_MS))
            return -1;
    return 0;
}

static int create_named(void *arg, int worker, int round)
{
    (void)worker, (void)round;
    struct jail_side *d = arg;
    char id[64];
    snprintf(id, sizeof(id), "%s-%d", side_ids[d->which], ++d->seq);
    d->made = bench_create(&d->vh, id);
    return d->made ? 0 : -1;
}

static int fork_source(void *arg, int worker, int round)
{
    (void)worker, (void)round;
    struct jail_side *d = arg;
    d->made = bench_fork(&d->vh, d->source);
    return d->made ? 0 : -1;
}

static int delete_made(void *arg, int worker, int round)
{
    (void)worker, (void)round;
    struct jail_side *d = arg;
    if (!d->made)
        return 0;
    bench_record_accel(d->pair->ctx, &d->vh, d->made);
    int rc = bench_delete(&d->vh, d->made);
    free(d->made);
    d->made = NULL;
    return rc;
}

/* "label, jailed" and "label, unjailed", in that order. */
static void pair_series(struct bench_report *r, const char *unit, const char *label,
                        struct bench_series *out[N_SIDES])
{
    for (int s = 0; s < N_SIDES; s++)
        out[s] = bench_report_series(r, unit, "%s, %s", label, side_names[s]);
}

/* The jailed row's note: what the jail adds, and the target if any. */
static void note_difference(struct bench_series *s[N_SIDES], const char *target)
{
    if (!s[JAILED]->n || !s[UNJAILED]->n)
        return;
    bench_series_note(s[JAILED], "jail adds: median %+.2f %s, p90 %+.2f %s%s%s",
                      bench_series_percentile(s[JAILED], 50) -
                          bench_series_percentile(s[UNJAILED], 50),
                      s[JAILED]->unit,
                      bench_series_percentile(s[JAILED], 90) -
                          bench_series_percentile(s[UNJAILED], 90),
                      s[JAILED]->unit, target ? "; target " : "", target ? target : "");
}

/* rounds x (one op on each side), the side going first swapped every
 * round; stops at the first failure. */
static int interleave(struct jail_pair *p, const struct bench_op *op, int rounds,
                      struct bench_series *out[N_SIDES])
{
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < N_SIDES; k++) {
            int s = (r + k) % N_SIDES;
            struct bench_op one = *op;
            one.arg = &p->sides[s];
            if (bench_rounds(&one, 1, 1, out[s]) < 0)
                return -1;
        }
    return 0;
}

/* Each stage of vmhost's creates logged since marks with from=, a row per
 * side. */
static void pair_breakdown(struct jail_pair *p, const long marks[N_SIDES], const char *from,
                           const struct bench_stage *stages)
{
    struct bench_report *r = p->ctx->report;
    for (const struct bench_stage *st = stages; st->key; st++) {
        struct bench_series *rows[N_SIDES];
        for (int s = 0; s < N_SIDES; s++) {
            char label[96];
            snprintf(label, sizeof(label), "%s, %s", st->label, side_names[s]);
            const struct bench_stage one[] = { { st->key, label }, { NULL, NULL } };
            bench_log_breakdown(r, &p->sides[s].vh, marks[s], from, one);
            rows[s] = r->series[r->n_series - 1]; /* the row it just added */
        }
        note_difference(rows, NULL);
    }
}

/* One operation on both sides: its rows, the difference, and vmhost's
 * stages of the creates it made (from= those logged; NULL: none). */
static int measure(struct jail_pair *p, const struct bench_op *op, const char *label,
                   const char *target, int rounds, const char *from,
                   const struct bench_stage *stages)
{
    fprintf(stderr, "bench: %s, jailed and unjailed (%d each)\n", label, rounds);
    struct bench_series *rows[N_SIDES];
    pair_series(p->ctx->report, "ms", label, rows);
    long marks[N_SIDES];
    for (int s = 0; s < N_SIDES; s++)
        marks[s] = bench_log_mark(p->sides[s].vh.log_path);
    int rc = interleave(p, op, rounds, rows);
    note_difference(rows, target);
    if (from)
        pair_breakdown(p, marks, from, stages);
    return rc;
}

/* The stages a jail can change. A restore's QEMU start holds all of the
 * jail's setup; a pooled VM paid it in its refill, before the create. */
static const struct bench_stage start_stages[] = {
    { "qemu_us", "QEMU start → QMP answers" },
    { "restore_us", "device state load + cont" },
    { NULL, NULL },
};
static const struct bench_stage pool_stages[] = {
    { "name_us", "registry + rename (directory, namespace)" },
    { "cont_us", "QMP cont" },
    { NULL, NULL },
};

/* Memory of each idle QEMU, in MiB, by row. */
enum { MEM_RSS, MEM_PSS, MEM_OWN, N_MEM };
static const char *const mem_labels[N_MEM] = {
    [MEM_RSS] = "RSS per idle sandbox (QEMU)",
    [MEM_PSS] = "PSS per idle sandbox",
    [MEM_OWN] = "  QEMU's own (RSS outside guest RAM)",
};

static void measure_memory(struct jail_pair *p, char *ids[N_SIDES][JAIL_MAX_IDLE], int n)
{
    struct bench_series *rows[N_MEM][N_SIDES];
    for (int k = 0; k < N_MEM; k++)
        pair_series(p->ctx->report, "MiB", mem_labels[k], rows[k]);
    for (int s = 0; s < N_SIDES; s++)
        for (int i = 0; i < n && ids[s][i]; i++) {
            struct bench_qemu_memory m;
            int pid = bench_qemu_pid(&p->sides[s].vh, ids[s][i]);
            if (pid < 0 || bench_qemu_memory(pid, &m) < 0)
                continue;
            bench_series_add(rows[MEM_RSS][s], m.rss_mib);
            bench_series_add(rows[MEM_PSS][s], m.pss_mib);
            bench_series_add(rows[MEM_OWN][s], m.rss_mib - m.ram_rss_mib);
        }
    for (int k = 0; k < N_MEM; k++)
        note_difference(rows[k], NULL);
}

/* n idle sandboxes per side, created alternately, measured after they
 * settled, deleted. */
static int measure_idle(struct jail_pair *p, int n)
{
    if (n > JAIL_MAX_IDLE)
        n = JAIL_MAX_IDLE;
    fprintf(stderr, "bench: %d idle sandboxes, jailed and unjailed\n", n);
    char *ids[N_SIDES][JAIL_MAX_IDLE] = { { 0 } };
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        for (int k = 0; k < N_SIDES && rc == 0; k++) {
            int s = (i + k) % N_SIDES;
            if (!(ids[s][i] = bench_create(&p->sides[s].vh, NULL)))
                rc = -1;
        }
    if (rc == 0) {
        sleep(JAIL_IDLE_SETTLE_S);
        measure_memory(p, ids, n);
    }
    for (int s = 0; s < N_SIDES; s++)
        for (int i = 0; i < n; i++) {
            if (ids[s][i] && bench_delete(&p->sides[s].vh, ids[s][i]) < 0)
                rc = -1;
            free(ids[s][i]);
        }
    return rc;
}

/* A live sandbox on each side to fork from (untimed). */
static int make_sources(struct jail_pair *p)
{
    for (int s = 0; s < N_SIDES; s++)
        if (!(p->sides[s].source = bench_create(&p->sides[s].vh, NULL)))
            return -1;
    return 0;
}

/* The jail around single programs (bench_jail_setup.h), before any VM. */
static int measure_alone(struct bench_ctx *ctx)
{
    int runs = bench_env_count("AIRLOCK_BENCH_JAIL_SETUPS", 40);
    struct escape_jail_env e;
    if (bench_jail_env_open(&e) < 0)
        return -1;
    int rc = bench_jail_setup(ctx->report, &e, runs);
    if (rc == 0)
        rc = bench_jail_qemu(ctx->report, &e, runs / 2 > 0 ? runs / 2 : 1);
    escape_jail_env_close(&e, rc < 0);
    return rc;
}

int bench_section_jail(struct bench_ctx *ctx)
{
    int rounds = bench_env_count("AIRLOCK_BENCH_JAIL_ROUNDS", 20);
    int idle = bench_env_count("AIRLOCK_BENCH_JAIL_IDLE", 4);
    struct jail_pair p;
    ctx->report->section = "the QEMU jail's own steps, and QEMU alone in and out of it";
    int rc = measure_alone(ctx);
    ctx->report->section = "the QEMU jail: jailed beside unjailed (--no-jail), interleaved";

    if (pair_start(&p, ctx, true) < 0)
        return -1;
    const struct bench_op pooled = { .before = wait_pools, .run = create_named,
                                     .after = delete_made };
    if (measure(&p, &pooled, "create from pool → guest ready", "<= +2 ms", rounds, "pool",
                pool_stages) < 0)
        rc = -1;
    if (pair_stop(&p) < 0)
        rc = -1;

    if (pair_start(&p, ctx, false) < 0)
        return -1;
    const struct bench_op restore = { .run = create_named, .after = delete_made };
    if (measure(&p, &restore, "create (restore, no pool) → guest ready", "<= +10 ms", rounds,
                "snapshot", start_stages) < 0)
        rc = -1;
    const struct bench_op fork = { .run = fork_source, .after = delete_made };
    if (make_sources(&p) < 0 ||
        measure(&p, &fork, "fork of a live sandbox → fork ready", NULL, rounds, "checkpoint",
                start_stages) < 0 ||
        drop_sources(&p) < 0)
        rc = -1;
    if (measure_idle(&p, idle) < 0)
        rc = -1;
    if (pair_stop(&p) < 0)
        rc = -1;
    return rc;
}
