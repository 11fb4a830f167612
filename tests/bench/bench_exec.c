/* Section "exec": Exec of `true` through vmhost's gRPC and the guest
 * channel (compare with the host's spawn of `true` in "floor"), the same
 * while another sandbox spins on both its vCPUs (the escape suite's CPU
 * burn, tests/escape/test_guest_resources.c, which only checks that the
 * exec answers), and 64 MiB through WriteFile / ReadFile (compare with the
 * host's pipe). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define EXEC_RUNS 200
#define BURN_RUNS 100
#define BURN_VCPUS 2
/* Detached from the exec that starts it: one spinning shell per vCPU (the
 * loop and the row's name say 2: BURN_VCPUS). */
#define BURN_SCRIPT                                                                   \
    "setsid -f sh -c 'for i in 1 2; do sh -c \"while :; do :; done\" & done; wait' " \
    "</dev/null >/dev/null 2>&1"
#define FILE_BYTES (64u << 20)
#define FILE_RUNS 3

struct exec_run {
    struct itest_vmhost *vh;
    const char *id;
};

static int run_exec(void *arg, int w, int r)
{
    (void)w;
    (void)r;
    struct exec_run *e = arg;
    return bench_exec_true(e->vh, e->id);
}

/* A sandbox of BURN_VCPUS vCPUs, every one spinning; NULL after printing
 * why. */
static char *burner_start(struct itest_vmhost *vh)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.vcpus = BURN_VCPUS;
    grpc_status_code st;
    char *details = NULL;
    char *id = itest_create_sandbox_with(vh, &req, &st, &details);
    if (!id)
        fprintf(stderr, "bench: CreateSandbox (burner): %s: %s\n", rpc_status_name(st),
                details ? details : "");
    free(details);
    if (!id)
        return NULL;
    struct itest_exec_result r;
    itest_sh(vh, id, BURN_SCRIPT, &r);
    bool started = r.status == GRPC_STATUS_OK && r.exit_code == 0;
    if (!started)
        fprintf(stderr, "bench: the burn did not start: %s\n", rpc_status_name(r.status));
    itest_exec_result_free(&r);
    if (started)
        return id;
    bench_delete(vh, id);
    free(id);
    return NULL;
}

static int exec_beside_burn(struct itest_vmhost *vh, const char *id, struct bench_series *s)
{
    char *burner = burner_start(vh);
    if (!burner)
        return -1;
    struct exec_run e = { .vh = vh, .id = id };
    struct bench_op op = { .run = run_exec, .arg = &e };
    int rc = bench_rounds(&op, 1, BURN_RUNS, s);
    if (bench_delete(vh, burner) < 0)
        rc = -1;
    free(burner);
    return rc;
}

static int files(struct itest_vmhost *vh, const char *id, struct bench_series *wr,
                 struct bench_series *rd)
{
    uint8_t *data = malloc(FILE_BYTES);
    if (!data)
        return -1;
    for (size_t i = 0; i < FILE_BYTES; i++)
        data[i] = (uint8_t)(i * 2654435761u >> 24);
    const uint8_t path[] = "/root/bench.bin";
    int rc = 0;
    for (int i = 0; i < FILE_RUNS && rc == 0; i++) {
        double t0 = bench_now_ms();
        if (itest_write_file(vh, id, path, sizeof(path) - 1, data, FILE_BYTES, NULL) !=
            GRPC_STATUS_OK)
            rc = -1;
        double t1 = bench_now_ms();
        uint8_t *back = NULL;
        size_t len = 0;
        if (itest_read_file(vh, id, path, sizeof(path) - 1, &back, &len, NULL) != GRPC_STATUS_OK ||
            len != FILE_BYTES)
            rc = -1;
        double t2 = bench_now_ms();
        free(back);
        if (rc == 0) {
            bench_series_add(wr, FILE_BYTES / 1e6 / ((t1 - t0) / 1e3));
            bench_series_add(rd, FILE_BYTES / 1e6 / ((t2 - t1) / 1e3));
        }
    }
    free(data);
    return rc;
}

int bench_section_exec(struct bench_ctx *ctx)
{
    struct bench_report *r = ctx->report;
    r->section = "exec and files (vmhost gRPC + guest channel)";
    struct itest_vmhost vh;
    if (itest_vmhost_start(&vh, NULL) < 0)
        return -1;
    char *id = bench_create(&vh, NULL);
    int rc = id ? 0 : -1;
    if (id) {
        bench_record_accel(ctx, &vh, id);
        fprintf(stderr, "bench: exec round trips (%d)\n", EXEC_RUNS);
        struct exec_run e = { .vh = &vh, .id = id };
        struct bench_op op = { .run = run_exec, .arg = &e };
        if (bench_rounds(&op, 1, EXEC_RUNS,
                         bench_report_series(r, "ms", "exec `true` round trip")) < 0)
            rc = -1;
        fprintf(stderr, "bench: exec round trips beside a sandbox burning %d vCPUs (%d)\n",
                BURN_VCPUS, BURN_RUNS);
        if (exec_beside_burn(&vh, id,
                             bench_report_series(r, "ms", "  the same, another sandbox burning "
                                                          "2 vCPUs")) < 0)
            rc = -1;
        fprintf(stderr, "bench: file throughput\n");
        if (files(&vh, id, bench_report_series(r, "MB/s", "file write 64 MiB"),
                  bench_report_series(r, "MB/s", "file read 64 MiB")) < 0)
            rc = -1;
        if (bench_delete(&vh, id) < 0)
            rc = -1;
        free(id);
    }
    if (itest_vmhost_stop(&vh) < 0)
        rc = -1;
    return rc;
}
