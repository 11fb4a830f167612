/* vmhost/pool_demand: a warm pool's target follows the recent create
 * rate (enough for the horizon at the peak), grows ahead of a rising rate,
 * holds, then shrinks gradually when idle, always within the floor, the
 * ceiling and the pool memory; configurations that cannot be held are
 * refused naming the value; refill retries back off. The clock is an
 * argument: no sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "pool_demand.h"

/* Defaults: 2 s window, 3 s horizon, 30 s hold, 10 s half-life. */
static const struct pool_limits wide = { .min = 0, .max = 64, .vm_memory_mb = 512,
                                         .memory_mb = 64 * 512 };

/* creates at rate per second from t0 for ms; returns the next time. */
static int64_t steady(struct pool_demand *d, int64_t t0, unsigned per_s, int64_t ms)
{
    int64_t step = 1000 / per_s, t = t0;
    for (; t < t0 + ms; t += step)
        pool_demand_record(d, t);
    return t;
}

static void idle_pool_keeps_its_floor(void **state)
{
    (void)state;
    struct pool_demand d;
    pool_demand_init(&d, NULL);
    assert_int_equal(pool_demand_target(&d, 1000, &wide), 0);
    struct pool_limits floor2 = wide;
    floor2.min = 2;
    assert_int_equal(pool_demand_target(&d, 1000, &floor2), 2);
}

static void steady_rate_covers_the_horizon(void **state)
{
    (void)state;
    struct pool_demand d;
    pool_demand_init(&d, NULL);
    int64_t t = steady(&d, 100000, 5, 10000);
    /* 5/s for 3 s: 15 VMs. */
    assert_int_equal(pool_demand_target(&d, t, &wide), 15);
    pool_demand_init(&d, NULL);
    t = steady(&d, 100000, 2, 10000);
    assert_int_equal(pool_demand_target(&d, t, &wide), 6);
}

static void rising_rate_is_met_ahead(void **state)
{
    (void)state;
    struct pool_demand d;
    pool_demand_init(&d, NULL);
    /* 1/s, then 4/s for the last second: the whole window averages
     * 2.5/s (8 VMs); the target is already the new rate's 12. */
    int64_t t = steady(&d, 100000, 1, 5000);
    assert_int_equal(pool_demand_target(&d, t, &wide), 3);
    t = steady(&d, t, 4, 1000);
    assert_int_equal(pool_demand_target(&d, t, &wide), 12);
}

static void burst_grows_to_the_ceiling(void **state)
{
    (void)state;
    struct pool_demand d;
    pool_demand_init(&d, NULL);
    for (int i = 0; i < 20; i++)
        pool_demand_record(&d, 50000 + i);
    struct pool_limits lim = wide;
    lim.max = 16;
    assert_int_equal(pool_demand_target(&d, 50100, &lim), 16);
}

static void idle_shrinks_after_the_hold_gradually(void **state)
{
    (void)state;
    struct pool_demand d;
    pool_demand_init(&d, NULL);
    int64_t t = steady(&d, 0, 4, 10000); /* 12 VMs */
    assert_int_equal(pool_demand_target(&d, t, &wide), 12);
    /* Quiet: held for 30 s. */
    assert_int_equal(pool_demand_target(&d, t + 29000, &wide), 12);
    /* One half-life past the hold: half. */
    assert_int_equal(pool_demand_target(&d, t + 40000, &wide), 6);
    assert_int_equal(pool_demand_target(&d, t + 50000, &wide), 3);
    /* Long idle: back to the floor. */
    assert_int_equal(pool_demand_target(&d, t + 200000, &wide), 0);
}

static void new_peak_restarts_the_hold(void **state)
{
    (void)state;
    struct pool_demand d;
    pool_demand_init(&d, NULL);
    int64_t t = steady(&d, 0, 4, 10000);
    /* Halfway down the decay, the rate comes back: the hold starts again. */
    t = steady(&d, t + 45000, 4, 10000);
    assert_int_equal(pool_demand_target(&d, t + 29000, &wide), 12);
}

static void memory_and_ceiling_bound_it(void **state)
{
    (void)state;
    struct pool_demand d;
    pool_demand_init(&d, NULL);
    int64_t t = steady(&d, 0, 10, 5000); /* 30 VMs wanted */
    struct pool_limits lim = wide;
    lim.max = 20;
    assert_int_equal(pool_demand_target(&d, t, &lim), 20);
    lim.memory_mb = 8 * 512 + 100; /* room for 8 */
    assert_int_equal(pool_demand_target(&d, t, &lim), 8);
}

static void many_creates_in_a_window_are_bounded(void **state)
{
    (void)state;
    struct pool_demand d;
    pool_demand_init(&d, NULL);
    for (int i = 0; i < 3 * POOL_DEMAND_MAX_CREATES; i++)
        pool_demand_record(&d, 1000 + i / 100);
    assert_int_equal(d.count, POOL_DEMAND_MAX_CREATES);
    assert_int_equal(pool_demand_target(&d, 1100, &wide), 64);
}

static void configurations_that_cannot_hold_are_named(void **state)
{
    (void)state;
    char err[256];
    struct pool_limits lim = { .min = 5, .max = 3, .vm_memory_mb = 512, .memory_mb = 8192 };
    assert_int_equal(pool_limits_check(&lim, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "min 5 is above max 3"));
    lim = (struct pool_limits){ .min = 0, .max = 4, .vm_memory_mb = 512, .memory_mb = 256 };
    assert_int_equal(pool_limits_check(&lim, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--pool-memory-mib 256 is below one VM (512 MiB)"));
    lim = (struct pool_limits){ .min = 20, .max = 32, .vm_memory_mb = 512, .memory_mb = 8192 };
    assert_int_equal(pool_limits_check(&lim, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "min 20 VMs of 512 MiB need 10240 MiB"));
    lim = (struct pool_limits){ .min = 2, .max = 16, .vm_memory_mb = 512, .memory_mb = 8192 };
    assert_int_equal(pool_limits_check(&lim, err, sizeof(err)), 0);
    /* No pool at all needs no memory. */
    lim = (struct pool_limits){ .min = 0, .max = 0, .vm_memory_mb = 512, .memory_mb = 0 };
    assert_int_equal(pool_limits_check(&lim, err, sizeof(err)), 0);
}

static void refill_failures_back_off(void **state)
{
    (void)state;
    assert_int_equal(pool_refill_backoff_ms(1), 1000);
    assert_int_equal(pool_refill_backoff_ms(2), 2000);
    assert_int_equal(pool_refill_backoff_ms(3), 4000);
    assert_int_equal(pool_refill_backoff_ms(6), 30000);
    assert_int_equal(pool_refill_backoff_ms(1000), 30000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_pool_keeps_its_floor),
        cmocka_unit_test(steady_rate_covers_the_horizon),
        cmocka_unit_test(rising_rate_is_met_ahead),
        cmocka_unit_test(burst_grows_to_the_ceiling),
        cmocka_unit_test(idle_shrinks_after_the_hold_gradually),
        cmocka_unit_test(new_peak_restarts_the_hold),
        cmocka_unit_test(memory_and_ceiling_bound_it),
        cmocka_unit_test(many_creates_in_a_window_are_bounded),
        cmocka_unit_test(configurations_that_cannot_hold_are_named),
        cmocka_unit_test(refill_failures_back_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
