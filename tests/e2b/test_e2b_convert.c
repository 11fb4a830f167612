/* E2B's view of airlock's sandboxes (gateway/e2b_convert.c): states,
 * template names, the shapes' fields, the listings' metadata filter,
 * cursor and times, and every malformed input refused with its field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "e2b_convert.h"

static void states_and_templates(void **state)
{
    (void)state;
    const char *running[] = { "running", "creating", "resuming", "migrating" };
    const char *paused[] = { "paused", "suspending", "suspended", "error", "lost" };
    for (size_t i = 0; i < sizeof(running) / sizeof(*running); i++)
        assert_string_equal(e2b_state(running[i]), "running");
    for (size_t i = 0; i < sizeof(paused) / sizeof(*paused); i++)
        assert_string_equal(e2b_state(paused[i]), "paused");
    assert_string_equal(e2b_template_id("default"), "base");
    assert_string_equal(e2b_template_id("py:2"), "py:2");
    assert_string_equal(e2b_airlock_template("base"), "default");
    assert_string_equal(e2b_airlock_template("default"), "default");
    assert_string_equal(e2b_airlock_template("py"), "py");
}

/* A sandbox with metadata role=a, "x y"="1&2". */
static Sandbox *sandbox(Sandbox *sb, Airlock__Scheduler__V1__Sandbox__MetadataEntry *m,
                        Airlock__Scheduler__V1__Sandbox__MetadataEntry **ptrs)
{
    airlock__scheduler__v1__sandbox__init(sb);
    for (int i = 0; i < 2; i++) {
        airlock__scheduler__v1__sandbox__metadata_entry__init(&m[i]);
        ptrs[i] = &m[i];
    }
    m[0].key = "role";
    m[0].value = "a";
    m[1].key = "x y";
    m[1].value = "1&2";
    sb->id = "sb_1";
    sb->state = "suspended";
    sb->template_ = "default";
    sb->node_id = "node-1";
    sb->cpus = 2;
    sb->memory_mb = 1024;
    sb->created_unix_ms = 1000;
    sb->on_timeout = "suspend";
    sb->metadata = ptrs;
    sb->n_metadata = 2;
    return sb;
}

static void shapes(void **state)
{
    (void)state;
    Sandbox sb;
    Airlock__Scheduler__V1__Sandbox__MetadataEntry m[2], *ptrs[2];
    sandbox(&sb, m, ptrs);
    json_t *listed = e2b_listed_json(&sb);
    assert_string_equal(json_string_value(json_object_get(listed, "state")), "paused");
    assert_string_equal(json_string_value(json_object_get(listed, "templateID")), "base");
    assert_string_equal(json_string_value(json_object_get(listed, "endAt")), E2B_NEVER);
    assert_string_equal(json_string_value(json_object_get(listed, "envdVersion")),
                        E2B_ENVD_VERSION);
    assert_int_equal(json_integer_value(json_object_get(listed, "cpuCount")), 2);
    json_decref(listed);
    sb.expires_unix_ms = 61000;
    json_t *detail = e2b_detail_json(&sb, "example.test", "e2b_k");
    assert_string_equal(json_string_value(json_object_get(detail, "endAt")),
                        "1970-01-01T00:01:01.000Z");
    assert_string_equal(json_string_value(json_object_get(detail, "domain")), "example.test");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(detail, "lifecycle"), "onTimeout")),
        "pause");
    json_decref(detail);
    sb.public_ports = true;
    json_t *created = e2b_sandbox_json(&sb, "example.test", "e2b_k");
    assert_true(json_is_null(json_object_get(created, "trafficAccessToken")));
    assert_string_equal(json_string_value(json_object_get(created, "envdAccessToken")), "e2b_k");
    json_decref(created);
    /* network.allowPublicTraffic false: the token the ports then need. */
    sb.public_ports = false;
    sb.traffic_token = "tt_secret";
    created = e2b_sandbox_json(&sb, "example.test", "e2b_k");
    assert_string_equal(json_string_value(json_object_get(created, "trafficAccessToken")),
                        "tt_secret");
    json_decref(created);
}

static void metadata_filter(void **state)
{
    (void)state;
    Sandbox sb;
    Airlock__Scheduler__V1__Sandbox__MetadataEntry m[2], *ptrs[2];
    sandbox(&sb, m, ptrs);
    struct e2b_metadata_filter f;
    struct airlock_error e;
    /* As E2B's JS SDK sends it: each key and value encoded, then the whole. */
    assert_int_equal(e2b_metadata_filter_parse("role%3Da%26x%2By%3D1%2526%32", &f, &e), 0);
    assert_int_equal(f.n, 2);
    assert_string_equal(f.keys[1], "x y");
    assert_string_equal(f.values[1], "1&2");
    assert_true(e2b_metadata_matches(&f, &sb));
    e2b_metadata_filter_free(&f);
    assert_int_equal(e2b_metadata_filter_parse("role=b", &f, &e), 0);
    assert_false(e2b_metadata_matches(&f, &sb));
    e2b_metadata_filter_free(&f);
    assert_int_equal(e2b_metadata_filter_parse(NULL, &f, &e), 0);
    assert_true(e2b_metadata_matches(&f, &sb));
    const char *bad[] = { "role", "=a", "role=%zz", "a=1&b", "%" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_int_equal(e2b_metadata_filter_parse(bad[i], &f, &e), -1);
        assert_int_equal(e.class, AIRLOCK_ERR_INVALID);
        assert_non_null(strstr(e.message, "metadata"));
        assert_int_equal(f.n, 0);
    }
}

static void cursor_and_times(void **state)
{
    (void)state;
    Sandbox sb;
    Airlock__Scheduler__V1__Sandbox__MetadataEntry m[2], *ptrs[2];
    sandbox(&sb, m, ptrs);
    char token[64], id[32];
    int64_t ms;
    struct airlock_error e;
    e2b_next_token(&sb, token, sizeof(token));
    assert_int_equal(e2b_next_token_parse(token, &ms, id, sizeof(id), &e), 0);
    assert_int_equal(ms, 1000);
    assert_string_equal(id, "sb_1");
    const char *bad[] = { "", "x.sb_1", "12", "12.", "-3.sb_1" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_int_equal(e2b_next_token_parse(bad[i], &ms, id, sizeof(id), &e), -1);
        assert_non_null(strstr(e.message, "nextToken"));
    }
    assert_int_equal(e2b_time_parse("1970-01-01T00:01:01.5Z", "t", &ms, &e), 0);
    assert_int_equal(ms, 61500);
    assert_int_equal(e2b_time_parse("2026-12-05T18:00:00+00:00", "t", &ms, &e), 0);
    assert_int_equal(ms, 1796493600000LL);
    const char *bad_times[] = { "2026-12-05", "2026-12-05T18:00:00", "2026-12-05T18:00:00.Z",
                                "2026-12-05T18:00:00+01:00" };
    for (size_t i = 0; i < sizeof(bad_times) / sizeof(*bad_times); i++) {
        assert_int_equal(e2b_time_parse(bad_times[i], "startedAfter", &ms, &e), -1);
        assert_non_null(strstr(e.message, "startedAfter"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(states_and_templates),
        cmocka_unit_test(shapes),
        cmocka_unit_test(metadata_filter),
        cmocka_unit_test(cursor_and_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
