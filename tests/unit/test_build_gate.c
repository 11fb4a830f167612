/* vmhost/build_gate: at most `slots` callers inside at once, the others
 * waiting and let in in the order they arrived; no limit with 0 slots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "build_gate.h"

#define WAITERS 5

struct order {
    struct build_gate *gate;
    pthread_mutex_t lock;
    int entered[WAITERS];
    int n;
};

struct waiter {
    struct order *o;
    int id;
};

static void *enter_record_leave(void *arg)
{
    struct waiter *w = arg;
    build_gate_enter(w->o->gate);
    pthread_mutex_lock(&w->o->lock);
    w->o->entered[w->o->n++] = w->id;
    pthread_mutex_unlock(&w->o->lock);
    build_gate_leave(w->o->gate);
    return NULL;
}

/* Polls until want callers wait (they took their tickets). */
static void wait_for_waiting(struct build_gate *g, unsigned want)
{
    for (int i = 0; build_gate_waiting(g) != want; i++) {
        assert_true(i < 10000); /* a hang, not a speed */
        usleep(1000);
    }
}

static void slots_bound_who_is_inside(void **state)
{
    (void)state;
    struct order o = { .gate = build_gate_new(2) };
    assert_non_null(o.gate);
    pthread_mutex_init(&o.lock, NULL);
    build_gate_enter(o.gate);
    build_gate_enter(o.gate); /* both slots taken without waiting */
    assert_int_equal(build_gate_waiting(o.gate), 0);
    struct waiter w = { &o, 0 };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, enter_record_leave, &w), 0);
    wait_for_waiting(o.gate, 1);
    pthread_mutex_lock(&o.lock);
    assert_int_equal(o.n, 0); /* still outside */
    pthread_mutex_unlock(&o.lock);
    build_gate_leave(o.gate);
    pthread_join(t, NULL);
    assert_int_equal(o.n, 1);
    assert_int_equal(build_gate_waiting(o.gate), 0);
    build_gate_leave(o.gate);
    pthread_mutex_destroy(&o.lock);
    build_gate_free(o.gate);
}

static void waiters_go_in_in_arrival_order(void **state)
{
    (void)state;
    struct order o = { .gate = build_gate_new(1) };
    assert_non_null(o.gate);
    pthread_mutex_init(&o.lock, NULL);
    build_gate_enter(o.gate);
    struct waiter w[WAITERS];
    pthread_t t[WAITERS];
    for (int i = 0; i < WAITERS; i++) {
        w[i] = (struct waiter){ &o, i };
        assert_int_equal(pthread_create(&t[i], NULL, enter_record_leave, &w[i]), 0);
        wait_for_waiting(o.gate, (unsigned)i + 1); /* its ticket taken before the next starts */
    }
    build_gate_leave(o.gate);
    for (int i = 0; i < WAITERS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(o.n, WAITERS);
    for (int i = 0; i < WAITERS; i++)
        assert_int_equal(o.entered[i], i);
    pthread_mutex_destroy(&o.lock);
    build_gate_free(o.gate);
}

static void no_slots_means_no_limit(void **state)
{
    (void)state;
    struct build_gate *g = build_gate_new(0);
    assert_non_null(g);
    for (int i = 0; i < 100; i++)
        assert_int_equal(build_gate_enter(g), 0);
    assert_int_equal(build_gate_waiting(g), 0);
    for (int i = 0; i < 100; i++)
        build_gate_leave(g);
    build_gate_free(g);
    assert_int_equal(build_gate_enter(NULL), 0); /* no gate: at once */
    build_gate_leave(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slots_bound_who_is_inside),
        cmocka_unit_test(waiters_go_in_in_arrival_order),
        cmocka_unit_test(no_slots_means_no_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
