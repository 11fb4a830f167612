/* The sandbox state machine of docs/ARCHITECTURE.md, in one place.
 *
 * Pure functions over a transition table: no I/O, so every pair of states
 * is unit-tested (tests/controlplane/test_sandbox_state.c). The scheduler
 * asks sandbox_op_plan() before it touches a node and commits each step
 * with a row in sandbox_transitions (sandbox_store.c). */
#ifndef AIRLOCK_SANDBOX_STATE_H
#define AIRLOCK_SANDBOX_STATE_H

#include <stdbool.h>
#include <stddef.h>

enum sandbox_state {
    SANDBOX_CREATING,
    SANDBOX_RUNNING,
    SANDBOX_PAUSED,
    SANDBOX_SUSPENDING,
    SANDBOX_SUSPENDED,
    SANDBOX_RESUMING,
    SANDBOX_DELETING,
    SANDBOX_DELETED,
    SANDBOX_ERROR,
    /* Its node went silent past --node-dead-after-s while it ran: its VM
     * may be gone. Restore brings it back from a checkpoint in the shared
     * store on another node (through resuming); the node's return with the
     * VM still there makes it what the node shows again. */
    SANDBOX_LOST,
    SANDBOX_MIGRATING, /* live migration to another node (a drain): no operation meanwhile */
    SANDBOX_STATE_COUNT,
};

/* What a caller asks for; each maps to one or two transitions. */
enum sandbox_op {
    SANDBOX_OP_PAUSE,
    SANDBOX_OP_RESUME,
    SANDBOX_OP_SUSPEND,
    SANDBOX_OP_DELETE,
    SANDBOX_OP_CHECKPOINT, /* running stays running */
    SANDBOX_OP_RESTORE,    /* running or paused → running; lost → resuming → running */
    SANDBOX_OP_FORK,       /* running stays running; the forks are new sandboxes */
    SANDBOX_OP_SET_NETWORK, /* running or paused stays: egress is attached in both */
    SANDBOX_OP_COUNT,
};

/* "running", ...; NULL for a value out of range. */
const char *sandbox_state_name(enum sandbox_state s);
/* 0, or -1 when name is not a state. */
int sandbox_state_parse(const char *name, enum sandbox_state *out);
const char *sandbox_op_name(enum sandbox_op op);

/* Whether from → to is an edge of the state machine. */
bool sandbox_transition_allowed(enum sandbox_state from, enum sandbox_state to);

/* Whether from → to asks the project's quotas (quota_store.h) for the
 * sandbox's vCPUs and memory again: a suspended or lost sandbox resuming,
 * whose VM starts anew (a suspended or lost one counts for none). The other ways into a
 * state that counts are no one's request (the reconciler finding a
 * suspended sandbox lost: error) and are not refused. */
bool sandbox_transition_admitted(enum sandbox_state from, enum sandbox_state to);

/* How an operation proceeds from a state: first the sandbox moves to
 * `first` (committed before the node is asked), and when the node has
 * done its part it moves to `done` (first == done for one-step ops such as
 * pause; first == done == the state it is in for an op that leaves the
 * state as it is, such as checkpoint). record_first is false when the sandbox is already in `first`
 * (a retried delete of a sandbox stuck in deleting). */
struct sandbox_plan {
    enum sandbox_state first;
    enum sandbox_state done;
    bool record_first;
};

/* 0 with *plan filled, or -1 with msg naming the current state and the
 * states the operation needs ("sandbox sb_1 is running; resume needs paused
 * or suspended"). */
int sandbox_op_plan(enum sandbox_op op, enum sandbox_state from, const char *sandbox_id,
                    struct sandbox_plan *plan, char *msg, size_t msglen);

#endif
