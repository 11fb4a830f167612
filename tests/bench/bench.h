/* What airlock-bench's sections share: the report they add series to,
 * timing, running an operation on N workers at once, and the vmhost calls
 * the sections time. Each section starts the services it measures and
 * stops them before it returns; a section returns -1 when an operation it
 * measures failed (the report then says so). */
#ifndef AIRLOCK_BENCH_H
#define AIRLOCK_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "bench_stats.h"
#include "itest.h"

struct bench_ctx {
    struct bench_report *report;
};

double bench_now_ms(void);

/* A count from the environment (name unset or not a positive number:
 * fallback), so a run can be made shorter or bigger. */
int bench_env_count(const char *name, int fallback);

/* One operation measured on several workers started together: per round,
 * every worker's before (untimed), then every worker's run (timed, into
 * the series), then every worker's after (untimed), each step starting
 * together. Any callback may be NULL except run; each returns 0 or -1. */
struct bench_op {
    int (*before)(void *arg, int worker, int round);
    int (*run)(void *arg, int worker, int round);
    int (*after)(void *arg, int worker, int round);
    void *arg;
};

/* rounds x workers samples; -1 (after the rest of the round) when any
 * callback failed. */
int bench_rounds(const struct bench_op *op, int workers, int rounds, struct bench_series *s);

/* vmhost calls; each returns 0 or -1 after printing the status. */
char *bench_create(struct itest_vmhost *vh, const char *id); /* NULL id: the node names it */
/* The same with one volume at /bench (made at size_mb when new). */
char *bench_create_with_volume(struct itest_vmhost *vh, const char *id, const char *volume_id,
                               uint64_t size_mb);
int bench_delete(struct itest_vmhost *vh, const char *id);
/* A VmHost volume method (ITEST_METHOD("CloneVolume"), ...) on VolumeRef
 * {id, snapshot_id, new_id}: 0, or -1 after printing the status. */
int bench_volume_call(struct itest_vmhost *vh, const char *method, const char *id,
                      const char *snapshot_id, const char *new_id);
/* ForkSandbox count 1 of the live sandbox id: the fork's id, or NULL. */
char *bench_fork(struct itest_vmhost *vh, const char *id);
int bench_sandbox_call(struct itest_vmhost *vh, const char *method, const char *id);
int bench_exec_true(struct itest_vmhost *vh, const char *id);
/* The sandbox's QEMU pid, or -1. */
int bench_qemu_pid(struct itest_vmhost *vh, const char *id);
/* The report names the accelerator the first sandbox measured ran on. */
void bench_record_accel(struct bench_ctx *ctx, struct itest_vmhost *vh, const char *id);

/* Sections (bench_*.c). */
int bench_section_floor(struct bench_ctx *ctx);
int bench_section_create(struct bench_ctx *ctx);
int bench_section_pool(struct bench_ctx *ctx);
int bench_section_pool_memory(struct bench_ctx *ctx);
int bench_section_lifecycle(struct bench_ctx *ctx);
int bench_section_exec(struct bench_ctx *ctx);
int bench_section_idle(struct bench_ctx *ctx);
int bench_section_controlplane(struct bench_ctx *ctx);
int bench_section_jail(struct bench_ctx *ctx);
int bench_section_store(struct bench_ctx *ctx);
int bench_section_ports(struct bench_ctx *ctx);
int bench_section_e2b(struct bench_ctx *ctx);
int bench_section_volumes(struct bench_ctx *ctx);
int bench_section_demand(struct bench_ctx *ctx);

#endif
