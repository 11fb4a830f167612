/* common/airlock_error.c: an error's message is always NUL-terminated and
 * cut at the one size, whether set, prefixed with context or written by a
 * lower-level function; the class travels with it; and common/rpc maps a
 * failure to its gRPC status, never OK, and a relayed status back to
 * itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "airlock_error.h"
#include "rpc_err.h"

static void set_formats_and_returns_failure(void **state)
{
    (void)state;
    struct airlock_error e = { 0 };
    assert_false(airlock_error_is_set(&e));
    assert_int_equal(airlock_error_set(&e, AIRLOCK_ERR_NOT_FOUND, "sandbox %s not found", "sb_x"),
                     -1);
    assert_true(airlock_error_is_set(&e));
    assert_int_equal(e.class, AIRLOCK_ERR_NOT_FOUND);
    assert_string_equal(e.message, "sandbox sb_x not found");
}

static void set_cuts_a_long_message(void **state)
{
    (void)state;
    static char big[2 * AIRLOCK_ERROR_MESSAGE_SIZE];
    memset(big, 'x', sizeof(big) - 1);
    struct airlock_error e = { 0 };
    airlock_error_set(&e, AIRLOCK_ERR_INTERNAL, "%s", big);
    assert_int_equal(strlen(e.message), AIRLOCK_ERROR_MESSAGE_SIZE - 1);
}

static void prefix_puts_context_in_front_and_keeps_the_class(void **state)
{
    (void)state;
    struct airlock_error e = { 0 };
    airlock_error_set(&e, AIRLOCK_ERR_STATE, "sandbox is paused");
    assert_int_equal(airlock_error_prefix(&e, "create %s: ", "sb_x"), -1);
    assert_string_equal(e.message, "create sb_x: sandbox is paused");
    assert_int_equal(e.class, AIRLOCK_ERR_STATE);
    airlock_error_prefix(&e, "op: ");
    assert_string_equal(e.message, "op: create sb_x: sandbox is paused");
}

static void prefix_cuts_the_inner_message_first(void **state)
{
    (void)state;
    static char big[AIRLOCK_ERROR_MESSAGE_SIZE];
    memset(big, 'y', sizeof(big) - 1);
    struct airlock_error e = { 0 };
    airlock_error_set(&e, AIRLOCK_ERR_INTERNAL, "%s", big);
    airlock_error_prefix(&e, "ctx: ");
    assert_int_equal(strlen(e.message), AIRLOCK_ERROR_MESSAGE_SIZE - 1);
    assert_memory_equal(e.message, "ctx: yyy", 8);
}

static void suffix_follows_and_survives_a_long_message(void **state)
{
    (void)state;
    struct airlock_error e = { 0 };
    airlock_error_set(&e, AIRLOCK_ERR_UNAVAILABLE, "node n stopped answering");
    assert_int_equal(airlock_error_suffix(&e, "; %s", "try again"), -1);
    assert_string_equal(e.message, "node n stopped answering; try again");
    assert_int_equal(e.class, AIRLOCK_ERR_UNAVAILABLE);
    static char big[AIRLOCK_ERROR_MESSAGE_SIZE];
    memset(big, 'y', sizeof(big) - 1);
    airlock_error_set(&e, AIRLOCK_ERR_INTERNAL, "%s", big);
    airlock_error_suffix(&e, "; delete it");
    assert_int_equal(strlen(e.message), AIRLOCK_ERROR_MESSAGE_SIZE - 1);
    assert_string_equal(e.message + strlen(e.message) - 11, "; delete it");
}

static void prefix_longer_than_the_size_is_cut(void **state)
{
    (void)state;
    static char big[2 * AIRLOCK_ERROR_MESSAGE_SIZE];
    memset(big, 'z', sizeof(big) - 1);
    struct airlock_error e = { 0 };
    airlock_error_set(&e, AIRLOCK_ERR_INVALID, "inner");
    airlock_error_prefix(&e, "%s", big);
    assert_int_equal(strlen(e.message), AIRLOCK_ERROR_MESSAGE_SIZE - 1);
    assert_null(strstr(e.message, "inner"));
}

static void classify_keeps_a_lower_level_message(void **state)
{
    (void)state;
    struct airlock_error e = { 0 };
    snprintf(e.message, sizeof(e.message), "qmp: connection refused");
    assert_int_equal(airlock_error_classify(&e, AIRLOCK_ERR_UNAVAILABLE), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_UNAVAILABLE);
    assert_string_equal(e.message, "qmp: connection refused");
    memset(e.message, 'w', sizeof(e.message)); /* a writer that forgot the NUL */
    airlock_error_classify(&e, AIRLOCK_ERR_INTERNAL);
    assert_int_equal(strlen(e.message), AIRLOCK_ERROR_MESSAGE_SIZE - 1);
}

static void clear_forgets_it(void **state)
{
    (void)state;
    struct airlock_error e = { 0 };
    airlock_error_set(&e, AIRLOCK_ERR_EXISTS, "taken");
    airlock_error_clear(&e);
    assert_false(airlock_error_is_set(&e));
    assert_string_equal(e.message, "");
}

static void status_of_each_class(void **state)
{
    (void)state;
    static const struct {
        enum airlock_err class;
        grpc_status_code status;
    } cases[] = {
        { AIRLOCK_OK, GRPC_STATUS_INTERNAL }, /* a failure without a class */
        { AIRLOCK_ERR_INVALID, GRPC_STATUS_INVALID_ARGUMENT },
        { AIRLOCK_ERR_NOT_FOUND, GRPC_STATUS_NOT_FOUND },
        { AIRLOCK_ERR_EXISTS, GRPC_STATUS_ALREADY_EXISTS },
        { AIRLOCK_ERR_CAPACITY, GRPC_STATUS_RESOURCE_EXHAUSTED },
        { AIRLOCK_ERR_QUOTA, GRPC_STATUS_RESOURCE_EXHAUSTED },
        { AIRLOCK_ERR_STATE, GRPC_STATUS_FAILED_PRECONDITION },
        { AIRLOCK_ERR_ABORTED, GRPC_STATUS_ABORTED },
        { AIRLOCK_ERR_UNAVAILABLE, GRPC_STATUS_UNAVAILABLE },
        { AIRLOCK_ERR_INTERNAL, GRPC_STATUS_INTERNAL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct airlock_error e = { .class = cases[i].class };
        assert_int_equal(airlock_error_status(&e), cases[i].status);
    }
}

/* A status another service answered, classified into an error, is
 * answered on as it came: every gRPC code but OK has its class. */
static void relayed_status_is_kept(void **state)
{
    (void)state;
    assert_int_equal(airlock_error_class_of(GRPC_STATUS_OK), AIRLOCK_OK);
    for (int st = GRPC_STATUS_CANCELLED; st <= GRPC_STATUS_UNAUTHENTICATED; st++) {
        struct airlock_error e = { .class = airlock_error_class_of((grpc_status_code)st) };
        assert_true(airlock_error_is_set(&e));
        assert_int_equal(airlock_error_status(&e), st);
    }
    struct airlock_error e = { .class = airlock_error_class_of((grpc_status_code)99) };
    assert_int_equal(airlock_error_status(&e), GRPC_STATUS_UNKNOWN); /* not a code of gRPC */
}

/* A quota's refusal and a full node share RESOURCE_EXHAUSTED; the
 * message tells them apart again after the hop, in both directions. */
static void quota_refusal_survives_a_hop(void **state)
{
    (void)state;
    struct airlock_error e;
    airlock_error_from_status(&e, GRPC_STATUS_RESOURCE_EXHAUSTED,
                              AIRLOCK_QUOTA_MESSAGE_PREFIX "vcpus: 8 in use + 2 requested > "
                                                           "limit 8");
    assert_int_equal(e.class, AIRLOCK_ERR_QUOTA);
    assert_int_equal(airlock_error_status(&e), GRPC_STATUS_RESOURCE_EXHAUSTED);
    airlock_error_from_status(&e, GRPC_STATUS_RESOURCE_EXHAUSTED, "no live node has room");
    assert_int_equal(e.class, AIRLOCK_ERR_CAPACITY);
    airlock_error_from_status(&e, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL);
    assert_int_equal(e.class, AIRLOCK_ERR_CAPACITY);
    /* Only that status: another one's message may say anything. */
    airlock_error_from_status(&e, GRPC_STATUS_INVALID_ARGUMENT, AIRLOCK_QUOTA_MESSAGE_PREFIX "x");
    assert_int_equal(e.class, AIRLOCK_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(set_formats_and_returns_failure),
        cmocka_unit_test(set_cuts_a_long_message),
        cmocka_unit_test(prefix_puts_context_in_front_and_keeps_the_class),
        cmocka_unit_test(prefix_cuts_the_inner_message_first),
        cmocka_unit_test(suffix_follows_and_survives_a_long_message),
        cmocka_unit_test(prefix_longer_than_the_size_is_cut),
        cmocka_unit_test(classify_keeps_a_lower_level_message),
        cmocka_unit_test(clear_forgets_it),
        cmocka_unit_test(status_of_each_class),
        cmocka_unit_test(relayed_status_is_kept),
        cmocka_unit_test(quota_refusal_survives_a_hop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
