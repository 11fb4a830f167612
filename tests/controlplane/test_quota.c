/* common/quota: the kinds and their proto fields, the rules of a value,
 * the refusal's message and the SQL arrays the scheduler's statements
 * read and write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "quota.h"

/* The names as projects.proto spells them, in the order of the SQL
 * arrays (scheduler/migrations.c, migration 6): written out, not read
 * from the table under test. */
static const char *const expected_names[QUOTA_KIND_COUNT] = {
    "sandboxes", "vcpus", "memory_mb", "checkpoints", "templates", "template_builds",
    "volumes",   "volume_mb",
};

static void names_follow_the_sql_order(void **state)
{
    (void)state;
    for (int k = 0; k < QUOTA_KIND_COUNT; k++) {
        assert_string_equal(quota_name((enum quota_kind)k), expected_names[k]);
        assert_int_equal(quota_kind_parse(expected_names[k]), k);
        assert_true(quota_builtin_default((enum quota_kind)k) > 0);
    }
    assert_null(quota_name(QUOTA_KIND_COUNT));
    assert_int_equal(quota_kind_parse("memory-mb"), -1);
    assert_int_equal(quota_kind_parse(""), -1);
    char names[200];
    quota_names(names, sizeof(names));
    assert_string_equal(names, "sandboxes, vcpus, memory_mb, checkpoints, templates, "
                               "template_builds, volumes, volume_mb");
}

/* Each kind reads and writes its own field of both messages, the ones
 * projects.proto names after it. */
static void proto_fields_are_the_kinds_own(void **state)
{
    (void)state;
    for (int k = 0; k < QUOTA_KIND_COUNT; k++) {
        Airlock__V1__QuotaLimits l = AIRLOCK__V1__QUOTA_LIMITS__INIT;
        int64_t v = 99;
        assert_false(quota_limits_get(&l, (enum quota_kind)k, &v));
        quota_limits_set(&l, (enum quota_kind)k, -1 - k);
        for (int other = 0; other < QUOTA_KIND_COUNT; other++) {
            bool given = quota_limits_get(&l, (enum quota_kind)other, &v);
            assert_int_equal(given, other == k);
            if (given)
                assert_int_equal(v, -1 - k);
        }
        /* The field of that name, as a client library would see it. */
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(
            &airlock__v1__quota_limits__descriptor, expected_names[k]);
        assert_non_null(f);
        assert_int_equal(*(int64_t *)((char *)&l + f->offset), -1 - k);
        assert_int_equal(*(unsigned *)((char *)&l + f->quantifier_offset), f->id);

        Airlock__V1__ProjectQuotas q = AIRLOCK__V1__PROJECT_QUOTAS__INIT;
        const ProtobufCFieldDescriptor *qf = protobuf_c_message_descriptor_get_field_by_name(
            &airlock__v1__project_quotas__descriptor, expected_names[k]);
        assert_non_null(qf);
        assert_ptr_equal((char *)quota_field(&q, (enum quota_kind)k), (char *)&q + qf->offset);
    }
}

static void values_follow_the_rules(void **state)
{
    (void)state;
    struct airlock_error e = { 0 };
    assert_int_equal(quota_setting_check(QUOTA_VCPUS, -1, &e), 0);
    assert_int_equal(quota_setting_check(QUOTA_VCPUS, 0, &e), 0);
    assert_int_equal(quota_setting_check(QUOTA_VCPUS, INT64_MAX, &e), 0);
    assert_int_equal(quota_setting_check(QUOTA_MEMORY_MB, -2, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_INVALID);
    assert_non_null(strstr(e.message, "memory_mb: -2 is negative"));
    assert_non_null(strstr(e.message, "-1 = unlimited"));
    assert_true(quota_default_valid(-1));
    assert_true(quota_default_valid(0));
    assert_false(quota_default_valid(-2));
}

static void refusal_names_quota_limit_and_usage(void **state)
{
    (void)state;
    struct airlock_error e = { 0 };
    assert_int_equal(quota_refuse(&e, "prj_x", QUOTA_VCPUS, 8, 2, 8), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_QUOTA);
    assert_string_equal(e.message,
                        "quota exceeded: vcpus: 8 in use + 2 requested > limit 8 (project prj_x)");
    /* The class is told apart from a full node's by this beginning. */
    assert_memory_equal(e.message, AIRLOCK_QUOTA_MESSAGE_PREFIX,
                        strlen(AIRLOCK_QUOTA_MESSAGE_PREFIX));
}

static void sandboxes_take_their_size(void **state)
{
    (void)state;
    struct quota_values v;
    quota_sandboxes(3, 2, 512, &v);
    const int64_t want[QUOTA_KIND_COUNT] = { 3, 6, 1536, 0, 0, 0, 0, 0 };
    assert_memory_equal(v.v, want, sizeof(want));
}

static void sql_arrays_round_trip(void **state)
{
    (void)state;
    struct quota_values v = { { 1, -1, 102400, 0, 9223372036854775807LL, 4, 7, 8 } }, back;
    char text[200];
    quota_values_text(&v, text, sizeof(text));
    assert_string_equal(text, "{1,-1,102400,0,9223372036854775807,4,7,8}");
    bool set[QUOTA_KIND_COUNT];
    assert_int_equal(quota_values_parse(text, &back, set), 0);
    assert_memory_equal(back.v, v.v, sizeof(v.v));
    for (int k = 0; k < QUOTA_KIND_COUNT; k++)
        assert_true(set[k]);
    /* A project's own values: NULL where it has none. */
    assert_int_equal(quota_values_parse("{4,NULL,NULL,-1,NULL,NULL,NULL,NULL}", &back, set), 0);
    assert_true(set[0] && !set[1] && set[3] && !set[5]);
    assert_int_equal(back.v[0], 4);
    assert_int_equal(back.v[1], 0);
    assert_int_equal(back.v[3], -1);
    assert_int_equal(quota_values_parse("{1,2,3,4,5,6,7,8}", &back, NULL), 0);
    /* Anything else is no answer of the scheduler's statements. */
    const char *bad[] = { "",
                          "{}",
                          "{1,2,3,4,5,6,7}",
                          "{1,2,3,4,5,6,7,8,9}",
                          "1,2,3,4,5,6,7,8",
                          "{1,2,3,4,5,6,7,x}",
                          "{1,2,3,4,5,6,7,8}x",
                          "{1,,3,4,5,6,7,8}" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(quota_values_parse(bad[i], &back, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_follow_the_sql_order),
        cmocka_unit_test(proto_fields_are_the_kinds_own),
        cmocka_unit_test(values_follow_the_rules),
        cmocka_unit_test(refusal_names_quota_limit_and_usage),
        cmocka_unit_test(sandboxes_take_their_size),
        cmocka_unit_test(sql_arrays_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
