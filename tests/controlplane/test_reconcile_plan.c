/* Reconciliation's decisions (scheduler/reconcile_plan.c): the cases the
 * design names, written out, and for every (database state, stuck, node
 * view) combination the invariants: a move is an edge of the state
 * machine, nothing in a transitional state that is not stuck nor a deleted
 * sandbox is ever touched, and an error sandbox only loses a VM the node
 * still runs (its row stays error). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "reconcile_plan.h"

static const struct reconcile_node_view ABSENT = { false, false, SANDBOX_ERROR };
static const struct reconcile_node_view BUSY = { true, true, SANDBOX_RUNNING };

static struct reconcile_node_view on_node(enum sandbox_state s)
{
    return (struct reconcile_node_view){ true, false, s };
}

static void expect(enum sandbox_state db, bool stuck, struct reconcile_node_view node,
                   enum reconcile_kind kind, enum sandbox_state to)
{
    struct reconcile_step step = reconcile_plan(db, stuck, &node);
    if (step.kind != kind || (kind != RECONCILE_KEEP && step.to != to))
        fail_msg("db=%s stuck=%d node=%s%s: got kind %d to %s, want kind %d to %s",
                 sandbox_state_name(db), stuck, node.present ? "" : "absent",
                 node.present && !node.busy ? sandbox_state_name(node.state) : "", step.kind,
                 sandbox_state_name(step.to), kind, sandbox_state_name(to));
}

static void test_settled_sandboxes(void **state)
{
    (void)state;
    /* The node lost it (restart, killed VM): error, saying so. */
    expect(SANDBOX_RUNNING, false, ABSENT, RECONCILE_MOVE, SANDBOX_ERROR);
    expect(SANDBOX_PAUSED, false, ABSENT, RECONCILE_MOVE, SANDBOX_ERROR);
    expect(SANDBOX_SUSPENDED, true, ABSENT, RECONCILE_MOVE, SANDBOX_ERROR);
    struct reconcile_step lost = reconcile_plan(SANDBOX_RUNNING, false, &ABSENT);
    assert_non_null(strstr(lost.why, "lost"));
    /* The node's VM failed. */
    expect(SANDBOX_RUNNING, false, on_node(SANDBOX_ERROR), RECONCILE_MOVE, SANDBOX_ERROR);
    /* Present: the database is believed, whatever the node's state. */
    expect(SANDBOX_RUNNING, false, on_node(SANDBOX_RUNNING), RECONCILE_KEEP, 0);
    expect(SANDBOX_RUNNING, true, on_node(SANDBOX_PAUSED), RECONCILE_KEEP, 0);
    expect(SANDBOX_SUSPENDED, false, on_node(SANDBOX_SUSPENDED), RECONCILE_KEEP, 0);
    expect(SANDBOX_RUNNING, false, BUSY, RECONCILE_KEEP, 0);
    /* error stays until the owner deletes it, and holds no running VM. */
    expect(SANDBOX_ERROR, true, ABSENT, RECONCILE_KEEP, 0);
    expect(SANDBOX_ERROR, false, on_node(SANDBOX_RUNNING), RECONCILE_DELETE_ON_NODE,
           SANDBOX_ERROR);
    expect(SANDBOX_ERROR, false, on_node(SANDBOX_PAUSED), RECONCILE_DELETE_ON_NODE,
           SANDBOX_ERROR);
    expect(SANDBOX_ERROR, false, on_node(SANDBOX_ERROR), RECONCILE_KEEP, 0); /* its logs stay */
    expect(SANDBOX_ERROR, false, on_node(SANDBOX_SUSPENDED), RECONCILE_KEEP, 0);
    expect(SANDBOX_ERROR, false, BUSY, RECONCILE_KEEP, 0);
}

/* A lost node that answers again: its VM, if still there, makes the
 * sandbox what the node shows; anything else leaves it lost, for a
 * restore from its checkpoint. */
static void test_lost_sandboxes(void **state)
{
    (void)state;
    expect(SANDBOX_LOST, false, on_node(SANDBOX_RUNNING), RECONCILE_MOVE, SANDBOX_RUNNING);
    expect(SANDBOX_LOST, true, on_node(SANDBOX_PAUSED), RECONCILE_MOVE, SANDBOX_PAUSED);
    expect(SANDBOX_LOST, false, ABSENT, RECONCILE_KEEP, 0);
    expect(SANDBOX_LOST, false, on_node(SANDBOX_ERROR), RECONCILE_KEEP, 0);
    expect(SANDBOX_LOST, false, on_node(SANDBOX_SUSPENDED), RECONCILE_KEEP, 0);
    expect(SANDBOX_LOST, false, BUSY, RECONCILE_KEEP, 0);
}

static void test_stuck_sandboxes(void **state)
{
    (void)state;
    expect(SANDBOX_CREATING, true, on_node(SANDBOX_RUNNING), RECONCILE_MOVE, SANDBOX_RUNNING);
    expect(SANDBOX_CREATING, true, ABSENT, RECONCILE_MOVE, SANDBOX_ERROR);
    expect(SANDBOX_CREATING, true, on_node(SANDBOX_CREATING), RECONCILE_KEEP, 0);
    /* A create cut off by a killed vmhost after its VM existed, not
     * running: no caller got it, so it goes, and the row fails. */
    expect(SANDBOX_CREATING, true, on_node(SANDBOX_PAUSED), RECONCILE_DELETE_ON_NODE,
           SANDBOX_ERROR);
    expect(SANDBOX_CREATING, true, on_node(SANDBOX_SUSPENDED), RECONCILE_DELETE_ON_NODE,
           SANDBOX_ERROR);
    expect(SANDBOX_CREATING, true, BUSY, RECONCILE_KEEP, 0);
    /* Not stuck: the scheduler that asked may still be waiting. */
    expect(SANDBOX_CREATING, false, on_node(SANDBOX_PAUSED), RECONCILE_KEEP, 0);
    expect(SANDBOX_SUSPENDING, false, on_node(SANDBOX_SUSPENDED), RECONCILE_KEEP, 0);
    /* A drain's live migration the scheduler did not finish: its source
     * runs the guest again (an abort), or still holds it mid-step. */
    expect(SANDBOX_MIGRATING, false, BUSY, RECONCILE_KEEP, 0);
    expect(SANDBOX_MIGRATING, true, BUSY, RECONCILE_KEEP, 0);
    expect(SANDBOX_MIGRATING, true, on_node(SANDBOX_RUNNING), RECONCILE_MOVE, SANDBOX_RUNNING);
    expect(SANDBOX_MIGRATING, false, on_node(SANDBOX_RUNNING), RECONCILE_KEEP, 0);
    expect(SANDBOX_MIGRATING, true, ABSENT, RECONCILE_MOVE, SANDBOX_ERROR);
    expect(SANDBOX_DELETING, true, ABSENT, RECONCILE_MOVE, SANDBOX_DELETED);
    expect(SANDBOX_DELETING, true, on_node(SANDBOX_RUNNING), RECONCILE_DELETE_ON_NODE,
           SANDBOX_DELETED);
    expect(SANDBOX_DELETING, true, BUSY, RECONCILE_DELETE_ON_NODE, SANDBOX_DELETED);
    expect(SANDBOX_SUSPENDING, true, on_node(SANDBOX_SUSPENDED), RECONCILE_MOVE, SANDBOX_SUSPENDED);
    expect(SANDBOX_SUSPENDING, true, on_node(SANDBOX_RUNNING), RECONCILE_MOVE, SANDBOX_RUNNING);
    expect(SANDBOX_SUSPENDING, true, on_node(SANDBOX_PAUSED), RECONCILE_MOVE, SANDBOX_PAUSED);
    expect(SANDBOX_SUSPENDING, true, ABSENT, RECONCILE_MOVE, SANDBOX_ERROR);
    expect(SANDBOX_RESUMING, true, on_node(SANDBOX_RUNNING), RECONCILE_MOVE, SANDBOX_RUNNING);
    expect(SANDBOX_RESUMING, true, on_node(SANDBOX_SUSPENDED), RECONCILE_MOVE, SANDBOX_SUSPENDED);
    expect(SANDBOX_RESUMING, true, on_node(SANDBOX_PAUSED), RECONCILE_KEEP, 0);
    expect(SANDBOX_RESUMING, true, on_node(SANDBOX_ERROR), RECONCILE_MOVE, SANDBOX_ERROR);
}

static bool stuck_on(enum sandbox_state db, bool past_node_timeout, bool past_settled,
                     struct reconcile_node_view node)
{
    return reconcile_stuck(db, past_node_timeout, past_settled, &node);
}

static void test_when_stuck(void **state)
{
    (void)state;
    /* Past any node request's time: stuck whatever the node shows. */
    assert_true(stuck_on(SANDBOX_CREATING, true, true, ABSENT));
    assert_true(stuck_on(SANDBOX_SUSPENDING, true, true, BUSY));
    /* The node's part is over (a killed scheduler, a failed commit):
     * stuck after the short wait already. */
    assert_true(stuck_on(SANDBOX_CREATING, false, true, on_node(SANDBOX_RUNNING)));
    assert_true(stuck_on(SANDBOX_SUSPENDING, false, true, on_node(SANDBOX_SUSPENDED)));
    assert_true(stuck_on(SANDBOX_RESUMING, false, true, on_node(SANDBOX_ERROR)));
    assert_true(stuck_on(SANDBOX_DELETING, false, true, ABSENT)); /* deleted there */
    assert_true(stuck_on(SANDBOX_SUSPENDING, false, true, ABSENT)); /* gone */
    /* Still at work on the node, or a create not begun there: wait. */
    assert_false(stuck_on(SANDBOX_SUSPENDING, false, true, on_node(SANDBOX_SUSPENDING)));
    assert_false(stuck_on(SANDBOX_CREATING, false, true, on_node(SANDBOX_CREATING)));
    assert_false(stuck_on(SANDBOX_DELETING, false, true, BUSY));
    assert_false(stuck_on(SANDBOX_CREATING, false, true, ABSENT));
    /* Young: the scheduler may be about to commit. */
    assert_false(stuck_on(SANDBOX_CREATING, false, false, on_node(SANDBOX_RUNNING)));
    assert_false(stuck_on(SANDBOX_DELETING, false, false, ABSENT));
}

static void test_invariants_everywhere(void **state)
{
    (void)state;
    for (int db = 0; db < SANDBOX_STATE_COUNT; db++) {
        for (int stuck = 0; stuck < 2; stuck++) {
            for (int n = -2; n < SANDBOX_STATE_COUNT; n++) {
                struct reconcile_node_view view = n == -2   ? ABSENT
                                                  : n == -1 ? BUSY
                                                            : on_node((enum sandbox_state)n);
                struct reconcile_step step = reconcile_plan(db, stuck, &view);
                bool transitional = db == SANDBOX_CREATING || db == SANDBOX_SUSPENDING ||
                                    db == SANDBOX_RESUMING || db == SANDBOX_DELETING;
                if ((transitional && !stuck) || db == SANDBOX_DELETED)
                    assert_int_equal(step.kind, RECONCILE_KEEP);
                if (db == SANDBOX_ERROR && step.kind != RECONCILE_KEEP) {
                    assert_int_equal(step.kind, RECONCILE_DELETE_ON_NODE);
                    assert_int_equal(step.to, SANDBOX_ERROR);
                    assert_true(view.state == SANDBOX_RUNNING || view.state == SANDBOX_PAUSED);
                } else if (step.kind != RECONCILE_KEEP) {
                    assert_true(sandbox_transition_allowed(db, step.to));
                    assert_true(step.why && *step.why);
                }
                if (step.kind == RECONCILE_DELETE_ON_NODE)
                    assert_true(view.present);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settled_sandboxes),
        cmocka_unit_test(test_lost_sandboxes),
        cmocka_unit_test(test_stuck_sandboxes),
        cmocka_unit_test(test_when_stuck),
        cmocka_unit_test(test_invariants_everywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
