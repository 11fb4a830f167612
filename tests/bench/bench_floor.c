/* Section "floor": what the host itself takes, measured in the same run as
 * the sandboxes: starting a process (the floor for any exec), a process in
 * new namespaces (unshare; bwrap when installed: the floor for any
 * sandbox), QEMU itself (exec, dynamic linking and its start-up: the floor
 * for any VM started on demand), and bytes through a pipe (the ceiling for
 * streamed files). */
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

#define FLOOR_SPAWNS 200
#define FLOOR_QEMU_STARTS 20
#define FLOOR_PIPE_BYTES (64u << 20)
#define FLOOR_PIPE_RUNS 3

/* Times argv to completion runs times; -1 if it could not run or failed. */
static int spawn_series(char *const argv[], int runs, struct bench_series *s)
{
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now_ms();
        pid_t pid;
        int status;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (rc != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            bench_series_note(s, "%s did not run", argv[0]);
            return -1;
        }
        bench_series_add(s, bench_now_ms() - t0);
    }
    return 0;
}

static bool on_path(const char *prog)
{
    const char *path = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *dir = strtok_r(buf, ":", &save); dir;
         dir = strtok_r(NULL, ":", &save)) {
        char full[4200];
        snprintf(full, sizeof(full), "%s/%s", dir, prog);
        if (access(full, X_OK) == 0)
            return true;
    }
    return false;
}

static void pipe_throughput(struct bench_series *s)
{
    static uint8_t buf[1 << 20];
    for (int i = 0; i < FLOOR_PIPE_RUNS; i++) {
        double t0 = bench_now_ms();
        FILE *p = popen("cat > /dev/null", "w");
        if (!p)
            return;
        for (size_t done = 0; done < FLOOR_PIPE_BYTES; done += sizeof(buf))
            fwrite(buf, 1, sizeof(buf), p);
        pclose(p);
        bench_series_add(s, FLOOR_PIPE_BYTES / 1e6 / ((bench_now_ms() - t0) / 1e3));
    }
}

int bench_section_floor(struct bench_ctx *ctx)
{
    struct bench_report *r = ctx->report;
    r->section = "host floor (no VM)";
    int rc = 0;
    char *true_argv[] = { "true", NULL };
    char *unshare_net[] = { "unshare", "-n", "true", NULL };
    char *unshare_all[] = { "unshare", "-fmnpiu", "--mount-proc", "true", NULL };
    char *bwrap[] = { "bwrap", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev",
                      "--proc", "/proc", "true", NULL };
    char *qemu[] = { "qemu-system-x86_64", "-version", NULL };
    if (spawn_series(true_argv, FLOOR_SPAWNS,
                     bench_report_series(r, "ms", "spawn `true` (floor for an exec)")) < 0)
        rc = -1;
    if (spawn_series(unshare_net, FLOOR_SPAWNS,
                     bench_report_series(r, "ms", "`unshare -n true` (own network namespace)")) < 0)
        rc = -1;
    if (spawn_series(unshare_all, FLOOR_SPAWNS,
                     bench_report_series(r, "ms", "`unshare -fmnpiu true` (all namespaces)")) < 0)
        rc = -1;
    struct bench_series *bw = bench_report_series(r, "ms", "`bwrap --unshare-all true`");
    if (!on_path("bwrap"))
        bench_series_note(bw, "bwrap is not installed: the unshare rows are the floor");
    else if (spawn_series(bwrap, FLOOR_SPAWNS, bw) < 0)
        rc = -1;
    struct bench_series *q = bench_report_series(r, "ms", "`qemu-system-x86_64 -version`");
    bench_series_note(q, "exec + dynamic linking + QEMU's constructors: any VM started on "
                         "demand pays at least this before its first instruction");
    if (spawn_series(qemu, FLOOR_QEMU_STARTS, q) < 0)
        rc = -1;
    pipe_throughput(bench_report_series(r, "MB/s", "pipe 64 MiB through `cat` (ceiling)"));
    return rc;
}
