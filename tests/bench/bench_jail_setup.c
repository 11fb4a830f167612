/* The jail's own steps, without QEMU (section "jail"): vmhost's jail
 * (jail.h) around /usr/bin/true, beside the same program started as an
 * unjailed QEMU is (fork + exec), with and without the preload:
 *
 *   jail_open    uid claim (flock), cgroup leaf and its limits, chown of
 *                the files the jail writes
 *   spawn → exit clone3 into new namespaces, cgroup join, setns, the
 *                root's mounts, pivot_root, rlimits, privileges dropped,
 *                exec with the preload, true's run, its exit
 *   jail_close   cgroup leaf removed, files back to root, uid released
 *   cgroup join  a process moved into a new leaf of every hierarchy, as
 *                the jail's child joins: on cgroup v1 the move takes the
 *                kernel's threadgroup lock for writing, which waits for an
 *                RCU grace period unless one passed just before
 *
 * Jailed runs are spaced as creates are (JAIL_SETUP_GAP_MS), else each
 * would find the last one's grace period and the join would look free.
 * Also the environment both this and bench_jail_qemu.c run in. */
#include "bench_jail_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "jail_cgroup.h"

/* vmhost's defaults (vmhost/main.c). */
#define SETUP_UID_BASE 900000000u
#define SETUP_UID_COUNT 4096u
#define SETUP_LOCK_DIR "/run/airlock/jail-uids"
#define SETUP_PROGRAM "/usr/bin/true"
#define JAIL_SETUP_GAP_MS 50

int bench_jail_env_open(struct escape_jail_env *e)
{
    return escape_jail_env_open(e, SETUP_UID_BASE, SETUP_UID_COUNT, SETUP_LOCK_DIR);
}

struct jail_spec bench_jail_spec(const struct escape_jail_env *e, const char *program)
{
    return (struct jail_spec){ .qemu_binary = program, .dir = e->dir,
                               .netns = "/proc/self/ns/net", .vcpus = 1, .memory_mb = 128,
                               .max_file_bytes = 1u << 20 };
}

pid_t bench_jail_fork_exec(char *const argv[], char *const envp[], const char *cwd)
{
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        if ((cwd && chdir(cwd) < 0) || devnull < 0 || dup2(devnull, 0) < 0 ||
            dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
            _exit(126);
        execve(argv[0], argv, envp);
        _exit(127);
    }
    return pid;
}

int bench_jail_reap(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Time of program to its exit, unjailed, the preload in its environment
 * if preload is set; -1 when it failed. */
static double run_unjailed(const char *preload)
{
    char env_preload[PATH_MAX + 16];
    snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", preload ? preload : "");
    char *const argv[] = { SETUP_PROGRAM, NULL };
    char *const envp[] = { preload ? env_preload : NULL, NULL };
    double t0 = bench_now_ms();
    pid_t pid = bench_jail_fork_exec(argv, envp, NULL);
    return pid > 0 && bench_jail_reap(pid) == 0 ? bench_now_ms() - t0 : -1;
}

struct setup_rows {
    struct bench_series *open, *spawn, *close, *plain, *preloaded, *join;
};

/* A child (waiting on a pipe) moved into a new leaf of every hierarchy,
 * the writes timed; the leaf removed after. */
static int run_cgroup_join(const struct jail_cgroups *cg, int i, struct bench_series *s)
{
    char leaf[48], err[512];
    snprintf(leaf, sizeof(leaf), "bench-join-%d-%d", (int)getpid(), i);
    const struct jail_limits limits = { .memory_bytes = 384ull << 20, .cpu_quota_us = 150000,
                                        .pids = 128 };
    int fds[JAIL_CGROUP_MAX_DIRS], hold[2];
    int n = jail_cgroups_make_leaf(cg, leaf, &limits, fds, err, sizeof(err));
    if (n < 0 || pipe(hold) < 0) {
        fprintf(stderr, "bench: cgroup leaf: %s\n", n < 0 ? err : "pipe");
        if (n >= 0)
            jail_cgroups_remove_leaf(cg, leaf);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(hold[1]);
        _exit(read(hold[0], &c, 1) < 0);
    }
    close(hold[0]);
    char num[16];
    int len = snprintf(num, sizeof(num), "%d", (int)pid);
    int rc = pid > 0 ? 0 : -1;
    double t0 = bench_now_ms();
    for (int k = 0; k < n && rc == 0; k++)
        if (write(fds[k], num, (size_t)len) != len)
            rc = -1;
    double took = bench_now_ms() - t0;
    close(hold[1]);
    if (pid > 0)
        bench_jail_reap(pid);
    for (int k = 0; k < n; k++)
        close(fds[k]);
    jail_cgroups_remove_leaf(cg, leaf);
    if (rc == 0)
        bench_series_add(s, took);
    return rc;
}

/* One jail's open, spawn to exit and close, each timed into rows. */
static int run_jailed(struct escape_jail_env *e, struct setup_rows *rows)
{
    const struct jail_spec spec = bench_jail_spec(e, SETUP_PROGRAM);
    char err[512];
    struct jail *jl;
    double t0 = bench_now_ms();
    if (jail_open(e->jailer, &spec, &jl, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench: jail_open: %s\n", err);
        return -1;
    }
    double t1 = bench_now_ms();
    char *const argv[] = { SETUP_PROGRAM, NULL };
    pid_t pid = jail_spawn(jl, argv, e->log_fd, -1, 0, err, sizeof(err));
    int rc = pid > 0 ? bench_jail_reap(pid) : -1;
    double t2 = bench_now_ms();
    if (rc < 0)
        fprintf(stderr, "bench: %s in a jail: %s\n", SETUP_PROGRAM, pid > 0 ? "failed" : err);
    jail_close(jl);
    double t3 = bench_now_ms();
    if (rc == 0) {
        bench_series_add(rows->open, t1 - t0);
        bench_series_add(rows->spawn, t2 - t1);
        bench_series_add(rows->close, t3 - t2);
    }
    return rc;
}

int bench_jail_setup(struct bench_report *r, struct escape_jail_env *e, int runs)
{
    fprintf(stderr, "bench: the jail's own steps around %s (%d)\n", SETUP_PROGRAM, runs);
    /* One after another: the order of the rows is the order they are made. */
    struct setup_rows rows;
    rows.open = bench_report_series(r, "ms", "jail_open (uid claim, cgroup leaf, chown)");
    rows.spawn = bench_report_series(r, "ms", "%s in the jail: spawn → exit", SETUP_PROGRAM);
    rows.join = bench_report_series(r, "ms", "  of which joining the cgroup leaves");
    rows.plain = bench_report_series(r, "ms", "%s unjailed (fork + exec, as --no-jail)",
                                     SETUP_PROGRAM);
    rows.preloaded = bench_report_series(r, "ms", "%s unjailed with the preload", SETUP_PROGRAM);
    rows.close = bench_report_series(r, "ms", "jail_close (cgroup leaf, chown back, uid)");
    struct jail_cgroups cg;
    char err[512];
    if (jail_cgroups_init(&cg, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench: cgroups: %s\n", err);
        return -1;
    }
    bench_series_note(rows.join, "cgroup v%d, %zu hierarch%s: a waiting child moved into a new "
                                 "leaf of each, apart from the spawns",
                      cg.version, cg.n_parents, cg.n_parents == 1 ? "y" : "ies");
    int rc = 0;
    for (int i = 0; i < runs && rc == 0; i++) {
        double plain = run_unjailed(NULL), preloaded = run_unjailed(e->preload);
        usleep(JAIL_SETUP_GAP_MS * 1000);
        if (plain < 0 || preloaded < 0 || run_jailed(e, &rows) < 0) {
            rc = -1;
            break;
        }
        usleep(JAIL_SETUP_GAP_MS * 1000);
        if (run_cgroup_join(&cg, i, rows.join) < 0) {
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
    return rc;
}
