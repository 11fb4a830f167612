/* Live migration of a running sandbox off a draining node to another
 * node (docs/snapshot-store.md "Live migration"), driving vmhost's steps
 * (vmhost/sandbox_migrate.h) on both. */
#ifndef AIRLOCK_SCHEDULER_NODE_MIGRATE_H
#define AIRLOCK_SCHEDULER_NODE_MIGRATE_H

#include "scheduler.h"

/* Sandbox id, running on node_id, moves to another node that takes work
 * and has room, keeping its processes, memory and files; the row passes
 * migrating and ends running on the new node. On any failure the guest
 * runs on where it was (the row back to running) and the target's copy
 * goes; the reason is logged, and it is not tried again for a minute.
 * 0 when it moved. */
int node_migrate_running(struct scheduler *s, const char *node_id, const char *id);

#endif
