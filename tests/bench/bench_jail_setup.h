/* The jail measured around single programs, for section "jail":
 * /usr/bin/true (bench_jail_setup.c: the jail's own steps) and QEMU to its
 * QMP answer (bench_jail_qemu.c: the jail as QEMU feels it, seccomp apart). */
#ifndef AIRLOCK_BENCH_JAIL_SETUP_H
#define AIRLOCK_BENCH_JAIL_SETUP_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "bench.h"
#include "jail.h"

/* vmhost's jailer with its default uid range and claim directory (so its
 * claims are seen by every vmhost on the machine), and a directory for
 * one jail at a time: dir (the jail's /vm) and the log a failed jail
 * writes to. */
struct bench_jail_env {
    char tmp[64];
    char dir[PATH_MAX], log[PATH_MAX], preload[PATH_MAX];
    int log_fd;
    struct jailer *jailer;
};

int bench_jail_env_open(struct bench_jail_env *e);
/* keep: leave the directory (a jail failed: its log is there). */
void bench_jail_env_close(struct bench_jail_env *e, bool keep);

/* What vmhost's jail needs for program (under /usr) in e's directory:
 * one vCPU, joining the bench's own network namespace. */
struct jail_spec bench_jail_spec(const struct bench_jail_env *e, const char *program);

/* fork + exec in cwd (NULL: here), as vm.c starts an unjailed QEMU; the
 * pid or -1. */
pid_t bench_jail_fork_exec(char *const argv[], char *const envp[], const char *cwd);
/* Waits for pid; 0 when it exited with status 0. */
int bench_jail_reap(pid_t pid);

/* runs x (jail_open, spawn → exit, jail_close of /usr/bin/true, and the
 * same program unjailed with and without the preload) as rows of r. */
int bench_jail_setup(struct bench_report *r, struct bench_jail_env *e, int runs);
/* runs x QEMU -M none start → QMP answers: unjailed, unjailed with the
 * jail's -sandbox, jailed. */
int bench_jail_qemu(struct bench_report *r, struct bench_jail_env *e, int runs);

#endif
