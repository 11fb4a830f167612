#include "node_state.h"

#include <string.h>

static const char *const drain_names[NODE_DRAIN_COUNT] = {
    [NODE_ACTIVE] = "active",
    [NODE_DRAINING] = "draining",
    [NODE_DRAINED] = "drained",
};

static const char *const op_names[NODE_DRAIN_OP_COUNT] = {
    [NODE_OP_DRAIN] = "drain",
    [NODE_OP_UNDRAIN] = "undrain",
    [NODE_OP_STEP] = "drain_step",
};

/* next[op][from][holds]. */
static const enum node_drain next[NODE_DRAIN_OP_COUNT][NODE_DRAIN_COUNT][2] = {
    [NODE_OP_DRAIN] = {
        [NODE_ACTIVE] = { NODE_DRAINING, NODE_DRAINING },
        [NODE_DRAINING] = { NODE_DRAINING, NODE_DRAINING },
        [NODE_DRAINED] = { NODE_DRAINED, NODE_DRAINED },
    },
    [NODE_OP_UNDRAIN] = {
        [NODE_ACTIVE] = { NODE_ACTIVE, NODE_ACTIVE },
        [NODE_DRAINING] = { NODE_ACTIVE, NODE_ACTIVE },
        [NODE_DRAINED] = { NODE_ACTIVE, NODE_ACTIVE },
    },
    /* A drained node that holds a sandbox again (a create placed just
     * before the drain, seen late) is draining once more. */
    [NODE_OP_STEP] = {
        [NODE_ACTIVE] = { NODE_ACTIVE, NODE_ACTIVE },
        [NODE_DRAINING] = { NODE_DRAINED, NODE_DRAINING },
        [NODE_DRAINED] = { NODE_DRAINED, NODE_DRAINING },
    },
};

const char *node_drain_name(enum node_drain d)
{
    return (unsigned)d < NODE_DRAIN_COUNT ? drain_names[d] : NULL;
}

int node_drain_parse(const char *name, enum node_drain *out)
{
    for (int d = 0; d < NODE_DRAIN_COUNT; d++)
        if (strcmp(drain_names[d], name) == 0) {
            *out = (enum node_drain)d;
            return 0;
        }
    return -1;
}

const char *node_drain_op_name(enum node_drain_op op)
{
    return (unsigned)op < NODE_DRAIN_OP_COUNT ? op_names[op] : NULL;
}

bool node_held_by(enum sandbox_state s)
{
    switch (s) {
    case SANDBOX_CREATING:
    case SANDBOX_RUNNING:
    case SANDBOX_PAUSED:
    case SANDBOX_SUSPENDING:
    case SANDBOX_SUSPENDED:
    case SANDBOX_RESUMING:
    case SANDBOX_MIGRATING:
        return true;
    default:
        /* deleting: on its way out; error: its VM is gone (the reconciler
         * deletes what a node still runs for one); deleted: gone. */
        return false;
    }
}

enum node_drain node_drain_next(enum node_drain_op op, enum node_drain from, bool holds)
{
    if ((unsigned)op >= NODE_DRAIN_OP_COUNT || (unsigned)from >= NODE_DRAIN_COUNT)
        return from;
    return next[op][from][holds ? 1 : 0];
}
