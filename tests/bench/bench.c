/* airlock-bench: performance figures of a real vmhost on this machine, each
 * beside a reference point measured in the same run, printed as a table and
 * written as JSON (bench/results/). Never used as a pass/fail test.
 *
 *   create         CreateSandbox → guest daemon ready, restored from the
 *                  template snapshot (reflink, QEMU start, state load, cont,
 *                  guestd hello, clock + entropy + hostname), 20 runs
 *   cold boot      the same with vmhost --cold-boot (kernel boot), 10 runs:
 *                  the reference for create
 *   create (pool)  the same from vmhost --warm-pool 2: a restored, paused VM
 *                  is resumed and gets the guest init; each run waits until
 *                  the pool is full again first (not timed), 20 runs
 *   pause, resume  PauseSandbox / ResumeSandbox round trips, 50 runs each
 *   suspend, resume from suspended  SuspendSandbox (whole 512 MiB guest to
 *                  disk, fsync, QEMU exits) / ResumeSandbox, 5 runs each
 *   RSS per idle sandbox  VmRSS of each QEMU, 4 sandboxes idle for 2 s
 *   exec `true`    Exec round trip through gRPC + guest channel, 200 runs
 *   file write/read 64 MiB through WriteFile / ReadFile, MB/s
 * References: spawning `true` on the host (the floor for any exec),
 * `unshare -n true` (a process in its own network namespace: the floor for
 * any sandbox), and a
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
#define BENCH_POOL_SIZE "2"
#define BENCH_POOL_FILL_TIMEOUT_MS 180000
#define BENCH_SUSPENDS 5
#define BENCH_IDLE_SANDBOXES 4

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

/* runs x (first then second), each call timed into its series. */
static int bench_transitions(struct itest_vmhost *vh, const char *id, const char *first,
                             const char *second, int runs, struct bench_series *first_s,
                             struct bench_series *second_s)
{
    const char *methods[] = { first, second };
    struct bench_series *series[] = { first_s, second_s };
    for (int i = 0; i < runs; i++) {
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

/* Creates from a warm pool; each run starts with a full pool. */
static int bench_create_from_pool(struct bench_series *s)
{
    struct itest_vmhost pooled;
    const char *const args[] = { "--warm-pool", BENCH_POOL_SIZE, NULL };
    if (itest_vmhost_start(&pooled, args) < 0)
        return -1;
    int rc = 0;
    unsigned want = (unsigned)atoi(BENCH_POOL_SIZE);
    for (int i = 0; i < BENCH_RESTORES && rc == 0; i++) {
        if (!itest_wait_pool_ready(&pooled, want, BENCH_POOL_FILL_TIMEOUT_MS) ||
            bench_create(&pooled, 1, s) < 0)
            rc = -1;
    }
    if (itest_vmhost_stop(&pooled) < 0)
        rc = -1;
    return rc;
}

/* VmRSS of pid in MiB, or -1. */
static double rss_mib(int pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    double kib = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %lf kB", &kib) == 1)
            break;
    fclose(f);
    return kib < 0 ? -1 : kib / 1024;
}

/* Resident memory of each QEMU of a few idle sandboxes. */
static int bench_idle_rss(struct itest_vmhost *vh, struct bench_series *s)
{
    char *ids[BENCH_IDLE_SANDBOXES] = { 0 };
    int rc = 0;
    for (int i = 0; i < BENCH_IDLE_SANDBOXES && rc == 0; i++)
        if (!(ids[i] = itest_create_sandbox(vh, NULL, NULL)))
            rc = -1;
    if (rc == 0)
        sleep(2);
    for (int i = 0; i < BENCH_IDLE_SANDBOXES && rc == 0; i++) {
        grpc_status_code st;
        Airlock__Vmhost__V1__Sandbox *sb =
            itest_sandbox_call(vh, ITEST_METHOD("GetSandbox"), ids[i], &st, NULL);
        double mib = sb ? rss_mib(sb->qemu_pid) : -1;
        if (sb)
            protobuf_c_message_free_unpacked(&sb->base, NULL);
        if (mib < 0)
            rc = -1;
        else
            bench_series_add(s, mib);
    }
    for (int i = 0; i < BENCH_IDLE_SANDBOXES; i++) {
        if (ids[i])
            itest_delete_sandbox(vh, ids[i]);
        free(ids[i]);
    }
    return rc;
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

static void host_spawn(char *const argv[], struct bench_series *s)
{
    for (int i = 0; i < BENCH_EXECS; i++) {
        double t0 = now_ms();
        pid_t pid;
        if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) == 0)
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
    struct bench_series pool = { .name = "create from warm pool to guest ready", .unit = "ms" };
    struct bench_series boot = { .name = "cold boot to guest ready (reference)", .unit = "ms" };
    struct bench_series host_unshare = { .name = "host: spawn `unshare -n true` (floor)",
                                         .unit = "ms" };
    struct bench_series suspend = { .name = "suspend (512 MiB guest, durable)", .unit = "ms" };
    struct bench_series unsuspend = { .name = "resume from suspended", .unit = "ms" };
    struct bench_series rss = { .name = "RSS per idle sandbox (QEMU)", .unit = "MiB" };
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
    if (bench_transitions(&vh, id, ITEST_METHOD("PauseSandbox"), ITEST_METHOD("ResumeSandbox"),
                          BENCH_PAUSES, &pause, &resume) < 0)
        goto out;
    fprintf(stderr, "bench: suspend/resume from suspended (%d)\n", BENCH_SUSPENDS);
    if (bench_transitions(&vh, id, ITEST_METHOD("SuspendSandbox"), ITEST_METHOD("ResumeSandbox"),
                          BENCH_SUSPENDS, &suspend, &unsuspend) < 0)
        goto out;
    fprintf(stderr, "bench: exec round trips (%d)\n", BENCH_EXECS);
    if (bench_exec_true(&vh, id, &exec) < 0)
        goto out;
    char *true_argv[] = { "true", NULL };
    char *unshare_argv[] = { "unshare", "-n", "true", NULL };
    host_spawn(true_argv, &host_true);
    host_spawn(unshare_argv, &host_unshare);
    fprintf(stderr, "bench: file throughput\n");
    if (bench_files(&vh, id, &wr, &rd) < 0)
        goto out;
    host_pipe_throughput(&host_pipe);
    itest_delete_sandbox(&vh, id);
    free(id);
    id = NULL;
    fprintf(stderr, "bench: resident memory of %d idle sandboxes\n", BENCH_IDLE_SANDBOXES);
    if (bench_idle_rss(&vh, &rss) < 0)
        goto out;
    if (itest_vmhost_stop(&vh) < 0)
        goto out;
    fprintf(stderr, "bench: creates from a warm pool (%d)\n", BENCH_RESTORES);
    if (bench_create_from_pool(&pool) < 0)
        goto out;
    fprintf(stderr, "bench: cold boots with --cold-boot (%d)\n", BENCH_BOOTS);
    if (bench_cold_boot(&boot) < 0)
        goto out;

    struct bench_series *all[] = { &pool, &create, &boot, &host_unshare, &pause, &resume,
                                   &suspend, &unsuspend, &rss, &exec, &host_true, &wr, &rd,
                                   &host_pipe };
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
