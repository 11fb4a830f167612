/* The gateway's per-key cap on execs in flight (gateway/exec_slots.c):
 * taken up to the cap, refused past it naming the cap and the count,
 * given back, per key, and no cap at 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "exec_slots.h"

static void cap_per_key(void **state)
{
    (void)state;
    struct exec_slots s;
    exec_slots_init(&s, 2);
    struct exec_slot a1, a2, a3, b1;
    struct airlock_error e = { 0 };
    assert_int_equal(exec_slot_take(&s, "key_a", &a1, &e), 0);
    assert_int_equal(exec_slot_take(&s, "key_a", &a2, &e), 0);
    assert_int_equal(exec_slot_take(&s, "key_a", &a3, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_QUOTA);
    assert_string_equal(e.message,
                        "quota exceeded: execs: 2 in use + 1 requested > limit 2 (key key_a)");
    assert_null(a3.slots); /* a refusal holds nothing to give back */
    exec_slot_give(&a3);
    /* Another key has slots of its own. */
    assert_int_equal(exec_slot_take(&s, "key_b", &b1, &e), 0);
    exec_slot_give(&a1);
    exec_slot_give(&a1); /* given back once only */
    assert_int_equal(exec_slot_take(&s, "key_a", &a3, &e), 0);
    assert_int_equal(exec_slot_take(&s, "key_a", &a1, &e), -1);
    exec_slot_give(&a2);
    exec_slot_give(&a3);
    exec_slot_give(&b1);
    assert_int_equal(s.n, 0); /* keys without execs are forgotten */
    exec_slots_destroy(&s);
}

static void many_keys(void **state)
{
    (void)state;
    struct exec_slots s;
    exec_slots_init(&s, 1);
    struct exec_slot slots[100];
    struct airlock_error e;
    char key[32];
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "key_%d", i);
        assert_int_equal(exec_slot_take(&s, key, &slots[i], &e), 0);
    }
    for (int i = 0; i < 100; i += 2)
        exec_slot_give(&slots[i]);
    for (int i = 0; i < 100; i++) {
        struct exec_slot again;
        snprintf(key, sizeof(key), "key_%d", i);
        assert_int_equal(exec_slot_take(&s, key, &again, &e), i % 2 ? -1 : 0);
        exec_slot_give(&again);
    }
    for (int i = 1; i < 100; i += 2)
        exec_slot_give(&slots[i]);
    assert_int_equal(s.n, 0);
    exec_slots_destroy(&s);
}

static void no_cap_at_zero(void **state)
{
    (void)state;
    struct exec_slots s;
    exec_slots_init(&s, 0);
    struct exec_slot slot;
    struct airlock_error e;
    for (int i = 0; i < 1000; i++)
        assert_int_equal(exec_slot_take(&s, "key_a", &slot, &e), 0);
    assert_int_equal(s.n, 0); /* nothing counted */
    exec_slot_give(&slot);
    exec_slots_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cap_per_key),
        cmocka_unit_test(many_keys),
        cmocka_unit_test(no_cap_at_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
