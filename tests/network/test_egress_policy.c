/* Policy building blocks without namespaces: names, CIDRs, rule order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "cidr.h"
#include "names.h"
#include "policy.h"

static void test_cidr_accepts_only_dotted_quads(void **state)
{
    (void)state;
    struct cidr c;
    assert_int_equal(cidr_parse("198.51.100.0/24", &c), 0);
    assert_true(cidr_contains(&c, 0xc6336407));
    assert_false(cidr_contains(&c, 0xc6336507));
    /* Encodings that resolvers and inet_aton accept for 127.0.0.1. */
    const char *bad[] = { "2130706433", "0x7f.1", "0177.0.0.1", "127.1", "127.0.0.1/33",
                          "198.51.100.1/24", "198.51.100.0/", "", "1.2.3.4/-1" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(cidr_parse(bad[i], &c), -1);
    assert_true(addr_is_reserved(0x7f000001));  /* 127.0.0.1 */
    assert_true(addr_is_reserved(0xa9fea9fe));  /* 169.254.169.254 */
    assert_true(addr_is_reserved(0x64600001));  /* 100.96.0.1, the sandbox gateway */
    assert_false(addr_is_reserved(0xc633640a)); /* 198.51.100.10 */
}

static void test_names_normalize_and_match(void **state)
{
    (void)state;
    char n[NAME_MAX_LEN + 1];
    assert_int_equal(name_normalize("WWW.Example.TEST.", 17, n), 0);
    assert_string_equal(n, "www.example.test");
    assert_int_equal(name_normalize("a..b", 4, n), -1);
    assert_int_equal(name_normalize("a b", 3, n), -1);
    assert_int_equal(name_normalize("a\0b", 3, n), -1);
    assert_true(name_matches("*.example.test", "a.b.example.test"));
    assert_false(name_matches("*.example.test", "example.test"));
    assert_false(name_matches("*.example.test", "badexample.test"));
    assert_false(name_matches("example.test", "www.example.test"));
}

static void test_never_reachable_ranges(void **state)
{
    (void)state;
    assert_true(addr_is_never_reachable(0x00000000));  /* 0.0.0.0 */
    assert_true(addr_is_never_reachable(0x7f000001));  /* 127.0.0.1 */
    assert_true(addr_is_never_reachable(0xa9fea9fe));  /* 169.254.169.254 */
    assert_false(addr_is_never_reachable(0x0a090909)); /* 10.9.9.9: private, openable */
    assert_false(addr_is_never_reachable(0xcb007105)); /* 203.0.113.5 */
}

static void test_rule_order(void **state)
{
    (void)state;
    char *allow_domains[] = { "allowed.test" }, *deny_domains[] = { "bad.test" };
    char *allow_cidrs[] = { "198.51.100.0/24" };
    Airlock__Egress__V1__Policy msg = AIRLOCK__EGRESS__V1__POLICY__INIT;
    msg.n_allow_domains = 1;
    msg.allow_domains = allow_domains;
    msg.n_deny_domains = 1;
    msg.deny_domains = deny_domains;
    msg.n_allow_cidrs = 1;
    msg.allow_cidrs = allow_cidrs;
    char err[256];
    struct egress_policy *p = egress_policy_from_proto(&msg, err, sizeof(err));
    assert_non_null(p);
    /* deny_domains needs the name before allow_cidrs may decide. */
    struct egress_target t = { .addr = 0xc633640a, .port = 443 };
    assert_int_equal(egress_policy_check_connection(p, &t).verdict, EGRESS_NEED_NAME);
    t.name_known = true;
    t.name = "bad.test";
    assert_string_equal(egress_policy_check_connection(p, &t).reason, "deny_domains");
    t.name = NULL;
    assert_string_equal(egress_policy_check_connection(p, &t).reason, "allow_cidrs");
    t.addr = 0x0a090909;
    t.name = "allowed.test";
    t.name_pinned = true;
    assert_string_equal(egress_policy_check_connection(p, &t).reason, "reserved_range");
    t.addr = 0xcb007105; /* 203.0.113.5 */
    assert_string_equal(egress_policy_check_connection(p, &t).reason, "allow_domains");
    t.name_pinned = false;
    assert_string_equal(egress_policy_check_connection(p, &t).reason,
                        "name_not_resolved_to_destination");
    /* Protection comes before every rule: allow_cidrs names 198.51.100/24,
     * yet a protected address in it stays closed, to connections and to
     * DNS answers alike. */
    t.addr = 0xc633640a;
    t.protected_reason = "host_address";
    assert_string_equal(egress_policy_check_connection(p, &t).reason, "host_address");
    assert_int_equal(egress_policy_check_answer(p, t.addr, "protected_range").verdict,
                     EGRESS_DENY);
    assert_string_equal(egress_policy_check_answer(p, t.addr, NULL).reason, "allow_cidrs");
    egress_policy_put(p);

    msg.allow_ports = (uint32_t[]){ 70000 };
    msg.n_allow_ports = 1;
    assert_null(egress_policy_from_proto(&msg, err, sizeof(err)));
    assert_non_null(strstr(err, "policy.allow_ports[0]"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cidr_accepts_only_dotted_quads),
        cmocka_unit_test(test_names_normalize_and_match),
        cmocka_unit_test(test_never_reachable_ranges),
        cmocka_unit_test(test_rule_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
