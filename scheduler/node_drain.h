/* Draining a node (node_state.h): drain_step, which the controller leader
 * runs on every draining or drained node each pass
 * (controller_drain_pass), and DrainNode right after it drains one. */
#ifndef AIRLOCK_SCHEDULER_NODE_DRAIN_H
#define AIRLOCK_SCHEDULER_NODE_DRAIN_H

#include "airlock_error.h"
#include "scheduler.h"

/* One step of draining node_id: moves what it can of its sandboxes off it
 * (paused and suspended ones through the shared snapshot store; running
 * ones need live migration, not yet: see node_drain.c), then marks it
 * drained when no sandbox holds it any more (node_held_by), or draining
 * again when one does. An active node is left alone. 0, or -1 with e. */
int drain_step(struct scheduler *s, const char *node_id, struct airlock_error *e);

#endif
