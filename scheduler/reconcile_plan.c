#include "reconcile_plan.h"

static struct reconcile_step keep(void)
{
    return (struct reconcile_step){ RECONCILE_KEEP, SANDBOX_ERROR, "" };
}

static struct reconcile_step move(enum sandbox_state to, const char *why)
{
    return (struct reconcile_step){ RECONCILE_MOVE, to, why };
}

/* A sandbox in error whose VM the node still runs (a create that timed out
 * at the scheduler and finished on the node later, a node back after a
 * partition): the failed sandbox holds no VM, so it is deleted there; the
 * row stays error until its owner deletes it. A VM the node itself reports
 * failed is left with its files (console log) for that delete. */
static struct reconcile_step plan_error(const struct reconcile_node_view *node)
{
    if (node->present && !node->busy &&
        (node->state == SANDBOX_RUNNING || node->state == SANDBOX_PAUSED))
        return (struct reconcile_step){ RECONCILE_DELETE_ON_NODE, SANDBOX_ERROR,
                                        "a failed sandbox's VM still ran on the node: deleted" };
    return keep();
}

/* A lost sandbox (its node went silent) whose node answers again: if it
 * still runs the VM, the sandbox is what the node shows (nothing was lost
 * after all); else it stays lost, for a restore from its checkpoint. A
 * lost sandbox restored elsewhere is no longer this node's row: the
 * node's copy is an unknown VM, deleted (controller_reconcile.c). */
static struct reconcile_step plan_lost(const struct reconcile_node_view *node)
{
    if (node->present && !node->busy &&
        (node->state == SANDBOX_RUNNING || node->state == SANDBOX_PAUSED))
        return move(node->state, "the lost node is back and still holds the sandbox's VM");
    return keep();
}

/* A settled sandbox: only a VM that is gone or broken changes it. */
static struct reconcile_step plan_settled(enum sandbox_state db_state,
                                          const struct reconcile_node_view *node)
{
    if (db_state == SANDBOX_ERROR)
        return plan_error(node);
    if (db_state != SANDBOX_RUNNING && db_state != SANDBOX_PAUSED && db_state != SANDBOX_SUSPENDED)
        return keep();
    if (!node->present)
        return move(SANDBOX_ERROR, "lost: the node no longer has this sandbox");
    if (!node->busy && node->state == SANDBOX_ERROR)
        return move(SANDBOX_ERROR, "the node reports the sandbox failed");
    return keep();
}

/* A stuck transitional sandbox: finish it the way the node shows. */
static struct reconcile_step plan_stuck(enum sandbox_state db_state,
                                        const struct reconcile_node_view *node)
{
    if (db_state == SANDBOX_DELETING) {
        if (!node->present)
            return move(SANDBOX_DELETED, "an unfinished delete: the node no longer has it");
        return (struct reconcile_step){ RECONCILE_DELETE_ON_NODE, SANDBOX_DELETED,
                                        "an unfinished delete, finished" };
    }
    if (!node->present)
        return move(SANDBOX_ERROR, "lost: the node does not have this sandbox");
    if (node->busy)
        return keep();
    if (node->state == SANDBOX_ERROR)
        return move(SANDBOX_ERROR, "the node reports the sandbox failed");
    /* A create cut off half way (vmhost killed while it handed out a
     * paused warm-pool VM) leaves a VM no caller ever got, and creating
     * may only become running: it fails like a create that timed out,
     * without its VM. */
    if (db_state == SANDBOX_CREATING &&
        (node->state == SANDBOX_PAUSED || node->state == SANDBOX_SUSPENDED))
        return (struct reconcile_step){ RECONCILE_DELETE_ON_NODE, SANDBOX_ERROR,
                                        "an unfinished create: the node held the VM but not "
                                        "running; deleted there" };
    /* What the node shows, if the state machine allows it from here. */
    enum sandbox_state to = node->state;
    if (to != db_state && sandbox_transition_allowed(db_state, to) &&
        (to == SANDBOX_RUNNING || to == SANDBOX_PAUSED || to == SANDBOX_SUSPENDED))
        return move(to, "an unfinished operation: the node shows the sandbox like this");
    return keep();
}

bool reconcile_stuck(enum sandbox_state db_state, bool past_node_timeout, bool past_settled,
                     const struct reconcile_node_view *node)
{
    if (past_node_timeout)
        return true;
    if (!past_settled)
        return false;
    if (!node->present)
        return db_state != SANDBOX_CREATING;
    return !node->busy && (node->state == SANDBOX_RUNNING || node->state == SANDBOX_PAUSED ||
                           node->state == SANDBOX_SUSPENDED || node->state == SANDBOX_ERROR);
}

struct reconcile_step reconcile_plan(enum sandbox_state db_state, bool stuck,
                                     const struct reconcile_node_view *node)
{
    switch (db_state) {
    case SANDBOX_CREATING:
    case SANDBOX_SUSPENDING:
    case SANDBOX_RESUMING:
    case SANDBOX_DELETING:
    case SANDBOX_MIGRATING:
        return stuck ? plan_stuck(db_state, node) : keep();
    case SANDBOX_DELETED:
        return keep();
    case SANDBOX_LOST:
        return plan_lost(node);
    default:
        return plan_settled(db_state, node);
    }
}
