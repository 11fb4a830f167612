/* The jail's own steps, without QEMU (section "jail"): vmhost's jail
 * (jail.h) around /usr/bin/true, beside the same program started as an
 * unjailed QEMU is (fork + exec), with and without the preload, so the
 * difference a jailed create shows can be told apart:
 *
 *   jail_open    uid claim (flock), cgroup leaf and its limits, chown of
 *                the files the jail writes
 *   spawn → exit clone3 into new namespaces, cgroup join, setns, the
 *                root's mounts, pivot_root, rlimits, privileges dropped,
 *                exec with the preload, true's run, its exit
 *   jail_close   cgroup leaf removed, files back to root, uid released
 *
 * The uid range and claim directory are vmhost's defaults (vmhost/main.c),
 * so the claims are seen by any vmhost on the machine. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_jail_setup.h"
#include "fsutil.h"
#include "jail.h"

#define SETUP_UID_BASE 900000000u
#define SETUP_UID_COUNT 4096u
#define SETUP_LOCK_DIR "/run/airlock/jail-uids"
#define SETUP_MEM_OVERHEAD_MB 256u
#define SETUP_PROGRAM "/usr/bin/true"

struct setup_rows {
    struct bench_series *open, *spawn, *close, *plain, *preloaded;
};

/* 0 when the process ended with status 0. */
static int reap(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The program as vm.c starts an unjailed QEMU: fork, exec; the preload
 * in its environment when preload is set. Time to its exit, or -1. */
static double run_unjailed(const char *preload)
{
    char env_preload[PATH_MAX + 16];
    snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", preload ? preload : "");
    char *const argv[] = { SETUP_PROGRAM, NULL };
    char *const envp[] = { preload ? env_preload : NULL, NULL };
    double t0 = bench_now_ms();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execve(argv[0], argv, envp);
        _exit(127);
    }
    return reap(pid) == 0 ? bench_now_ms() - t0 : -1;
}

/* One jail's open, spawn to exit and close, each timed into rows. */
static int run_jailed(struct jailer *jr, const char *dir, int log_fd,
                      struct setup_rows *rows)
{
    const struct jail_spec spec = { .qemu_binary = SETUP_PROGRAM, .dir = dir,
                                    .netns = "/proc/self/ns/net", .vcpus = 1, .memory_mb = 128,
                                    .max_file_bytes = 1u << 20 };
    char err[512];
    struct jail *jl;
    double t0 = bench_now_ms();
    if (jail_open(jr, &spec, &jl, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench: jail_open: %s\n", err);
        return -1;
    }
    double t1 = bench_now_ms();
    char *const argv[] = { SETUP_PROGRAM, NULL };
    pid_t pid = jail_spawn(jl, argv, log_fd, -1, 0, err, sizeof(err));
    int rc = pid > 0 ? reap(pid) : -1;
    double t2 = bench_now_ms();
    if (rc < 0)
        fprintf(stderr, "bench: %s in a jail did not run (%s; see %s)\n", SETUP_PROGRAM,
                pid > 0 ? "it failed" : err, dir);
    jail_close(jl);
    double t3 = bench_now_ms();
    if (rc == 0) {
        bench_series_add(rows->open, t1 - t0);
        bench_series_add(rows->spawn, t2 - t1);
        bench_series_add(rows->close, t3 - t2);
    }
    return rc;
}

/* The preload beside airlock-vmhost, where vmhost looks for it. */
static void preload_path(char *out, size_t outlen)
{
    char bin[PATH_MAX];
    snprintf(bin, sizeof(bin), "%s", AIRLOCK_VMHOST_BIN);
    snprintf(out, outlen, "%s/airlock-qemu-preload.so", dirname(bin));
}

int bench_jail_setup(struct bench_report *r, int runs)
{
    char preload[PATH_MAX], tmp[] = "/tmp/airlock-bench-jail-XXXXXX";
    preload_path(preload, sizeof(preload));
    if (!mkdtemp(tmp))
        return -1;
    char scratch[PATH_MAX], dir[PATH_MAX], log[PATH_MAX], err[512];
    fs_path(scratch, sizeof(scratch), "%s/root", tmp);
    fs_path(dir, sizeof(dir), "%s/vm", tmp);
    fs_path(log, sizeof(log), "%s/jail.log", tmp);
    const struct jailer_config cfg = { .uid_base = SETUP_UID_BASE, .uid_count = SETUP_UID_COUNT,
                                       .lock_dir = SETUP_LOCK_DIR, .preload = preload,
                                       .scratch_dir = scratch,
                                       .mem_overhead_mb = SETUP_MEM_OVERHEAD_MB };
    struct jailer *jr = NULL;
    int log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0 || fs_mkdir_p(dir, 0700, err, sizeof(err)) < 0 ||
        jailer_create(&cfg, &jr, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench: the jail's own steps not measured: %s\n", err);
        if (log_fd >= 0)
            close(log_fd);
        fs_remove_tree(tmp, NULL, 0);
        return -1;
    }
    fprintf(stderr, "bench: the jail's own steps around %s (%d)\n", SETUP_PROGRAM, runs);
    struct setup_rows rows = {
        .open = bench_report_series(r, "ms", "jail_open (uid claim, cgroup leaf, chown)"),
        .spawn = bench_report_series(r, "ms", "%s in the jail: spawn → exit", SETUP_PROGRAM),
        .preloaded = bench_report_series(r, "ms", "%s unjailed with the preload", SETUP_PROGRAM),
        .plain = bench_report_series(r, "ms", "%s unjailed (fork + exec, as --no-jail)",
                                     SETUP_PROGRAM),
        .close = bench_report_series(r, "ms", "jail_close (cgroup leaf, chown back, uid)"),
    };
    int rc = 0;
    for (int i = 0; i < runs && rc == 0; i++) {
        double plain = run_unjailed(NULL), preloaded = run_unjailed(preload);
        if (plain < 0 || preloaded < 0 || run_jailed(jr, dir, log_fd, &rows) < 0) {
            rc = -1;
            break;
        }
        bench_series_add(rows.plain, plain);
        bench_series_add(rows.preloaded, preloaded);
    }
    double plain = bench_series_percentile(rows.plain, 50);
    bench_series_note(rows.spawn, "median %+.2f ms over unjailed: clone3 (mount, PID, IPC, UTS "
                                  "namespaces), cgroup join, setns, mounts, pivot_root, "
                                  "privileges, the preload",
                      bench_series_percentile(rows.spawn, 50) - plain);
    bench_series_note(rows.preloaded, "median %+.2f ms over without",
                      bench_series_percentile(rows.preloaded, 50) - plain);
    jailer_free(jr);
    close(log_fd);
    if (rc == 0)
        fs_remove_tree(tmp, NULL, 0);
    return rc;
}
