/* Lets a client test restart parts of the stack it runs against.
 * cp_harness listens on a unix socket (AIRLOCK_TEST_CONTROL in the client's
 * environment); the client connects, writes one command line and reads one
 * answer line: "ok ..." or "error <why>". The processes stay the harness's
 * own, so cp_stack_stop() still stops exactly what was started. Commands:
 *
 *   restart scheduler|gateway   TERM (it must exit 0), start, wait until it answers
 *   restart egress              TERM (it must exit 0), start on the same socket and
 *                               state dir, wait until it listens (vmhost re-attaches)
 *   restart postgres            pg_ctl restart -m fast
 *   restart vmhost              kill -9 (its VMs keep running), start again on
 *                               the same data dir (it re-adopts what it finds)
 *   stop-start vmhost           TERM (it suspends every sandbox and must exit 0),
 *                               start again on the same data dir: a node's
 *                               make down + make up
 *   kill vmhost | start vmhost  the two halves, for a test that changes the
 *                               data dir in between
 *   kill scheduler|standby|gateway|egress|vault|nats
 *                               SIGKILL, nothing started
 *   start scheduler|standby|gateway|egress|vault|nats
 *                               start, wait until it answers (standby: a second
 *                               replica on the same database and NATS; nats: on
 *                               its old port, where the clients reconnect)
 *   kill postgres               pg_ctl stop -m immediate (every server process
 *                               quits at once, no checkpoint: a crash)
 *   start postgres              start it again (crash recovery)
 *   pids                        "ok scheduler=N standby=N gateway=N vmhost=N" (0 = not running)
 *
 * The egress and vmhost commands act on the first node (CP_NODE_ID), or on
 * node I of the stack with a trailing index ("kill vmhost 1"). The pids
 * answer names that node's vmhost.
 */
#ifndef AIRLOCK_CP_CONTROL_H
#define AIRLOCK_CP_CONTROL_H

#include <limits.h>
#include <sys/types.h>

#include "cp_stack.h"

struct cp_control {
    int fd;
    char path[PATH_MAX];
};

/* Listens on st->dir/control.sock. 0 or -1 after printing why. */
int cp_control_open(struct cp_control *c, const struct cp_stack *st);
/* Serves commands until process client exits; its wait status. */
int cp_control_serve(struct cp_control *c, struct cp_stack *st, pid_t client);
void cp_control_close(struct cp_control *c);

#endif
