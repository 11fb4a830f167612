/* vmhost's sandbox_net: the namespace, the TAP and the rules exist after
 * create, a TAP fd can be opened again and again (restores), and delete
 * leaves nothing behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "sandbox_net.h"
#include "sandbox_netdefs.h"
#include "test_proc.h"

#define SB "nettest-sbnet"

static char *run_in_ns(const char *cmd)
{
    char full[512], err[1024];
    snprintf(full, sizeof(full), "ip netns exec " SANDBOX_NET_NS_PREFIX SB " %s", cmd);
    const char *argv[] = { "sh", "-c", full, NULL };
    char *out = NULL;
    if (run_command(argv, NULL, &out, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        free(out);
        return NULL;
    }
    return out;
}

static void test_create_builds_namespace_tap_and_rules(void **state)
{
    (void)state;
    char err[512], path[256];
    assert_int_equal(sandbox_net_create(SB, err, sizeof(err)), 0);
    assert_int_equal(sandbox_net_netns_path(SB, path, sizeof(path)), 0);
    assert_string_equal(path, "/run/netns/airlock-" SB);
    assert_int_equal(access(path, F_OK), 0);
    /* A second create of the same sandbox fails instead of sharing. */
    assert_int_equal(sandbox_net_create(SB, err, sizeof(err)), -1);

    char *links = run_in_ns("ip -o link show");
    assert_non_null(links);
    assert_non_null(strstr(links, SANDBOX_NET_TAP_NAME ":"));
    assert_non_null(strstr(links, "link/ether " SANDBOX_NET_GATEWAY_MAC));
    /* Only loopback and the TAP. */
    size_t lines = 0;
    for (const char *p = links; (p = strchr(p, '\n')); p++)
        lines++;
    assert_int_equal(lines, 2);
    free(links);

    char *addrs = run_in_ns("ip -o -4 addr show dev " SANDBOX_NET_TAP_NAME);
    assert_non_null(addrs);
    assert_non_null(strstr(addrs, SANDBOX_NET_GATEWAY_ADDR "/30"));
    free(addrs);

    char *rules = run_in_ns("nft list table inet airlock");
    assert_non_null(rules);
    assert_non_null(strstr(rules, "redirect to :15001"));
    assert_non_null(strstr(rules, "redirect to :15053"));
    free(rules);

    struct sandbox_net_counters c;
    assert_int_equal(sandbox_net_counters(SB, &c, err, sizeof(err)), 0);
    assert_int_equal(c.dropped_udp + c.dropped_icmp + c.dropped_ipv6 + c.dropped_other, 0);
}

static void test_tap_fd_opens_repeatedly(void **state)
{
    (void)state;
    char err[512];
    for (int i = 0; i < 2; i++) {
        int fd = -1;
        assert_int_equal(sandbox_net_open_tap(SB, &fd, err, sizeof(err)), 0);
        assert_true(fd >= 0);
        close(fd);
    }
    /* The TAP is persistent: closing the fds did not remove it. */
    char *links = run_in_ns("ip -o link show " SANDBOX_NET_TAP_NAME);
    assert_non_null(links);
    free(links);
}

static void test_delete_leaves_nothing(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(sandbox_net_delete(SB, err, sizeof(err)), 0);
    assert_int_equal(access("/run/netns/airlock-" SB, F_OK), -1);
    int fd;
    assert_int_equal(sandbox_net_open_tap(SB, &fd, err, sizeof(err)), -1);
    /* Idempotent: deleting again is fine. */
    assert_int_equal(sandbox_net_delete(SB, err, sizeof(err)), 0);
}

static int cleanup(void **state)
{
    (void)state;
    sandbox_net_delete(SB, NULL, 0);
    return 0;
}

int main(void)
{
    if (!test_have_root("test_sandbox_net", "network namespaces, nftables"))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_builds_namespace_tap_and_rules),
        cmocka_unit_test(test_tap_fd_opens_repeatedly),
        cmocka_unit_test(test_delete_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, cleanup, cleanup);
}
