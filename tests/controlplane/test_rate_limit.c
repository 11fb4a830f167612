/* The gateway's per-key rate limit (gateway/rate_limit.c) on an injected
 * clock: the burst, then refusals naming the limit and the wait (rounded
 * up to seconds), refill, keys apart, rates below one a second, a table
 * of fixed size whose least recently seen key makes room, off at 0, and
 * the flag's parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "rate_limit.h"

static int64_t fake_now;

static int64_t fake_clock(void)
{
    return fake_now;
}

/* Whether key_id may make one more request now; *retry_after_s and why
 * when not. */
static int take(struct rate_limit *rl, const char *key_id, unsigned *retry_after_s, char *why)
{
    return rate_limit_take(rl, key_id, retry_after_s, why, 256);
}

static void burst_then_refill(void **state)
{
    (void)state;
    struct rate_limit rl;
    fake_now = 5000;
    assert_int_equal(rate_limit_init(&rl, 2000, 3, 16, fake_clock), 0); /* 2/s, burst 3 */
    unsigned wait = 0;
    char why[256] = "";
    for (int i = 0; i < 3; i++)
        assert_int_equal(take(&rl, "key_a", &wait, why), 0);
    assert_int_equal(take(&rl, "key_a", &wait, why), -1);
    assert_int_equal(wait, 1);
    assert_string_equal(why, "rate limited: key key_a made more than 2 requests a second "
                             "(burst 3) through this gateway; retry after 1 s");
    /* Another key has a bucket of its own. */
    assert_int_equal(take(&rl, "key_b", &wait, why), 0);
    /* One request every 500 ms: not a millisecond sooner. */
    fake_now += 499;
    assert_int_equal(take(&rl, "key_a", &wait, why), -1);
    assert_int_equal(wait, 1);
    fake_now += 1;
    assert_int_equal(take(&rl, "key_a", &wait, why), 0);
    assert_int_equal(take(&rl, "key_a", &wait, why), -1);
    /* Refused requests cost nothing; a long idle refills to the burst
     * only. */
    fake_now += 3600 * 1000;
    for (int i = 0; i < 3; i++)
        assert_int_equal(take(&rl, "key_a", &wait, why), 0);
    assert_int_equal(take(&rl, "key_a", &wait, why), -1);
    rate_limit_destroy(&rl);
}

static void slow_rate_waits_seconds(void **state)
{
    (void)state;
    struct rate_limit rl;
    fake_now = 0;
    assert_int_equal(rate_limit_init(&rl, 400, 1, 16, fake_clock), 0); /* 0.4/s: 2500 ms each */
    unsigned wait = 0;
    char why[256] = "";
    assert_int_equal(take(&rl, "key_a", &wait, why), 0);
    assert_int_equal(take(&rl, "key_a", &wait, why), -1);
    assert_int_equal(wait, 3); /* 2.5 s, rounded up */
    assert_non_null(strstr(why, "more than 0.4 requests a second (burst 1)"));
    assert_non_null(strstr(why, "retry after 3 s"));
    fake_now += 1500;
    assert_int_equal(take(&rl, "key_a", &wait, why), -1);
    assert_int_equal(wait, 1);
    fake_now += 1000;
    assert_int_equal(take(&rl, "key_a", &wait, why), 0);
    rate_limit_destroy(&rl);
}

static void table_is_bounded(void **state)
{
    (void)state;
    struct rate_limit rl;
    fake_now = 0;
    assert_int_equal(rate_limit_init(&rl, 1000, 1, 2, fake_clock), 0); /* 2 slots */
    unsigned wait = 0;
    char why[256] = "";
    assert_int_equal(take(&rl, "key_a", &wait, why), 0);
    fake_now += 10;
    assert_int_equal(take(&rl, "key_b", &wait, why), 0);
    fake_now += 10;
    /* A third key takes key_a's slot (seen least recently)... */
    assert_int_equal(take(&rl, "key_c", &wait, why), 0);
    fake_now += 10;
    assert_int_equal(take(&rl, "key_c", &wait, why), -1);
    fake_now += 10;
    assert_int_equal(take(&rl, "key_b", &wait, why), -1);
    /* ...so key_a starts again with a full bucket, now in key_c's. */
    assert_int_equal(take(&rl, "key_a", &wait, why), 0);
    assert_int_equal(take(&rl, "key_b", &wait, why), -1);
    int named = 0;
    for (size_t i = 0; i < rl.capacity; i++)
        named += rl.buckets[i].key_id[0] != '\0';
    assert_int_equal(named, 2);
    rate_limit_destroy(&rl);
}

static void off_at_zero(void **state)
{
    (void)state;
    struct rate_limit rl;
    assert_int_equal(rate_limit_init(&rl, 0, 200, 16, fake_clock), 0);
    unsigned wait = 0;
    char why[256] = "";
    for (int i = 0; i < 1000; i++)
        assert_int_equal(take(&rl, "key_a", &wait, why), 0);
    assert_null(rl.buckets); /* nothing kept */
    rate_limit_destroy(&rl);
}

static void parses_rates(void **state)
{
    (void)state;
    unsigned milli = 7;
    assert_int_equal(rate_limit_parse_rate("100", &milli), 0);
    assert_int_equal(milli, 100000);
    assert_int_equal(rate_limit_parse_rate("0.5", &milli), 0);
    assert_int_equal(milli, 500);
    assert_int_equal(rate_limit_parse_rate("0", &milli), 0);
    assert_int_equal(milli, 0);
    assert_int_equal(rate_limit_parse_rate("1000000", &milli), 0);
    assert_int_equal(milli, 1000000000);
    const char *bad[] = { "", "-1", "fast", "2/s", "0.0001", "1000001", "nan", "inf" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(rate_limit_parse_rate(bad[i], &milli), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(burst_then_refill),
        cmocka_unit_test(slow_rate_waits_seconds),
        cmocka_unit_test(table_is_bounded),
        cmocka_unit_test(off_at_zero),
        cmocka_unit_test(parses_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
