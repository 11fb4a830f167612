/* Draining a node (node_state.h): drain_step, which the controller leader
 * runs on every draining or drained node each pass
 * (controller_drain_pass), and DrainNode right after it drains one. */
#ifndef AIRLOCK_SCHEDULER_NODE_DRAIN_H
#define AIRLOCK_SCHEDULER_NODE_DRAIN_H

#include <stdbool.h>

#include "airlock_error.h"
#include "scheduler.h"

/* One step of draining node_id: with move, moves what it can of its
 * sandboxes off it (running ones live, node_migrate.h; paused and
 * suspended ones through the shared snapshot store), then marks it drained
 * when no sandbox holds it any more (node_held_by), or draining again when
 * one does. DrainNode takes a step without move (its answer says drained
 * at once for an empty node, and never waits on migrations); the
 * controller's moves. An active node is left alone. 0, or -1 with e. */
int drain_step(struct scheduler *s, const char *node_id, bool move, struct airlock_error *e);

#endif
