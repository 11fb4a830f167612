/* Inside the controllers: leader election and one function per job, each
 * run once per pass by controller.c while this replica leads. Jobs use the
 * scheduler's shared database connection (short statements) and NATS; a
 * job that fails logs and tries again next pass. */
#ifndef AIRLOCK_SCHEDULER_CONTROLLER_JOBS_H
#define AIRLOCK_SCHEDULER_CONTROLLER_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "scheduler.h"

/* Leadership is a session-level PostgreSQL advisory lock held by a
 * connection that does nothing else, so no statement of another thread can
 * reset it behind the lock's back. */
struct controller_leader {
    struct db db;
    bool leader;
    bool checked;   /* once: the first answer is logged either way */
};

int controller_leader_open(struct controller_leader *l, const char *url, char *err,
                           size_t errlen);
/* Whether this replica leads now: keeps the lock if its session still
 * holds it, else tries to take it (also after PostgreSQL restarted, when
 * the session and the lock are gone). Logs every change. */
bool controller_leader_check(struct controller_leader *l);
void controller_leader_close(struct controller_leader *l);

/* Compares every live node flagged for reconciliation (nodes.reconcile,
 * set by a restart or a heartbeat gap, nodes.c) with the database. */
void controller_reconcile_pass(struct scheduler *s);
/* Flags every node: when this replica starts leading, and periodically. */
void controller_reconcile_flag_all(struct scheduler *s);

/* Deletes sandboxes older than their ttl_s. */
void controller_ttl_pass(struct scheduler *s);

/* Deletes or suspends running and paused sandboxes past their deadline
 * (expires_at, on_timeout). */
void controller_deadline_pass(struct scheduler *s);

/* Suspends running or paused sandboxes idle longer than idle_timeout_s. */
void controller_idle_pass(struct scheduler *s);

/* Running and paused sandboxes of nodes silent past --node-dead-after-s
 * become lost (controller_lost.c). */
void controller_lost_pass(struct scheduler *s);

/* A full checkpoint of each running sandbox whose checkpoint_every_s has
 * passed since its newest periodic one; older periodic ones go. */
void controller_checkpoint_pass(struct scheduler *s);

/* drain_step (node_drain.h) on every draining or drained node. */
void controller_drain_pass(struct scheduler *s);

/* Nodes that refused a warm-pool target recently are left alone for a
 * while instead of being asked every pass. */
#define CONTROLLER_POOL_REFUSALS 32
struct controller_pools {
    struct {
        char node[128];
        char template_name[64];
        unsigned target;
        int64_t until_ms;      /* monotonic */
    } refused[CONTROLLER_POOL_REFUSALS];
};
/* Pushes every template's warm-pool target to live nodes reporting another. */
void controller_pool_pass(struct scheduler *s, struct controller_pools *pools);

#endif
