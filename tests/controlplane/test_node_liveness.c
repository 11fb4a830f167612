/* The scheduler's memory of node heartbeats (scheduler/node_liveness.c),
 * on an injected clock: when a request waiting on a node gives up on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "node_liveness.h"

static void test_silent_node_is_lost(void **state)
{
    (void)state;
    struct node_liveness l;
    node_liveness_init(&l);
    char why[128] = "";
    node_liveness_heard(&l, "node-a", 1000, 50000);
    struct node_seen seen = node_liveness_seen(&l, "node-a");
    assert_true(seen.known);
    /* Late heartbeats are not a dead node... */
    assert_false(node_liveness_lost(&l, "node-a", &seen, 50000 + NODE_SILENT_AFTER_MS - 1, why,
                                    sizeof(why)));
    /* ...a heartbeat keeps it alive... */
    node_liveness_heard(&l, "node-a", 1000, 54000);
    assert_false(node_liveness_lost(&l, "node-a", &seen, 54000 + NODE_SILENT_AFTER_MS - 1, why,
                                    sizeof(why)));
    /* ...and three missed ones are. */
    assert_true(node_liveness_lost(&l, "node-a", &seen, 54000 + NODE_SILENT_AFTER_MS, why,
                                   sizeof(why)));
    assert_non_null(strstr(why, "heartbeat stopped 6 s ago"));
    node_liveness_free(&l);
}

static void test_restarted_node_is_lost(void **state)
{
    (void)state;
    struct node_liveness l;
    node_liveness_init(&l);
    char why[128] = "";
    node_liveness_heard(&l, "node-a", 1000, 50000);
    node_liveness_heard(&l, "node-b", 2000, 50000);
    struct node_seen seen = node_liveness_seen(&l, "node-a");
    /* Another node's restart is not this one's. */
    node_liveness_heard(&l, "node-b", 3000, 51000);
    assert_false(node_liveness_lost(&l, "node-a", &seen, 51000, why, sizeof(why)));
    /* A new vmhost process never got the request. */
    node_liveness_heard(&l, "node-a", 4000, 52000);
    assert_true(node_liveness_lost(&l, "node-a", &seen, 52000, why, sizeof(why)));
    assert_non_null(strstr(why, "restarted"));
    node_liveness_free(&l);
}

static void test_unheard_node_is_not_judged(void **state)
{
    (void)state;
    struct node_liveness l;
    node_liveness_init(&l);
    char why[128] = "";
    /* A scheduler that just started and has not heard the node yet waits
     * for the answer as before. */
    struct node_seen seen = node_liveness_seen(&l, "node-a");
    assert_false(seen.known);
    node_liveness_heard(&l, "node-a", 1000, 50000);
    assert_false(node_liveness_lost(&l, "node-a", &seen, 50000 + 10 * NODE_SILENT_AFTER_MS, why,
                                    sizeof(why)));
    /* Many nodes: each is found again. */
    char id[32];
    for (int i = 0; i < 100; i++) {
        snprintf(id, sizeof(id), "node-%d", i);
        node_liveness_heard(&l, id, i, 60000);
    }
    struct node_seen n42 = node_liveness_seen(&l, "node-42");
    assert_true(n42.known);
    assert_int_equal(n42.started_unix_ms, 42);
    node_liveness_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silent_node_is_lost),
        cmocka_unit_test(test_restarted_node_is_lost),
        cmocka_unit_test(test_unheard_node_is_not_judged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
