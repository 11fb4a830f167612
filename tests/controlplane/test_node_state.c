/* A node's drain state (scheduler/node_state.h), exhaustively: every
 * (operation, state, holds) triple against the design's transitions
 * written out independently, the names, and which sandbox states hold a
 * node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "node_state.h"

/* "op from holds>to" for every triple, as scheduler/README.md "Node
 * states" says, so the test does not share the table it checks. */
static const char *const expected[] = {
    "drain active 0>draining",      "drain active 1>draining",
    "drain draining 0>draining",    "drain draining 1>draining",
    "drain drained 0>drained",      "drain drained 1>drained",
    "undrain active 0>active",      "undrain active 1>active",
    "undrain draining 0>active",    "undrain draining 1>active",
    "undrain drained 0>active",     "undrain drained 1>active",
    "drain_step active 0>active",   "drain_step active 1>active",
    "drain_step draining 0>drained", "drain_step draining 1>draining",
    "drain_step drained 0>drained", "drain_step drained 1>draining",
};

static void test_every_transition(void **state)
{
    (void)state;
    int checked = 0;
    for (int op = 0; op < NODE_DRAIN_OP_COUNT; op++)
        for (int from = 0; from < NODE_DRAIN_COUNT; from++)
            for (int holds = 0; holds <= 1; holds++) {
                char got[80];
                snprintf(got, sizeof(got), "%s %s %d>%s", node_drain_op_name(op),
                         node_drain_name(from), holds,
                         node_drain_name(node_drain_next(op, from, holds)));
                bool found = false;
                for (size_t i = 0; i < sizeof(expected) / sizeof(*expected); i++)
                    found = found || strcmp(expected[i], got) == 0;
                if (!found)
                    fail_msg("unexpected transition: %s", got);
                checked++;
            }
    assert_int_equal(checked, (int)(sizeof(expected) / sizeof(*expected)));
    /* Out of range: left as it is. */
    assert_int_equal(node_drain_next(NODE_DRAIN_OP_COUNT, NODE_DRAINING, false), NODE_DRAINING);
    assert_int_equal(node_drain_next(NODE_OP_DRAIN, NODE_DRAIN_COUNT, false), NODE_DRAIN_COUNT);
}

static void test_names_round_trip(void **state)
{
    (void)state;
    for (int d = 0; d < NODE_DRAIN_COUNT; d++) {
        enum node_drain back;
        assert_int_equal(node_drain_parse(node_drain_name(d), &back), 0);
        assert_int_equal(back, d);
    }
    enum node_drain out;
    assert_int_equal(node_drain_parse("cordoned", &out), -1);
    assert_int_equal(node_drain_parse("", &out), -1);
    assert_null(node_drain_name(NODE_DRAIN_COUNT));
    assert_null(node_drain_op_name(NODE_DRAIN_OP_COUNT));
}

static void test_which_sandboxes_hold_a_node(void **state)
{
    (void)state;
    static const char *const holding[] = { "creating",  "running",  "paused",   "suspending",
                                           "suspended", "resuming", "migrating" };
    for (int s = 0; s < SANDBOX_STATE_COUNT; s++) {
        bool want = false;
        for (size_t i = 0; i < sizeof(holding) / sizeof(*holding); i++)
            want = want || strcmp(holding[i], sandbox_state_name(s)) == 0;
        if (node_held_by(s) != want)
            fail_msg("%s: holds=%d, expected %d", sandbox_state_name(s), node_held_by(s), want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_transition),
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_which_sandboxes_hold_a_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
