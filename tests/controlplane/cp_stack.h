/* A whole control plane for tests, every part real: PostgreSQL (initdb in
 * a temp dir, unix socket only), nats-server (random port), airlock-vmhost
 * (tests/integration/support/itest, joined to NATS), airlock-scheduler and
 * airlock-gateway on a free 127.0.0.1 port.
 *
 * cp_stack_stop() stops each part this process started, by pid, in reverse
 * order, and removes the temp dir; it also runs at exit and on
 * SIGINT/SIGTERM, so a failing test leaks no process, VM or directory. */
#ifndef AIRLOCK_CP_STACK_H
#define AIRLOCK_CP_STACK_H

#include <limits.h>
#include <sys/types.h>

#include "itest.h"
#include "pg_test.h"

struct cp_stack {
    char dir[PATH_MAX];           /* everything lives under here */
    struct pg_test pg;
    pid_t nats_pid;
    char nats_url[64];
    struct itest_vmhost vmhost;
    pid_t scheduler_pid;
    char scheduler_addr[PATH_MAX + 8];
    pid_t gateway_pid;
    char gateway_url[64];
    char admin_key[128];
};

/* 0, -1 after printing why, or 77 when PostgreSQL/nats-server are not
 * installed (the test is then skipped). */
int cp_stack_start(struct cp_stack *st);
/* -1 when some part did not stop cleanly (its log tail is printed). */
int cp_stack_stop(struct cp_stack *st);

#endif
