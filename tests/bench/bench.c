/* airlock-bench: performance figures of a real vmhost on this machine, each
 * beside a reference point measured in the same run, printed as a table and
 * written as JSON (bench/results/). Never used as a pass/fail test.
 *
 *   create         CreateSandbox → guest daemon ready, restored from the
 *                  template snapshot (reflink, QEMU start, state load, cont,
 *                  guestd hello, clock + entropy + hostname), 20 runs
 *   cold boot      the same with vmhost --cold-boot (kernel boot), 10 runs:
 *                  the reference for create
 *   pause, resume  PauseSandbox / ResumeSandbox round trips, 50 runs each
 *   exec `true`    Exec round trip through gRPC + guest channel, 200 runs
 *   file write/read 64 MiB through WriteFile / ReadFile, MB/s
 * References: spawning `true` on the host (the floor for any exec), and a
 * 64 MiB pipe through `cat` on the host (the floor for streamed bytes). */
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"
#include "clock.h"
#include "fsutil.h"
#include "itest.h"

extern char **environ;

#define BENCH_BOOTS 10
#define BENCH_RESTORES 20
#define BENCH_PAUSES 50
#define BENCH_EXECS 200
#define BENCH_FILE_BYTES (64u << 20)
#define BENCH_FILE_RUNS 3

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int bench_create(struct itest_vmhost *vh, int runs, struct bench_series *s)
{
    for (int i = 0; i < runs; i++) {
        double t0 = now_ms();
        char *id = itest_create_sandbox(vh, NULL, NULL);
        double t1 = now_ms();
        if (!id)
            return -1;
        bench_series_add(s, t1 - t0);
        itest_delete_sandbox(vh, id);
        free(id);
    }
    return 0;
}

/* Pause then resume, each timed. */
static int bench_pause_resume(struct itest_vmhost *vh, const char *id, struct bench_series *pause,
                              struct bench_series *resume)
{
    const char *methods[] = { ITEST_METHOD("PauseSandbox"), ITEST_METHOD("ResumeSandbox") };
    struct bench_series *series[] = { pause, resume };
    for (int i = 0; i < BENCH_PAUSES; i++) {
        for (int k = 0; k < 2; k++) {
            grpc_status_code st;
            double t0 = now_ms();
            Airlock__Vmhost__V1__Sandbox *sb = itest_sandbox_call(vh, methods[k], id, &st, NULL);
            double t1 = now_ms();
            if (!sb)
                return -1;
            protobuf_c_message_free_unpacked(&sb->base, NULL);
            bench_series_add(series[k], t1 - t0);
        }
    }
    return 0;
}

/* The reference: a vmhost without template snapshots. */
static int bench_cold_boot(struct bench_series *s)
{
    struct itest_vmhost cold;
    const char *const args[] = { "--cold-boot", NULL };
    if (itest_vmhost_start(&cold, args) < 0)
        return -1;
    int rc = bench_create(&cold, BENCH_BOOTS, s);
    if (itest_vmhost_stop(&cold) < 0)
        rc = -1;
    return rc;
}

static int bench_exec_true(struct itest_vmhost *vh, const char *id, struct bench_series *s)
{
    const char *argv[] = { "true", NULL };
    for (int i = 0; i < BENCH_EXECS; i++) {
        struct itest_exec_result r;
        double t0 = now_ms();
        itest_exec(vh, id, argv, NULL, &r);
        double t1 = now_ms();
        bool ok = r.status == GRPC_STATUS_OK && r.exited && r.exit_code == 0;
        itest_exec_result_free(&r);
        if (!ok)
            return -1;
        bench_series_add(s, t1 - t0);
    }
    return 0;
}

static void host_spawn_true(struct bench_series *s)
{
    char *argv[] = { "true", NULL };
    for (int i = 0; i < BENCH_EXECS; i++) {
        double t0 = now_ms();
        pid_t pid;
        if (posix_spawnp(&pid, "true", NULL, NULL, argv, environ) == 0)
            waitpid(pid, NULL, 0);
        bench_series_add(s, now_ms() - t0);
    }
}

static int bench_files(struct itest_vmhost *vh, const char *id, struct bench_series *write_mbs,
                       struct bench_series *read_mbs)
{
    uint8_t *data = malloc(BENCH_FILE_BYTES);
    for (size_t i = 0; i < BENCH_FILE_BYTES; i++)
        data[i] = (uint8_t)(i * 2654435761u >> 24);
    const uint8_t path[] = "/root/bench.bin";
    int rc = 0;
    for (int i = 0; i < BENCH_FILE_RUNS && rc == 0; i++) {
        double t0 = now_ms();
        if (itest_write_file(vh, id, path, sizeof(path) - 1, data, BENCH_FILE_BYTES, NULL) !=
            GRPC_STATUS_OK)
            rc = -1;
        double t1 = now_ms();
        uint8_t *back = NULL;
        size_t len = 0;
        if (itest_read_file(vh, id, path, sizeof(path) - 1, &back, &len, NULL) != GRPC_STATUS_OK ||
            len != BENCH_FILE_BYTES)
            rc = -1;
        double t2 = now_ms();
        free(back);
        bench_series_add(write_mbs, BENCH_FILE_BYTES / 1e6 / ((t1 - t0) / 1e3));
        bench_series_add(read_mbs, BENCH_FILE_BYTES / 1e6 / ((t2 - t1) / 1e3));
    }
    free(data);
    return rc;
}

/* Host reference: 64 MiB through a pipe into `cat > /dev/null`. */
static void host_pipe_throughput(struct bench_series *s)
{
    for (int i = 0; i < BENCH_FILE_RUNS; i++) {
        double t0 = now_ms();
        FILE *p = popen("cat > /dev/null", "w");
        static uint8_t buf[1 << 20];
        for (size_t done = 0; done < BENCH_FILE_BYTES; done += sizeof(buf))
            fwrite(buf, 1, sizeof(buf), p);
        pclose(p);
        bench_series_add(s, BENCH_FILE_BYTES / 1e6 / ((now_ms() - t0) / 1e3));
    }
}

static const char *sandbox_accel(struct itest_vmhost *vh, const char *id)
{
    static char accel[16] = "unknown";
    Airlock__Vmhost__V1__GetSandboxRequest req = AIRLOCK__VMHOST__V1__GET_SANDBOX_REQUEST__INIT;
    req.id = (char *)id;
    Airlock__Vmhost__V1__Sandbox *sb = NULL;
    if (rpc_unary(vh->ch, ITEST_METHOD("GetSandbox"), &req.base,
                  &airlock__vmhost__v1__sandbox__descriptor, (ProtobufCMessage **)&sb, NULL,
                  10000) == GRPC_STATUS_OK) {
        snprintf(accel, sizeof(accel), "%s", sb->accel);
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    }
    return accel;
}

int main(int argc, char **argv)
{
    const char *out_dir = "bench/results";
    static const struct option opts[] = { { "out", required_argument, NULL, 'o' },
                                          { NULL, 0, NULL, 0 } };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'o')
            out_dir = optarg;
        else
            return 2;
    }

    struct itest_vmhost vh;
    fprintf(stderr, "bench: starting vmhost (builds the guest image on first use)\n");
    if (itest_vmhost_start(&vh, NULL) < 0)
        return 1;
    struct bench_series create = { .name = "create (restore snapshot) to guest ready",
                                   .unit = "ms" };
    struct bench_series boot = { .name = "cold boot to guest ready (reference)", .unit = "ms" };
    struct bench_series pause = { .name = "pause", .unit = "ms" };
    struct bench_series resume = { .name = "resume (incl. guest clock)", .unit = "ms" };
    struct bench_series exec = { .name = "exec `true` round trip", .unit = "ms" };
    struct bench_series host_true = { .name = "host: spawn `true` (floor)", .unit = "ms" };
    struct bench_series wr = { .name = "file write 64 MiB", .unit = "MB/s" };
    struct bench_series rd = { .name = "file read 64 MiB", .unit = "MB/s" };
    struct bench_series host_pipe = { .name = "host: pipe 64 MiB (ceiling)", .unit = "MB/s" };
    int rc = 1;
    char *id = NULL;

    fprintf(stderr, "bench: creates from the template snapshot (%d)\n", BENCH_RESTORES);
    if (bench_create(&vh, BENCH_RESTORES, &create) < 0)
        goto out;
    id = itest_create_sandbox(&vh, NULL, NULL);
    if (!id)
        goto out;
    const char *accel = sandbox_accel(&vh, id);
    fprintf(stderr, "bench: pause/resume (%d)\n", BENCH_PAUSES);
    if (bench_pause_resume(&vh, id, &pause, &resume) < 0)
        goto out;
    fprintf(stderr, "bench: exec round trips (%d)\n", BENCH_EXECS);
    if (bench_exec_true(&vh, id, &exec) < 0)
        goto out;
    host_spawn_true(&host_true);
    fprintf(stderr, "bench: file throughput\n");
    if (bench_files(&vh, id, &wr, &rd) < 0)
        goto out;
    host_pipe_throughput(&host_pipe);
    itest_delete_sandbox(&vh, id);
    free(id);
    id = NULL;
    if (itest_vmhost_stop(&vh) < 0)
        goto out;
    fprintf(stderr, "bench: cold boots with --cold-boot (%d)\n", BENCH_BOOTS);
    if (bench_cold_boot(&boot) < 0)
        goto out;

    struct bench_series *all[] = { &create, &boot, &pause, &resume, &exec, &host_true,
                                   &wr, &rd, &host_pipe };
    struct bench_report report = { .accel = accel, .series = all,
                                   .n_series = sizeof(all) / sizeof(*all) };
    bench_report_print(&report, stdout);
    char err[256];
    if (fs_mkdir_p(out_dir, 0755, err, sizeof(err)) < 0 ||
        bench_report_write_json(&report, out_dir, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench: %s\n", err);
        goto out;
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "bench: a measured operation failed\n");
    if (id)
        itest_delete_sandbox(&vh, id);
    free(id);
    if (itest_vmhost_stop(&vh) < 0)
        rc = 1;
    return rc;
}
