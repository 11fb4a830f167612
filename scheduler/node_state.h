/* A node's drain state (scheduler/README.md "Node states"), in one place:
 * the admin drains an active node (no new work there) and undrains it
 * (active again); drain_step (node_drain.h) turns a draining node that
 * no sandbox holds drained, and a drained one that a sandbox holds again
 * draining. A drain of a draining or drained node, an undrain of an active
 * one, change nothing.
 *
 * Pure functions over a table, unit-tested without a database
 * (tests/controlplane/test_node_state.c). The drain state is apart from
 * being live (a heartbeat within --node-dead-after): only a live active
 * node is given new work (NODES_TAKING_WORK, nodes.h). */
#ifndef AIRLOCK_SCHEDULER_NODE_STATE_H
#define AIRLOCK_SCHEDULER_NODE_STATE_H

#include <stdbool.h>

#include "sandbox_state.h"

enum node_drain {
    NODE_ACTIVE,
    NODE_DRAINING,
    NODE_DRAINED,
    NODE_DRAIN_COUNT,
};

enum node_drain_op {
    NODE_OP_DRAIN,     /* the admin's: no new work there */
    NODE_OP_UNDRAIN,   /* the admin's: new work again */
    NODE_OP_STEP,      /* drain_step's (node_drain.h): after what it moved off */
    NODE_DRAIN_OP_COUNT,
};

/* "active", ...; NULL out of range. */
const char *node_drain_name(enum node_drain d);
/* 0, or -1 when name is no drain state. */
int node_drain_parse(const char *name, enum node_drain *out);
const char *node_drain_op_name(enum node_drain_op op);

/* Whether a sandbox in state s holds its node: its VM or its suspended
 * snapshot is there, or is being made or moved there. A draining node
 * that holds none is drained. */
bool node_held_by(enum sandbox_state s);

/* The state op moves a node in `from` to; holds: whether the node holds a
 * sandbox (node_held_by), which only a step asks. The same state: nothing
 * to change (the op is answered as the node is). */
enum node_drain node_drain_next(enum node_drain_op op, enum node_drain from, bool holds);

#endif
