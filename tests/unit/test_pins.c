/* egress's DNS pins (egress/pins.h): a name claims an address only while
 * the answer that gave it lasts (its TTL plus the grace), asking again
 * renews it, and a full table drops the oldest pin. Times are passed in:
 * nothing here waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>

#include "pins.h"

#define T0 1000000 /* any monotonic ms */

static void test_pin_lasts_ttl_plus_grace(void **state)
{
    (void)state;
    struct pin_table *t = pins_new(8);
    assert_non_null(t);
    pins_add(t, "a.test", 0x0a000001, 30, T0);
    assert_true(pins_match(t, "a.test", 0x0a000001, T0));
    assert_true(pins_match(t, "a.test", 0x0a000001, T0 + (30 + PINS_GRACE_S) * 1000 - 1));
    assert_false(pins_match(t, "a.test", 0x0a000001, T0 + (30 + PINS_GRACE_S) * 1000));
    /* Another name or address never matched. */
    assert_false(pins_match(t, "b.test", 0x0a000001, T0));
    assert_false(pins_match(t, "a.test", 0x0a000002, T0));
    /* A TTL of 0 still gives the grace. */
    pins_add(t, "zero.test", 0x0a000003, 0, T0);
    assert_true(pins_match(t, "zero.test", 0x0a000003, T0 + PINS_GRACE_S * 1000 - 1));
    assert_false(pins_match(t, "zero.test", 0x0a000003, T0 + PINS_GRACE_S * 1000));
    pins_free(t);
}

static void test_asking_again_renews(void **state)
{
    (void)state;
    struct pin_table *t = pins_new(8);
    pins_add(t, "a.test", 0x0a000001, 10, T0);
    int64_t later = T0 + (10 + PINS_GRACE_S) * 1000 - 5;
    pins_add(t, "a.test", 0x0a000001, 10, later);
    assert_true(pins_match(t, "a.test", 0x0a000001, later + (10 + PINS_GRACE_S) * 1000 - 1));
    assert_false(pins_match(t, "a.test", 0x0a000001, later + (10 + PINS_GRACE_S) * 1000));
    /* An expired pin asked for again comes back. */
    int64_t much_later = later + 3600 * 1000;
    assert_false(pins_match(t, "a.test", 0x0a000001, much_later));
    pins_add(t, "a.test", 0x0a000001, 10, much_later);
    assert_true(pins_match(t, "a.test", 0x0a000001, much_later));
    pins_free(t);
}

static void test_full_table_drops_the_oldest(void **state)
{
    (void)state;
    struct pin_table *t = pins_new(3);
    char name[32];
    for (uint32_t i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "n%u.test", i);
        pins_add(t, name, 0x0a000000 + i, 300, T0);
    }
    assert_false(pins_match(t, "n0.test", 0x0a000000, T0));
    for (uint32_t i = 1; i < 4; i++) {
        snprintf(name, sizeof(name), "n%u.test", i);
        assert_true(pins_match(t, name, 0x0a000000 + i, T0));
    }
    pins_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pin_lasts_ttl_plus_grace),
        cmocka_unit_test(test_asking_again_renews),
        cmocka_unit_test(test_full_table_drops_the_oldest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
