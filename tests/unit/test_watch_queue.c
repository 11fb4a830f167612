/* guestd's watch queue (guest/watch_queue.c): coalescing keeps a path's
 * order, the bound holds, and an overflow marks where events were lost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "watch_queue.h"

#define T(x) AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_##x

static void expect_event(const struct watch_queue *q, size_t i, watch_type type, const char *path)
{
    const struct watch_event *e = watch_queue_at(q, i);
    assert_int_equal(e->type, type);
    assert_string_equal(e->path, path);
}

static void test_writes_coalesce(void **state)
{
    (void)state;
    struct watch_queue q;
    assert_int_equal(watch_queue_init(&q, 16, "/w"), 0);
    assert_int_equal(watch_queue_push(&q, T(CREATE), "/w/a", false, 1), 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(watch_queue_push(&q, T(WRITE), "/w/a", false, 2 + i), 0);
    assert_int_equal(watch_queue_len(&q), 2);
    expect_event(&q, 0, T(CREATE), "/w/a");
    expect_event(&q, 1, T(WRITE), "/w/a");
    assert_int_equal(watch_queue_at(&q, 1)->unix_ms, 101); /* the newest write's time */
    /* Interleaved paths still merge: only each path's newest event counts. */
    assert_int_equal(watch_queue_push(&q, T(WRITE), "/w/b", false, 200), 0);
    assert_int_equal(watch_queue_push(&q, T(WRITE), "/w/a", false, 201), 0);
    assert_int_equal(watch_queue_push(&q, T(CHMOD), "/w/b", false, 202), 0);
    assert_int_equal(watch_queue_push(&q, T(CHMOD), "/w/b", false, 203), 0);
    assert_int_equal(watch_queue_len(&q), 4);
    expect_event(&q, 2, T(WRITE), "/w/b");
    expect_event(&q, 3, T(CHMOD), "/w/b");
    watch_queue_free(&q);
}

static void test_order_of_a_path_kept(void **state)
{
    (void)state;
    struct watch_queue q;
    assert_int_equal(watch_queue_init(&q, 16, "/w"), 0);
    watch_queue_push(&q, T(WRITE), "/w/a", false, 1);
    watch_queue_push(&q, T(RENAME), "/w/a", false, 2);
    watch_queue_push(&q, T(CREATE), "/w/a", false, 3);
    watch_queue_push(&q, T(WRITE), "/w/a", false, 4);
    watch_queue_push(&q, T(REMOVE), "/w/a", false, 5);
    watch_queue_push(&q, T(REMOVE), "/w/a", false, 6); /* removes never merge */
    assert_int_equal(watch_queue_len(&q), 6);
    expect_event(&q, 0, T(WRITE), "/w/a");
    expect_event(&q, 1, T(RENAME), "/w/a");
    expect_event(&q, 3, T(WRITE), "/w/a");
    /* A directory and a file of one name are different things. */
    watch_queue_drop(&q, 6);
    watch_queue_push(&q, T(CREATE), "/w/d", true, 7);
    watch_queue_push(&q, T(CREATE), "/w/d", false, 8);
    assert_int_equal(watch_queue_len(&q), 2);
    watch_queue_free(&q);
}

static void test_bound_and_overflow(void **state)
{
    (void)state;
    struct watch_queue q;
    assert_int_equal(watch_queue_init(&q, 8, "/w"), 0);
    char path[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(path, sizeof(path), "/w/f%d", i);
        assert_int_equal(watch_queue_push(&q, T(CREATE), path, false, i), 0);
    }
    assert_int_equal(watch_queue_len(&q), 9); /* the bound and one overflow */
    expect_event(&q, 7, T(CREATE), "/w/f7");
    expect_event(&q, 8, T(OVERFLOW), "/w");
    assert_int_equal(watch_queue_at(&q, 8)->unix_ms, 999);
    /* Nothing merges across the loss: a write of f7 after it is new. */
    watch_queue_drop(&q, 4);
    watch_queue_push(&q, T(WRITE), "/w/f7", false, 1000);
    watch_queue_push(&q, T(WRITE), "/w/f7", false, 1001);
    assert_int_equal(watch_queue_len(&q), 6);
    expect_event(&q, 5, T(WRITE), "/w/f7");
    /* The kernel's overflow merges into a pending one at the end only. */
    watch_queue_overflow(&q, 1002);
    watch_queue_overflow(&q, 1003);
    assert_int_equal(watch_queue_len(&q), 7);
    expect_event(&q, 6, T(OVERFLOW), "/w");
    watch_queue_drop(&q, 7);
    assert_int_equal(watch_queue_len(&q), 0);
    /* The ring wraps cleanly. */
    for (int i = 0; i < 20; i++) {
        snprintf(path, sizeof(path), "/w/g%d", i);
        watch_queue_push(&q, T(CREATE), path, false, i);
        watch_queue_drop(&q, 1);
    }
    assert_int_equal(watch_queue_len(&q), 0);
    watch_queue_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_coalesce),
        cmocka_unit_test(test_order_of_a_path_kept),
        cmocka_unit_test(test_bound_and_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
