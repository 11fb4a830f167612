/* Section "exec": Exec of `true` through vmhost's gRPC and the guest
 * channel (compare with the host's spawn of `true` in "floor"), and 64 MiB
 * through WriteFile / ReadFile (compare with the host's pipe). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define EXEC_RUNS 200
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
