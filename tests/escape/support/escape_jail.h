/* vmhost's jail (vmhost/jail.h) around programs of a test's choice, for
 * the escape suite and the bench's jail rows: a jailer with the caller's
 * uid range, one directory for the jail's /vm, and a run that ends a
 * program which does not finish in time, saying where it waited.
 * Everything lives under one temporary directory, removed at close. */
#ifndef AIRLOCK_ESCAPE_JAIL_H
#define AIRLOCK_ESCAPE_JAIL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "jail.h"

struct escape_jail_env {
    char tmp[64];
    char dir[PATH_MAX];     /* the jail's /vm */
    char log[PATH_MAX];     /* what a jail that failed before exec wrote */
    char preload[PATH_MAX];
    int log_fd;
    struct jailer *jailer;
};

/* uid_base .. uid_base+uid_count-1: a range no other test uses, or
 * vmhost's with lock_dir vmhost's claim directory (the bench: its claims
 * then are seen by every vmhost); lock_dir NULL: one of e's own. */
int escape_jail_env_open(struct escape_jail_env *e, uid_t uid_base, unsigned uid_count,
                         const char *lock_dir);
/* keep: leave the directory and say where (a jail failed: its log is there). */
void escape_jail_env_close(struct escape_jail_env *e, bool keep);

/* A spec for program (under /usr) with e's directory as /vm, in a new
 * empty network namespace. */
struct jail_spec escape_jail_spec(const struct escape_jail_env *e, const char *program);

/* The outcome of one jailed run. */
struct escape_run {
    int exit_code;        /* -1: killed by a signal or ended by us */
    int signal;
    bool timed_out;       /* we killed it after timeout_ms */
    char wchan[64];       /* where it waited when it timed out */
    char comm[32];        /* its name then: "airlock-..." if it never reached exec */
    char limit[256];      /* the jail's limit that ended it (jail_limit_reason), or "" */
};

/* jail_open, jail_spawn of argv (stdout and stderr into out_fd, or the
 * log when -1), wait up to timeout_ms, jail_close. -1 with a message when
 * the jail could not be opened or spawned. */
int escape_jail_run(struct escape_jail_env *e, const struct jail_spec *spec, char *const argv[],
                    int out_fd, int timeout_ms, struct escape_run *run, char *err, size_t errlen);

#endif
