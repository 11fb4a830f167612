/* The public gRPC API's conversions (gateway/grpc_convert.c): request maps
 * and policies to the JSON the gateway's shared code checks — including
 * bytes a Python client cannot send but a C one can (strings that are not
 * UTF-8 must be refused by name, never dropped) — and the scheduler's
 * Sandbox to the public one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "grpc_convert.h"

static void map_to_json(void **state)
{
    (void)state;
    Airlock__V1__CreateSandboxRequest__EnvEntry a = AIRLOCK__V1__CREATE_SANDBOX_REQUEST__ENV_ENTRY__INIT;
    Airlock__V1__CreateSandboxRequest__EnvEntry b = AIRLOCK__V1__CREATE_SANDBOX_REQUEST__ENV_ENTRY__INIT;
    a.key = "A";
    a.value = "1";
    b.key = "B";
    b.value = "two";
    Airlock__V1__CreateSandboxRequest__EnvEntry *entries[] = { &a, &b };
    json_t *out;
    char err[256];
    assert_int_equal(grpc_string_map_json((ProtobufCMessage **)entries, 2, "env", &out, err,
                                          sizeof(err)), 0);
    assert_int_equal(json_object_size(out), 2);
    assert_string_equal(json_string_value(json_object_get(out, "B")), "two");
    json_decref(out);

    b.value = "\xff\xfe";
    assert_int_equal(grpc_string_map_json((ProtobufCMessage **)entries, 2, "env", &out, err,
                                          sizeof(err)), -1);
    assert_null(out);
    assert_non_null(strstr(err, "env: keys and values must be UTF-8"));
    b.value = "ok";
    b.key = "\xc3";
    assert_int_equal(grpc_string_map_json((ProtobufCMessage **)entries, 2, "metadata", &out, err,
                                          sizeof(err)), -1);
    assert_non_null(strstr(err, "metadata:"));
}

static void network_to_json(void **state)
{
    (void)state;
    json_t *out = (json_t *)1;
    char err[256];
    assert_int_equal(grpc_network_json(NULL, &out, err, sizeof(err)), 0);
    assert_null(out); /* none given: deny everything, no "network" at all */

    char *cidrs[] = { "198.51.100.0/24", "198.51.100.7" };
    uint32_t ports[] = { 80, 443 };
    Airlock__V1__NetworkPolicy p = AIRLOCK__V1__NETWORK_POLICY__INIT;
    p.deny_cidrs = cidrs;
    p.n_deny_cidrs = 2;
    p.allow_ports = ports;
    p.n_allow_ports = 2;
    assert_int_equal(grpc_network_json(&p, &out, err, sizeof(err)), 0);
    /* Empty fields are left out, so egress's defaults apply. */
    assert_null(json_object_get(out, "default"));
    assert_null(json_object_get(out, "allow_domains"));
    assert_int_equal(json_array_size(json_object_get(out, "deny_cidrs")), 2);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(out, "allow_ports"), 1)), 443);
    json_decref(out);

    cidrs[1] = "198.51.100.7\xff";
    assert_int_equal(grpc_network_json(&p, &out, err, sizeof(err)), -1);
    assert_null(out);
    assert_string_equal(err, "network.deny_cidrs[1]: must be UTF-8");
    cidrs[1] = "198.51.100.7";
    p.default_ = "\xe2\x82";
    assert_int_equal(grpc_network_json(&p, &out, err, sizeof(err)), -1);
    assert_string_equal(err, "network.default: must be UTF-8");
}

static void sandbox_from_scheduler(void **state)
{
    (void)state;
    Airlock__Scheduler__V1__Sandbox sb = AIRLOCK__SCHEDULER__V1__SANDBOX__INIT;
    sb.id = "sb_1";
    sb.state = "running";
    sb.node_id = "n1";
    sb.cpus = 2;
    sb.created_unix_ms = 1764431521123;
    sb.metadata_json = "{\"owner\":\"test\",\"team\":\"a\"}";
    sb.network_json = "{\"default\":\"allow\",\"deny_ports\":[25]}";
    struct grpc_arena a = { 0 };
    Airlock__V1__Sandbox *m = grpc_sandbox_msg(&a, &sb);
    assert_non_null(m);
    assert_false(a.failed);
    assert_string_equal(m->id, "sb_1");
    assert_string_equal(m->node, "n1");
    assert_int_equal(m->cpus, 2);
    assert_string_equal(m->created_at, "2025-11-29T15:52:01.123Z");
    assert_int_equal(m->n_metadata, 2);
    assert_non_null(m->network);
    assert_string_equal(m->network->default_, "allow");
    assert_int_equal(m->network->n_deny_ports, 1);
    assert_int_equal(m->network->deny_ports[0], 25);
    /* It packs: every pointer is valid. */
    uint8_t buf[1024];
    assert_true(airlock__v1__sandbox__get_packed_size(m) < sizeof(buf));
    airlock__v1__sandbox__pack(m, buf);
    grpc_arena_free(&a);

    sb.network_json = ""; /* none set */
    m = grpc_sandbox_msg(&a, &sb);
    assert_null(m->network);
    grpc_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(map_to_json),
        cmocka_unit_test(network_to_json),
        cmocka_unit_test(sandbox_from_scheduler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
