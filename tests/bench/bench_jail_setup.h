/* The jail measured around single programs, for section "jail":
 * /usr/bin/true (bench_jail_setup.c: the jail's own steps) and QEMU to its
 * QMP answer (bench_jail_qemu.c: the jail as QEMU feels it, seccomp apart). */
#ifndef AIRLOCK_BENCH_JAIL_SETUP_H
#define AIRLOCK_BENCH_JAIL_SETUP_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "bench.h"
#include "escape_jail.h"
#include "jail.h"

/* vmhost's uid range and claim directory: the bench's claims are seen by
 * every vmhost on the machine (vmhost/main.c's defaults). */
int bench_jail_env_open(struct escape_jail_env *e);

/* What vmhost's jail needs for program (under /usr) in e's directory:
 * one vCPU, joining the bench's own network namespace. */
struct jail_spec bench_jail_spec(const struct escape_jail_env *e, const char *program);

/* fork + exec in cwd (NULL: here), as vm.c starts an unjailed QEMU; the
 * pid or -1. */
pid_t bench_jail_fork_exec(char *const argv[], char *const envp[], const char *cwd);
/* Waits for pid; 0 when it exited with status 0. */
int bench_jail_reap(pid_t pid);

/* runs x (jail_open, spawn → exit, jail_close of /usr/bin/true, and the
 * same program unjailed with and without the preload) as rows of r. */
int bench_jail_setup(struct bench_report *r, struct escape_jail_env *e, int runs);
/* runs x QEMU -M none start → QMP answers: unjailed, unjailed with the
 * jail's -sandbox, jailed. */
int bench_jail_qemu(struct bench_report *r, struct escape_jail_env *e, int runs);

#endif
