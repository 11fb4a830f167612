/* The public gRPC API's conversions (gateway/grpc_convert.c, and the
 * map and policy JSON of common/proto_json it shares with REST): request
 * maps and policies to the scheduler's messages and JSON — including bytes
 * a Python client cannot send but a C one can (strings that are not UTF-8
 * must be refused by name, never dropped), template specs as the JSON the
 * scheduler checks — and the scheduler's Sandbox and Template to the
 * public ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>

#include "grpc_convert.h"
#include "policy_json.h"
#include "string_map_json.h"

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
    out = string_map_to_json((ProtobufCMessage **)entries, 2, "env", err, sizeof(err));
    assert_non_null(out);
    assert_int_equal(json_object_size(out), 2);
    assert_string_equal(json_string_value(json_object_get(out, "B")), "two");

    /* The same entries as the scheduler's, and back from JSON. */
    const ProtobufCMessageDescriptor *sched_env =
        &airlock__scheduler__v1__create_sandbox_request__env_entry__descriptor;
    ProtobufCMessage **copy = string_map_copy((ProtobufCMessage **)entries, 2, sched_env, "env", err,
                                              sizeof(err));
    assert_non_null(copy);
    assert_ptr_equal(copy[1]->descriptor, sched_env);
    assert_string_equal(((Airlock__Scheduler__V1__CreateSandboxRequest__EnvEntry *)copy[1])->value,
                        "two");
    free(copy);
    size_t n;
    copy = string_map_from_json(out, sched_env, &n);
    assert_int_equal(n, 2);
    assert_string_equal(((Airlock__Scheduler__V1__CreateSandboxRequest__EnvEntry *)copy[0])->key, "A");
    free(copy);
    json_decref(out);

    b.value = "\xff\xfe";
    out = string_map_to_json((ProtobufCMessage **)entries, 2, "env", err, sizeof(err));
    assert_null(out);
    assert_non_null(strstr(err, "env: keys and values must be UTF-8"));
    assert_null(string_map_copy((ProtobufCMessage **)entries, 2, sched_env, "env", err, sizeof(err)));
    assert_non_null(strstr(err, "env: keys and values must be UTF-8"));
    b.value = "ok";
    b.key = "\xc3";
    out = string_map_to_json((ProtobufCMessage **)entries, 2, "metadata", err, sizeof(err));
    assert_null(out);
    assert_non_null(strstr(err, "metadata:"));
}

/* p as egress's Policy, then as REST's JSON. */
static json_t *network_json(const Airlock__V1__NetworkPolicy *p, char *err, size_t errlen)
{
    Airlock__Egress__V1__Policy policy;
    if (grpc_network_policy(p, &policy, err, errlen) < 0)
        return NULL;
    return policy_json_from_proto(&policy, "network", err, errlen);
}

static void network_to_policy(void **state)
{
    (void)state;
    json_t *out;
    char err[256];
    char *cidrs[] = { "198.51.100.0/24", "198.51.100.7" };
    uint32_t ports[] = { 80, 443 };
    Airlock__V1__NetworkPolicy p = AIRLOCK__V1__NETWORK_POLICY__INIT;
    p.deny_cidrs = cidrs;
    p.n_deny_cidrs = 2;
    p.allow_ports = ports;
    p.n_allow_ports = 2;
    Airlock__Egress__V1__Policy policy;
    assert_int_equal(grpc_network_policy(&p, &policy, err, sizeof(err)), 0);
    assert_int_equal(policy.default_action, AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_UNSPECIFIED);
    assert_int_equal(policy.n_deny_cidrs, 2);
    assert_int_equal(policy.allow_ports[1], 443);
    assert_non_null(out = network_json(&p, err, sizeof(err)));
    /* Empty fields are left out, so egress's defaults apply. */
    assert_null(json_object_get(out, "default"));
    assert_null(json_object_get(out, "allow_domains"));
    assert_int_equal(json_array_size(json_object_get(out, "deny_cidrs")), 2);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(out, "allow_ports"), 1)), 443);
    assert_null(json_object_get(out, "allow_ech")); /* false: left out */
    assert_null(json_object_get(out, "inspect_tls"));
    /* ... and read back as the same policy. */
    Airlock__Egress__V1__Policy back;
    assert_int_equal(policy_json_to_proto(out, "network", &back, err, sizeof(err)), 0);
    assert_int_equal(back.n_deny_cidrs, 2);
    assert_string_equal(back.deny_cidrs[1], "198.51.100.7");
    assert_int_equal(back.n_allow_ports, 2);
    policy_json_release(&back);
    json_decref(out);
    p.allow_ech = true;
    p.inspect_tls = true;
    p.default_ = "allow";
    assert_non_null(out = network_json(&p, err, sizeof(err)));
    assert_true(json_is_true(json_object_get(out, "allow_ech")));
    assert_true(json_is_true(json_object_get(out, "inspect_tls")));
    assert_string_equal(json_string_value(json_object_get(out, "default")), "allow");
    json_decref(out);
    p.allow_ech = false;
    p.inspect_tls = false;
    p.default_ = "maybe";
    assert_int_equal(grpc_network_policy(&p, &policy, err, sizeof(err)), -1);
    assert_string_equal(err, "network.default: must be \"deny\" or \"allow\"");
    p.default_ = "";

    cidrs[1] = "198.51.100.7\xff";
    assert_int_equal(grpc_network_policy(&p, &policy, err, sizeof(err)), -1);
    assert_string_equal(err, "network.deny_cidrs[1]: must be UTF-8");
    cidrs[1] = "198.51.100.7";
    p.default_ = "\xe2\x82";
    assert_int_equal(grpc_network_policy(&p, &policy, err, sizeof(err)), -1);
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
    Airlock__Scheduler__V1__Sandbox__MetadataEntry owner =
        AIRLOCK__SCHEDULER__V1__SANDBOX__METADATA_ENTRY__INIT;
    Airlock__Scheduler__V1__Sandbox__MetadataEntry team =
        AIRLOCK__SCHEDULER__V1__SANDBOX__METADATA_ENTRY__INIT;
    owner.key = "owner";
    owner.value = "test";
    team.key = "team";
    team.value = "a";
    Airlock__Scheduler__V1__Sandbox__MetadataEntry *metadata[] = { &owner, &team };
    sb.metadata = metadata;
    sb.n_metadata = 2;
    uint32_t deny_ports[] = { 25 };
    Airlock__Egress__V1__Policy policy = AIRLOCK__EGRESS__V1__POLICY__INIT;
    policy.default_action = AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_ALLOW;
    policy.deny_ports = deny_ports;
    policy.n_deny_ports = 1;
    policy.allow_ech = true;
    policy.inspect_tls = true;
    sb.network = &policy;
    struct grpc_arena a = { 0 };
    Airlock__V1__Sandbox *m = grpc_sandbox_msg(&a, &sb);
    assert_non_null(m);
    assert_false(a.failed);
    assert_string_equal(m->id, "sb_1");
    assert_string_equal(m->node, "n1");
    assert_int_equal(m->cpus, 2);
    assert_string_equal(m->created_at, "2025-11-29T15:52:01.123Z");
    assert_int_equal(m->n_metadata, 2);
    assert_string_equal(m->metadata[1]->key, "team");
    assert_string_equal(m->metadata[1]->value, "a");
    assert_non_null(m->network);
    assert_string_equal(m->network->default_, "allow");
    assert_int_equal(m->network->n_deny_ports, 1);
    assert_int_equal(m->network->deny_ports[0], 25);
    assert_true(m->network->allow_ech);
    assert_true(m->network->inspect_tls);
    /* It packs: every pointer is valid. */
    uint8_t buf[1024];
    assert_true(airlock__v1__sandbox__get_packed_size(m) < sizeof(buf));
    airlock__v1__sandbox__pack(m, buf);
    grpc_arena_free(&a);

    sb.network = NULL; /* none set */
    m = grpc_sandbox_msg(&a, &sb);
    assert_null(m->network);
    grpc_arena_free(&a);
}

static void template_spec_to_json(void **state)
{
    (void)state;
    char err[256];
    char *out = grpc_template_spec_json(NULL, err, sizeof(err));
    assert_string_equal(out, "{}"); /* the scheduler then says name: required */
    free(out);

    uint8_t text[] = "hi\n", binary[] = { 0, 1, 0xff };
    Airlock__V1__TemplateFile f0 = AIRLOCK__V1__TEMPLATE_FILE__INIT, f1 = AIRLOCK__V1__TEMPLATE_FILE__INIT;
    f0.path = "/a";
    f0.content = (ProtobufCBinaryData){ 3, text };
    f1.path = "/b";
    f1.content = (ProtobufCBinaryData){ sizeof(binary), binary };
    f1.mode = 0600;
    Airlock__V1__TemplateFile *files[] = { &f0, &f1 };
    char *run[] = { "true", "" };
    Airlock__V1__TemplateSpec m = AIRLOCK__V1__TEMPLATE_SPEC__INIT;
    m.name = "web";
    m.files = files;
    m.n_files = 2;
    m.run = run;
    m.n_run = 2;
    m.memory_mb = 1024;
    out = grpc_template_spec_json(&m, err, sizeof(err));
    assert_non_null(out);
    json_t *j = json_loads(out, 0, NULL);
    free(out);
    /* Zero fields left out (defaults apply); text as content, bytes as
     * content_b64; every run command kept, so the scheduler names run[1]. */
    assert_int_equal(json_object_size(j), 4);
    assert_string_equal(json_string_value(json_object_get(j, "name")), "web");
    assert_int_equal(json_integer_value(json_object_get(j, "memory_mb")), 1024);
    assert_int_equal(json_array_size(json_object_get(j, "run")), 2);
    json_t *jf = json_object_get(j, "files");
    assert_string_equal(json_string_value(json_object_get(json_array_get(jf, 0), "content")), "hi\n");
    assert_null(json_object_get(json_array_get(jf, 0), "mode"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(jf, 1), "content_b64")),
                        "AAH/");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(jf, 1), "mode")), 0600);
    json_decref(j);

    /* Strings that are not UTF-8 are refused by field name. */
    run[1] = "\xff";
    assert_null(grpc_template_spec_json(&m, err, sizeof(err)));
    assert_non_null(strstr(err, "run[1]: must be UTF-8"));
    run[1] = "";
    f0.path = "/\xc3";
    assert_null(grpc_template_spec_json(&m, err, sizeof(err)));
    assert_non_null(strstr(err, "files[0].path"));
    f0.path = "/a";
    m.workdir = "\xfe";
    assert_null(grpc_template_spec_json(&m, err, sizeof(err)));
    assert_non_null(strstr(err, "workdir: must be UTF-8"));
}

static void template_from_scheduler(void **state)
{
    (void)state;
    Airlock__Scheduler__V1__Template t = AIRLOCK__SCHEDULER__V1__TEMPLATE__INIT;
    t.name = "web";
    t.version = 3;
    t.node_id = "n1";
    t.cpus = 2;
    t.memory_mb = 1024;
    t.spec_json = "{\"name\":\"web\"}";
    t.created_unix_ms = 1700000000123;
    Airlock__Scheduler__V1__Template *list[] = { &t };
    struct grpc_arena a = { 0 };
    Airlock__V1__Template **out = grpc_template_list(&a, list, 1);
    assert_non_null(out);
    assert_string_equal(out[0]->ref, "web:3");
    assert_string_equal(out[0]->node, "n1");
    assert_string_equal(out[0]->created_at, "2023-11-14T22:13:20.123Z");
    assert_string_equal(out[0]->spec_json, t.spec_json);
    assert_int_equal(out[0]->memory_mb, 1024);
    grpc_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(map_to_json),
        cmocka_unit_test(network_to_policy),
        cmocka_unit_test(sandbox_from_scheduler),
        cmocka_unit_test(template_spec_to_json),
        cmocka_unit_test(template_from_scheduler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
