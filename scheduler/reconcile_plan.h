/* What reconciliation does with one sandbox, given what the database says
 * and what its node reports (controller_reconcile.c). Pure, like
 * sandbox_state.c, so every case is unit-tested
 * (tests/controlplane/test_reconcile_plan.c).
 *
 * The database is believed for settled states; the node is believed about
 * whether a VM exists. A sandbox in a transitional state (creating,
 * suspending, resuming, deleting) is only touched once it is stuck — left
 * by a scheduler that stopped in the middle — and is then moved to what the
 * node shows. */
#ifndef AIRLOCK_SCHEDULER_RECONCILE_PLAN_H
#define AIRLOCK_SCHEDULER_RECONCILE_PLAN_H

#include <stdbool.h>

#include "sandbox_state.h"

/* The node's side of one sandbox. */
struct reconcile_node_view {
    bool present;              /* in the node's registry */
    bool busy;                 /* checkpointing or restoring: look again later */
    enum sandbox_state state;  /* when present and not busy */
};

enum reconcile_kind {
    RECONCILE_KEEP,            /* nothing to do */
    RECONCILE_MOVE,            /* commit db state → to */
    RECONCILE_DELETE_ON_NODE,  /* delete the VM on the node, then commit → to (nothing to
                                  commit when to is the row's state: an error row) */
};

struct reconcile_step {
    enum reconcile_kind kind;
    enum sandbox_state to;
    const char *why;           /* for the transition's audit row */
};

/* A transitional row whose node already shows the sandbox settled
 * (running, paused, suspended, error) is stuck after this long: the node's
 * part is over (it shows creating, suspending, ... while it works), and a
 * scheduler that still meant to commit would have done so within
 * milliseconds; so a row a killed scheduler left, or one whose commit
 * failed with PostgreSQL, is finished at the first pass after 30 s. */
#define RECONCILE_SETTLED_AFTER_S 30

/* Whether a row in transitional db_state is stuck (left by a scheduler
 * that stopped, or by a commit that failed): past_node_timeout when it has
 * been in its state longer than any request to a node may take (two node
 * timeouts and 30 s: a create and its retry), past_settled when longer
 * than RECONCILE_SETTLED_AFTER_S, which is enough when the node shows it
 * settled, or does not have it (anything but a create: a delete done, a
 * sandbox gone). A create the node does not have may not have begun
 * there yet (a template to fetch): only past_node_timeout. */
bool reconcile_stuck(enum sandbox_state db_state, bool past_node_timeout, bool past_settled,
                     const struct reconcile_node_view *node);

/* stuck: reconcile_stuck's answer for a transitional row. */
struct reconcile_step reconcile_plan(enum sandbox_state db_state, bool stuck,
                                     const struct reconcile_node_view *node);

#endif
