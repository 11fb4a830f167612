#include "sandbox_state.h"

#include <stdio.h>
#include <string.h>

static const char *const state_names[SANDBOX_STATE_COUNT] = {
    [SANDBOX_CREATING] = "creating",     [SANDBOX_RUNNING] = "running",
    [SANDBOX_PAUSED] = "paused",         [SANDBOX_SUSPENDING] = "suspending",
    [SANDBOX_SUSPENDED] = "suspended",   [SANDBOX_RESUMING] = "resuming",
    [SANDBOX_DELETING] = "deleting",     [SANDBOX_DELETED] = "deleted",
    [SANDBOX_ERROR] = "error",           [SANDBOX_LOST] = "lost",
    [SANDBOX_MIGRATING] = "migrating",
};

static const char *const op_names[SANDBOX_OP_COUNT] = {
    [SANDBOX_OP_PAUSE] = "pause",
    [SANDBOX_OP_RESUME] = "resume",
    [SANDBOX_OP_SUSPEND] = "suspend",
    [SANDBOX_OP_DELETE] = "delete",
    [SANDBOX_OP_CHECKPOINT] = "checkpoint",
    [SANDBOX_OP_RESTORE] = "restore",
    [SANDBOX_OP_FORK] = "fork",
    [SANDBOX_OP_SET_NETWORK] = "set_network",
};

#define C SANDBOX_CREATING
#define R SANDBOX_RUNNING
#define P SANDBOX_PAUSED
#define SG SANDBOX_SUSPENDING
#define SD SANDBOX_SUSPENDED
#define RS SANDBOX_RESUMING
#define DG SANDBOX_DELETING
#define DD SANDBOX_DELETED
#define E SANDBOX_ERROR
#define L SANDBOX_LOST
#define M SANDBOX_MIGRATING

/* allowed[from][to]. Besides the design's edges: an interrupted suspend
 * returns to where it came from (suspending → running|paused) and a failed
 * resume leaves the snapshot in place (resuming → suspended), so a node
 * that refuses an operation does not strand a sandbox. A running or paused
 * sandbox whose node went silent is lost; from there a restore elsewhere
 * goes through resuming (and back to lost when it fails), and the node's
 * return with the VM makes it running or paused again. A drain's live
 * migration passes migrating. */
static const bool allowed[SANDBOX_STATE_COUNT][SANDBOX_STATE_COUNT] = {
    [C] = { [R] = true, [DG] = true, [E] = true },
    [R] = { [P] = true, [SG] = true, [DG] = true, [E] = true, [L] = true, [M] = true },
    [P] = { [R] = true, [SG] = true, [DG] = true, [E] = true, [L] = true },
    [SG] = { [SD] = true, [R] = true, [P] = true, [DG] = true, [E] = true },
    [SD] = { [RS] = true, [DG] = true, [E] = true },
    [RS] = { [R] = true, [SD] = true, [DG] = true, [E] = true, [L] = true },
    [DG] = { [DD] = true, [E] = true },
    [DD] = { 0 },
    [E] = { [DG] = true },
    [L] = { [RS] = true, [R] = true, [P] = true, [DG] = true, [E] = true },
    /* Back to running where it is or on the node it moved to
     * (scheduler/node_migrate.c). */
    [M] = { [R] = true, [E] = true },
};

const char *sandbox_state_name(enum sandbox_state s)
{
    return (unsigned)s < SANDBOX_STATE_COUNT ? state_names[s] : NULL;
}

int sandbox_state_parse(const char *name, enum sandbox_state *out)
{
    for (int s = 0; s < SANDBOX_STATE_COUNT; s++) {
        if (strcmp(name, state_names[s]) == 0) {
            *out = (enum sandbox_state)s;
            return 0;
        }
    }
    return -1;
}

const char *sandbox_op_name(enum sandbox_op op)
{
    return (unsigned)op < SANDBOX_OP_COUNT ? op_names[op] : "unknown";
}

bool sandbox_transition_allowed(enum sandbox_state from, enum sandbox_state to)
{
    if ((unsigned)from >= SANDBOX_STATE_COUNT || (unsigned)to >= SANDBOX_STATE_COUNT)
        return false;
    return allowed[from][to];
}

bool sandbox_transition_admitted(enum sandbox_state from, enum sandbox_state to)
{
    return (from == SD || from == L) && to == RS;
}

/* The state an operation moves a sandbox in `from` to first, or -1. */
static int op_first_state(enum sandbox_op op, enum sandbox_state from)
{
    switch (op) {
    case SANDBOX_OP_PAUSE: return from == R ? P : -1;
    case SANDBOX_OP_RESUME:
        if (from == P)
            return R;
        return from == SD ? RS : -1;
    case SANDBOX_OP_SUSPEND: return from == R || from == P ? SG : -1;
    case SANDBOX_OP_DELETE:
        if (from == DG)
            return DG; /* retry of a delete that did not finish */
        return sandbox_transition_allowed(from, DG) ? DG : -1;
    case SANDBOX_OP_CHECKPOINT:
    case SANDBOX_OP_FORK: return from == R ? R : -1;
    case SANDBOX_OP_RESTORE:
        if (from == L)
            return RS; /* on another node, from the store */
        return from == R || from == P ? R : -1;
    case SANDBOX_OP_SET_NETWORK: return from == R || from == P ? (int)from : -1;
    case SANDBOX_OP_COUNT: break;
    }
    return -1;
}

static enum sandbox_state op_done_state(enum sandbox_op op, enum sandbox_state first)
{
    switch (op) {
    case SANDBOX_OP_SUSPEND: return SD;
    case SANDBOX_OP_DELETE: return DD;
    case SANDBOX_OP_RESUME:
    case SANDBOX_OP_RESTORE: return R;
    default: return first;
    }
}

int sandbox_op_plan(enum sandbox_op op, enum sandbox_state from, const char *sandbox_id,
                    struct sandbox_plan *plan, char *msg, size_t msglen)
{
    int first = op_first_state(op, from);
    if (first >= 0) {
        plan->first = (enum sandbox_state)first;
        plan->done = op_done_state(op, plan->first);
        plan->record_first = first != (int)from;
        return 0;
    }
    /* Name every state the operation would accept, from the same rule. */
    char need[256] = "";
    size_t n_need = 0;
    for (int s = 0; s < SANDBOX_STATE_COUNT; s++) {
        if (op_first_state(op, (enum sandbox_state)s) < 0)
            continue;
        size_t used = strlen(need);
        snprintf(need + used, sizeof(need) - used, "%s%s", n_need ? " or " : "", state_names[s]);
        n_need++;
    }
    snprintf(msg, msglen, "sandbox %s is %s; %s needs %s", sandbox_id,
             sandbox_state_name(from) ? sandbox_state_name(from) : "in an unknown state",
             sandbox_op_name(op), n_need ? need : "a state it is never in");
    return -1;
}
