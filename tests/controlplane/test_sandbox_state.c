/* The sandbox state machine, exhaustively: every (from, to) pair against
 * an independent copy of the design's edge list, and every (operation,
 * state) pair against the expected plan or refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sandbox_state.h"

/* The edges written out as text, so the test does not share the table
 * it checks. */
static const char *const expected_edges[] = {
    "creating>running",   "creating>deleting",   "creating>error",
    "running>paused",     "running>suspending",  "running>deleting",   "running>error",
    "paused>running",     "paused>suspending",   "paused>deleting",    "paused>error",
    "suspending>suspended", "suspending>running", "suspending>paused",
    "suspending>deleting", "suspending>error",
    "suspended>resuming", "suspended>deleting",  "suspended>error",
    "resuming>running",   "resuming>suspended",  "resuming>deleting",  "resuming>error",
    "deleting>deleted",   "deleting>error",
    "error>deleting",
    "running>lost",       "paused>lost",         "resuming>lost",
    "lost>resuming",      "lost>running",        "lost>paused",        "lost>deleting",
    "lost>error",
    "running>migrating",  "migrating>running",   "migrating>error",
};

static bool edge_expected(const char *from, const char *to)
{
    char want[64];
    snprintf(want, sizeof(want), "%s>%s", from, to);
    for (size_t i = 0; i < sizeof(expected_edges) / sizeof(*expected_edges); i++)
        if (strcmp(expected_edges[i], want) == 0)
            return true;
    return false;
}

static void test_every_pair(void **state)
{
    (void)state;
    int edges = 0;
    for (int f = 0; f < SANDBOX_STATE_COUNT; f++) {
        for (int t = 0; t < SANDBOX_STATE_COUNT; t++) {
            const char *from = sandbox_state_name(f), *to = sandbox_state_name(t);
            bool want = edge_expected(from, to);
            if (sandbox_transition_allowed(f, t) != want)
                fail_msg("%s → %s: allowed=%d, expected %d", from, to,
                         sandbox_transition_allowed(f, t), want);
            edges += want;
        }
    }
    assert_int_equal(edges, (int)(sizeof(expected_edges) / sizeof(*expected_edges)));
    assert_false(sandbox_transition_allowed(SANDBOX_STATE_COUNT, SANDBOX_RUNNING));
    assert_false(sandbox_transition_allowed(SANDBOX_RUNNING, (enum sandbox_state)-1));
}

static void test_names_round_trip(void **state)
{
    (void)state;
    for (int s = 0; s < SANDBOX_STATE_COUNT; s++) {
        enum sandbox_state back;
        assert_int_equal(sandbox_state_parse(sandbox_state_name(s), &back), 0);
        assert_int_equal(back, s);
    }
    enum sandbox_state x;
    assert_int_equal(sandbox_state_parse("runnin", &x), -1);
    assert_null(sandbox_state_name(SANDBOX_STATE_COUNT));
}

/* op, from → first, done, record_first; or refused. */
struct plan_case {
    enum sandbox_op op;
    enum sandbox_state from;
    bool ok;
    enum sandbox_state first, done;
    bool record_first;
};

static const struct plan_case plans[] = {
    { SANDBOX_OP_PAUSE, SANDBOX_RUNNING, true, SANDBOX_PAUSED, SANDBOX_PAUSED, true },
    { SANDBOX_OP_RESUME, SANDBOX_PAUSED, true, SANDBOX_RUNNING, SANDBOX_RUNNING, true },
    { SANDBOX_OP_RESUME, SANDBOX_SUSPENDED, true, SANDBOX_RESUMING, SANDBOX_RUNNING, true },
    { SANDBOX_OP_SUSPEND, SANDBOX_RUNNING, true, SANDBOX_SUSPENDING, SANDBOX_SUSPENDED, true },
    { SANDBOX_OP_SUSPEND, SANDBOX_PAUSED, true, SANDBOX_SUSPENDING, SANDBOX_SUSPENDED, true },
    { SANDBOX_OP_DELETE, SANDBOX_CREATING, true, SANDBOX_DELETING, SANDBOX_DELETED, true },
    { SANDBOX_OP_DELETE, SANDBOX_RUNNING, true, SANDBOX_DELETING, SANDBOX_DELETED, true },
    { SANDBOX_OP_DELETE, SANDBOX_PAUSED, true, SANDBOX_DELETING, SANDBOX_DELETED, true },
    { SANDBOX_OP_DELETE, SANDBOX_SUSPENDING, true, SANDBOX_DELETING, SANDBOX_DELETED, true },
    { SANDBOX_OP_DELETE, SANDBOX_SUSPENDED, true, SANDBOX_DELETING, SANDBOX_DELETED, true },
    { SANDBOX_OP_DELETE, SANDBOX_RESUMING, true, SANDBOX_DELETING, SANDBOX_DELETED, true },
    { SANDBOX_OP_DELETE, SANDBOX_DELETING, true, SANDBOX_DELETING, SANDBOX_DELETED, false },
    { SANDBOX_OP_DELETE, SANDBOX_ERROR, true, SANDBOX_DELETING, SANDBOX_DELETED, true },
    { SANDBOX_OP_DELETE, SANDBOX_LOST, true, SANDBOX_DELETING, SANDBOX_DELETED, true },
    { SANDBOX_OP_CHECKPOINT, SANDBOX_RUNNING, true, SANDBOX_RUNNING, SANDBOX_RUNNING, false },
    { SANDBOX_OP_FORK, SANDBOX_RUNNING, true, SANDBOX_RUNNING, SANDBOX_RUNNING, false },
    { SANDBOX_OP_RESTORE, SANDBOX_RUNNING, true, SANDBOX_RUNNING, SANDBOX_RUNNING, false },
    { SANDBOX_OP_RESTORE, SANDBOX_PAUSED, true, SANDBOX_RUNNING, SANDBOX_RUNNING, true },
    /* A lost node's sandbox comes back elsewhere, from the store. */
    { SANDBOX_OP_RESTORE, SANDBOX_LOST, true, SANDBOX_RESUMING, SANDBOX_RUNNING, true },
    { SANDBOX_OP_SET_NETWORK, SANDBOX_RUNNING, true, SANDBOX_RUNNING, SANDBOX_RUNNING, false },
    { SANDBOX_OP_SET_NETWORK, SANDBOX_PAUSED, true, SANDBOX_PAUSED, SANDBOX_PAUSED, false },
};

static const struct plan_case *find_plan(enum sandbox_op op, enum sandbox_state from)
{
    for (size_t i = 0; i < sizeof(plans) / sizeof(*plans); i++)
        if (plans[i].op == op && plans[i].from == from)
            return &plans[i];
    return NULL;
}

static void test_every_op_in_every_state(void **state)
{
    (void)state;
    for (int op = 0; op < SANDBOX_OP_COUNT; op++) {
        for (int from = 0; from < SANDBOX_STATE_COUNT; from++) {
            const struct plan_case *want = find_plan(op, from);
            struct sandbox_plan got;
            char msg[512] = "";
            int rc = sandbox_op_plan(op, from, "sb_t", &got, msg, sizeof(msg));
            if (!want) {
                if (rc != -1)
                    fail_msg("%s from %s: expected a refusal", sandbox_op_name(op),
                             sandbox_state_name(from));
                /* 409 must name the current state and the operation. */
                char is[64];
                snprintf(is, sizeof(is), "sandbox sb_t is %s;", sandbox_state_name(from));
                assert_non_null(strstr(msg, is));
                assert_non_null(strstr(msg, sandbox_op_name(op)));
                continue;
            }
            if (rc != 0)
                fail_msg("%s from %s refused: %s", sandbox_op_name(op), sandbox_state_name(from), msg);
            assert_int_equal(got.first, want->first);
            assert_int_equal(got.done, want->done);
            assert_int_equal(got.record_first, want->record_first);
            /* Every step a plan takes is an edge of the machine. */
            if (got.record_first)
                assert_true(sandbox_transition_allowed(from, got.first));
            if (got.first != got.done)
                assert_true(sandbox_transition_allowed(got.first, got.done));
        }
    }
}

static void test_refusal_message(void **state)
{
    (void)state;
    struct sandbox_plan p;
    char msg[512];
    assert_int_equal(sandbox_op_plan(SANDBOX_OP_RESUME, SANDBOX_RUNNING, "sb_1", &p, msg, sizeof(msg)), -1);
    assert_string_equal(msg, "sandbox sb_1 is running; resume needs paused or suspended");
    assert_int_equal(sandbox_op_plan(SANDBOX_OP_DELETE, SANDBOX_DELETED, "sb_1", &p, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "is deleted; delete needs creating or running"));
}

/* Only a resume from suspended or a restore of a lost sandbox asks the
 * quotas (neither counts): every other edge into a state that counts is
 * no one's request or counted already. */
static void test_quota_admitted_edges(void **state)
{
    (void)state;
    for (int from = 0; from < SANDBOX_STATE_COUNT; from++)
        for (int to = 0; to < SANDBOX_STATE_COUNT; to++)
            assert_int_equal(sandbox_transition_admitted(from, to),
                             (from == SANDBOX_SUSPENDED || from == SANDBOX_LOST) &&
                                 to == SANDBOX_RESUMING);
}

static void test_restore_refusal_names_lost(void **state)
{
    (void)state;
    struct sandbox_plan p;
    char msg[512];
    assert_int_equal(sandbox_op_plan(SANDBOX_OP_RESTORE, SANDBOX_SUSPENDED, "sb_1", &p, msg,
                                     sizeof(msg)),
                     -1);
    assert_string_equal(msg, "sandbox sb_1 is suspended; restore needs running or paused or lost");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_pair),
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_every_op_in_every_state),
        cmocka_unit_test(test_refusal_message),
        cmocka_unit_test(test_quota_admitted_edges),
        cmocka_unit_test(test_restore_refusal_names_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
