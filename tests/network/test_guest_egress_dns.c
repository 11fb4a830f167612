/* egress from inside a real guest, part 2: DNS. Same lab as
 * test_guest_egress (support/guest_lab.h). Besides the guest's answer and
 * egress's log, each technique checks what the test DNS server upstream
 * saw: a query egress refuses must never leave it (no tunnelling through
 * the resolver). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest_lab.h"
#include "netlab.h"

#define DNS_TYPE_TXT 16
#define DNS_TYPE_AAAA 28
#define DNS_TYPE_ANY 255

/* Runs dnsq.py with args in the guest; the output must be want. */
static void expect_dns(const char *args, int want_code, const char *want)
{
    char script[1024], out[256];
    snprintf(script, sizeof(script), "python3 /tmp/dnsq.py %s", args);
    int code = guest_sh(script, out, sizeof(out));
    if (code != want_code || strcmp(out, want) != 0)
        fprintf(stderr, "%s: exit %d, %s (wanted exit %d, %s)\n", script, code, out, want_code,
                want);
    assert_int_equal(code, want_code);
    assert_string_equal(out, want);
}

static void test_denied_name_is_nxdomain(void **state)
{
    (void)state;
    uint64_t mark = guest_log_mark();
    unsigned upstream = netlab_dns_queries("denied.test");
    /* getent: 2 = not found */
    assert_int_equal(guest_sh("getent hosts denied.test", NULL, 0), 2);
    assert_int_equal(guest_sh("getent hosts allowed.test", NULL, 0), 0);
    expect_dns("denied.test 100.96.0.1 udp", 1, "rcode=3 answers=0\n");
    assert_true(guest_logged(mark, "dns", "denied.test", false, "default_deny"));
    assert_int_equal(netlab_dns_queries("denied.test"), upstream);
}

static void test_name_spellings_are_one_name(void **state)
{
    (void)state;
    /* Case and a trailing dot do not make another name; neither do
     * look-alikes around an allowed one. */
    const char *names[] = { "DENIED.Test", "denied.TEST", "allowed.test.denied.test",
                            "xallowed.test", "allowed.test.evil" };
    unsigned upstream = netlab_dns_queries(NULL);
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        char args[128];
        snprintf(args, sizeof(args), "%s 100.96.0.1 udp", names[i]);
        expect_dns(args, 1, "rcode=3 answers=0\n");
    }
    assert_int_equal(netlab_dns_queries(NULL), upstream);
}

static void test_other_dns_servers_get_egress_answers(void **state)
{
    (void)state;
    /* Any resolver address is egress's DNS: same policy, same answers. */
    uint64_t mark = guest_log_mark();
    expect_dns("denied.test " NETLAB_DNS " udp", 1, "rcode=3 answers=0\n");
    expect_dns("denied.test 192.0.2.99 udp", 1, "rcode=3 answers=0\n");
    assert_true(guest_logged(mark, "dns", "denied.test", false, NULL));
    expect_dns("allowed.test 192.0.2.99 udp", 0, "rcode=0 answers=1\n");
}

static void test_dns_over_tcp_is_refused(void **state)
{
    (void)state;
    /* TCP/53 is redirected to egress's TCP listener like any other port;
     * this policy allows only ports 80 and 443, so the port rule refuses
     * it first (without port rules it is an IP literal: test_egress). */
    expect_tcp_denied("python3 /tmp/dnsq.py denied.test " NETLAB_DNS " tcp", NETLAB_DNS,
                      "port_not_allowed");
}

static void test_txt_and_any_queries_are_refused(void **state)
{
    (void)state;
    /* Record types other than A could carry data back from a resolver a
     * denied domain controls: refused even for an allowed name, and never
     * asked upstream. */
    uint64_t mark = guest_log_mark();
    unsigned upstream = netlab_dns_queries(NULL);
    char args[128];
    snprintf(args, sizeof(args), "allowed.test 100.96.0.1 udp %d", DNS_TYPE_TXT);
    expect_dns(args, 1, "rcode=5 answers=0\n");
    snprintf(args, sizeof(args), "allowed.test 100.96.0.1 udp %d", DNS_TYPE_ANY);
    expect_dns(args, 1, "rcode=5 answers=0\n");
    assert_true(guest_logged(mark, "dns", "allowed.test", false, "qtype_not_supported"));
    assert_int_equal(netlab_dns_queries(NULL), upstream);
}

static void test_aaaa_gets_an_empty_answer(void **state)
{
    (void)state;
    /* No IPv6 leaves a sandbox: an empty answer, nothing asked upstream. */
    unsigned upstream = netlab_dns_queries("allowed.test");
    char args[128];
    snprintf(args, sizeof(args), "allowed.test 100.96.0.1 udp %d", DNS_TYPE_AAAA);
    expect_dns(args, 0, "rcode=0 answers=0\n");
    assert_int_equal(netlab_dns_queries("allowed.test"), upstream);
}

static void test_exfiltration_in_names_never_leaves(void **state)
{
    (void)state;
    /* Data encoded into labels under a denied domain, the classic DNS
     * tunnel: NXDOMAIN from egress, and the upstream resolver (which a
     * tunnel's owner would watch) never sees the name. */
    const char *names[] = {
        /* hex and base32 of "secret-token", the longest label (63 bytes) */
        "7365637265742d746f6b656e.denied.test",
        "onswg4tfoqwxi33lmvxa0123456789abcdefghijklmnopqrstuvwxyzabcdefg.c1.denied.test",
        "x.y.z.1.2.3.exfil.example",
    };
    uint64_t mark = guest_log_mark();
    unsigned upstream = netlab_dns_queries(NULL);
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        char args[256];
        snprintf(args, sizeof(args), "%s 100.96.0.1 udp", names[i]);
        expect_dns(args, 1, "rcode=3 answers=0\n");
        snprintf(args, sizeof(args), "%s 100.96.0.1 udp %d", names[i], DNS_TYPE_TXT);
        expect_dns(args, 1, "rcode=3 answers=0\n");
        assert_true(guest_logged(mark, "dns", names[i], false, "default_deny"));
    }
    assert_int_equal(netlab_dns_queries(NULL), upstream);
    /* A label over 63 bytes is not DNS at all: FORMERR. */
    char longest[128];
    memset(longest, 'a', 70);
    snprintf(longest + 70, sizeof(longest) - 70, ".denied.test 100.96.0.1 udp");
    expect_dns(longest, 1, "rcode=1 answers=0\n");
    assert_int_equal(netlab_dns_queries(NULL), upstream);
}

static void test_malformed_and_oversized_queries(void **state)
{
    (void)state;
    uint64_t mark = guest_log_mark();
    unsigned upstream = netlab_dns_queries(NULL);
    /* An EDNS query padded to 3000 bytes for a denied name. */
    expect_dns("denied.test 100.96.0.1 udp 1 3000", 1, "rcode=3 answers=0\n");
    /* Two questions in one query (allowed + the same again): FORMERR, and
     * nothing asked upstream. */
    expect_dns("allowed.test 100.96.0.1 udp 1 0 2", 1, "rcode=1 answers=0\n");
    assert_true(guest_logged(mark, "dns", "", false, "malformed_query"));
    assert_int_equal(netlab_dns_queries(NULL), upstream);
}

static void test_rebinding_to_a_private_address(void **state)
{
    (void)state;
    /* flip.test is allowed; upstream answers a public address first, then
     * a private one (DNS rebinding). The second answer is refused and
     * nothing pins the name to the private address. */
    char out[256];
    uint64_t mark = guest_log_mark();
    assert_int_equal(guest_sh("getent ahostsv4 flip.test | head -n 1", out, sizeof(out)), 0);
    assert_non_null(strstr(out, NETLAB_WEB1));
    expect_dns("flip.test 100.96.0.1 udp", 1, "rcode=5 answers=0\n");
    assert_true(guest_logged(mark, "dns", "flip.test", false, "reserved_range"));
    assert_true(netlab_dns_queries("flip.test") >= 2);
    /* Claiming the name on the private address gets nowhere. */
    expect_tcp_denied(GUEST_CURL "--resolve flip.test:80:" NETLAB_PRIVATE " http://flip.test/",
                      NETLAB_PRIVATE, "reserved_range");
}

static void test_allowed_names_answering_internal_addresses(void **state)
{
    (void)state;
    /* Allowed names whose upstream answer is loopback, the metadata
     * address or egress's own address: refused, never handed out. */
    const struct {
        const char *name, *reason;
    } names[] = { { "loop.test", "protected_range" },
                  { "metadata.test", "protected_range" },
                  { "uplink.test", "host_address" } };
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        uint64_t mark = guest_log_mark();
        char script[128], args[128];
        snprintf(script, sizeof(script), "getent hosts %s", names[i].name);
        assert_int_equal(guest_sh(script, NULL, 0), 2);
        snprintf(args, sizeof(args), "%s 100.96.0.1 udp", names[i].name);
        expect_dns(args, 1, "rcode=5 answers=0\n");
        assert_true(guest_logged(mark, "dns", names[i].name, false, names[i].reason));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_denied_name_is_nxdomain),
        cmocka_unit_test(test_name_spellings_are_one_name),
        cmocka_unit_test(test_other_dns_servers_get_egress_answers),
        cmocka_unit_test(test_dns_over_tcp_is_refused),
        cmocka_unit_test(test_txt_and_any_queries_are_refused),
        cmocka_unit_test(test_aaaa_gets_an_empty_answer),
        cmocka_unit_test(test_exfiltration_in_names_never_leaves),
        cmocka_unit_test(test_malformed_and_oversized_queries),
        cmocka_unit_test(test_rebinding_to_a_private_address),
        cmocka_unit_test(test_allowed_names_answering_internal_addresses),
    };
    return GUEST_LAB_RUN(tests);
}
