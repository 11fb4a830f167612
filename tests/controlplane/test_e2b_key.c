/* E2B's key form of airlock keys (gateway/e2b_key.c): both directions,
 * and every malformed key refused rather than half-converted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "e2b_key.h"

#define HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void converts_both_ways(void **state)
{
    (void)state;
    char out[128];
    assert_int_equal(e2b_key_bearer("e2b_" HEX, out, sizeof(out)), 0);
    assert_string_equal(out, "Bearer ak_" HEX);
    assert_int_equal(e2b_key_from_airlock("ak_" HEX, out, sizeof(out)), 0);
    assert_string_equal(out, "e2b_" HEX);
}

static void refuses_malformed_keys(void **state)
{
    (void)state;
    char out[128];
    const char *bad[] = {
        NULL, "", "e2b_", "ak_" HEX, "e2b_" HEX "0", "e2b_" "0123456789ABCDEF" HEX + 16,
        "e2b_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg",
        "E2B_" HEX,
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(e2b_key_bearer(bad[i], out, sizeof(out)), -1);
    assert_int_equal(e2b_key_from_airlock("e2b_" HEX, out, sizeof(out)), -1);
    /* too small a buffer is a refusal, not a truncated key */
    assert_int_equal(e2b_key_bearer("e2b_" HEX, out, 20), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(converts_both_ways),
        cmocka_unit_test(refuses_malformed_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
