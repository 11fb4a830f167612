/* QEMU itself in and out of the jail (section "jail"): qemu-system-x86_64
 * -M none -S from its start to its QMP answer (greeting and
 * qmp_capabilities, what vm_start waits for), three ways in turn:
 *
 *   unjailed            fork + exec, as --no-jail starts QEMU
 *   unjailed, seccomp   the same with the -sandbox options every jailed
 *                       QEMU gets (vm.c): QEMU building and loading its
 *                       seccomp filter
 *   jailed              vmhost's jail (jail_open + jail_spawn) with those
 *                       options, as vmhost starts every QEMU
 *
 * The first two differ by QEMU's seccomp filter, the last two by the jail
 * itself as QEMU feels it (namespaces, mounts, cgroup and its limits, its
 * uid, the preload). QEMU is killed once it answered. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_jail_setup.h"
#include "fsutil.h"
#include "qmp.h"

#define QEMU_BINARY "/usr/bin/qemu-system-x86_64"
/* vm.c's, for a jailed QEMU. */
#define QEMU_SANDBOX "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"
#define QEMU_QMP_TIMEOUT_MS 10000

enum way { WAY_UNJAILED, WAY_SECCOMP, WAY_JAILED, N_WAYS };
static const char *const way_names[N_WAYS] = {
    [WAY_UNJAILED] = "unjailed",
    [WAY_SECCOMP] = "unjailed with -sandbox (seccomp)",
    [WAY_JAILED] = "jailed (with -sandbox)",
};

/* The socket is relative to QEMU's working directory: the jail's /vm is
 * e->dir, where an unjailed one runs too. */
static void qemu_argv(char *argv[16], char *qemu, bool sandbox)
{
    static char *const common[] = { "-M", "none", "-nodefaults", "-display", "none", "-S",
                                    "-accel", "tcg", "-qmp", "unix:qmp.sock,server=on,wait=off",
                                    NULL };
    size_t n = 0;
    argv[n++] = qemu;
    for (size_t i = 0; common[i]; i++)
        argv[n++] = common[i];
    if (sandbox) {
        argv[n++] = "-sandbox";
        argv[n++] = QEMU_SANDBOX;
    }
    argv[n] = NULL;
}

/* As vm.c's wait_for_qmp: the socket polled every millisecond, then the
 * greeting and qmp_capabilities. */
static int wait_qmp(const char *sock, pid_t pid, char *err, size_t errlen)
{
    double deadline = bench_now_ms() + QEMU_QMP_TIMEOUT_MS;
    while (bench_now_ms() < deadline) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            snprintf(err, errlen, "QEMU exited before it answered");
            return -1;
        }
        struct qmp_client c;
        if (access(sock, F_OK) == 0 &&
            qmp_connect(&c, sock, NULL, NULL, QEMU_QMP_TIMEOUT_MS, err, errlen) == 0) {
            qmp_close(&c);
            return 0;
        }
        usleep(1000);
    }
    snprintf(err, errlen, "QEMU did not answer on its QMP socket within %d ms",
             QEMU_QMP_TIMEOUT_MS);
    return -1;
}

/* One QEMU started the way w to its QMP answer: the time, or -1. */
static double start_to_qmp(struct escape_jail_env *e, char *qemu, enum way w)
{
    char sock[PATH_MAX], err[512] = "";
    fs_path(sock, sizeof(sock), "%s/qmp.sock", e->dir);
    unlink(sock);
    char *argv[16];
    qemu_argv(argv, qemu, w != WAY_UNJAILED);
    char *const envp[] = { NULL };
    struct jail *jl = NULL;
    pid_t pid = -1;
    double t0 = bench_now_ms(), took = -1;
    if (w == WAY_JAILED) {
        const struct jail_spec spec = bench_jail_spec(e, qemu);
        if (jail_open(e->jailer, &spec, &jl, err, sizeof(err)) == 0)
            pid = jail_spawn(jl, argv, e->log_fd, -1, 0, err, sizeof(err));
    } else {
        pid = bench_jail_fork_exec(argv, envp, e->dir);
    }
    if (pid > 0 && wait_qmp(sock, pid, err, sizeof(err)) == 0)
        took = bench_now_ms() - t0;
    if (pid > 0) {
        kill(pid, SIGKILL);
        bench_jail_reap(pid);
    }
    if (took < 0)
        fprintf(stderr, "bench: QEMU %s: %s\n", way_names[w], err);
    jail_close(jl);
    unlink(sock);
    return took;
}

int bench_jail_qemu(struct bench_report *r, struct escape_jail_env *e, int runs)
{
    char qemu[PATH_MAX];
    if (!realpath(QEMU_BINARY, qemu)) {
        fprintf(stderr, "bench: %s not found: QEMU's own rows not measured\n", QEMU_BINARY);
        return -1;
    }
    fprintf(stderr, "bench: QEMU -M none to QMP, three ways (%d each)\n", runs);
    struct bench_series *rows[N_WAYS];
    for (int w = 0; w < N_WAYS; w++)
        rows[w] = bench_report_series(r, "ms", "QEMU -M none start → QMP, %s", way_names[w]);
    for (int i = 0; i < runs; i++)
        for (int k = 0; k < N_WAYS; k++) { /* the first way turns every run */
            int w = (i + k) % N_WAYS;
            double took = start_to_qmp(e, qemu, (enum way)w);
            if (took < 0)
                return -1;
            bench_series_add(rows[w], took);
        }
    double plain = bench_series_percentile(rows[WAY_UNJAILED], 50);
    double seccomp = bench_series_percentile(rows[WAY_SECCOMP], 50);
    bench_series_note(rows[WAY_SECCOMP], "median %+.2f ms over unjailed: QEMU's seccomp filter",
                      seccomp - plain);
    bench_series_note(rows[WAY_JAILED], "median %+.2f ms over unjailed with -sandbox: the jail "
                                        "itself (jail_open, namespaces, mounts, cgroup, uid, "
                                        "preload)",
                      bench_series_percentile(rows[WAY_JAILED], 50) - seccomp);
    return 0;
}
