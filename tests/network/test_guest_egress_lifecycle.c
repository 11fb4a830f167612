/* egress across a sandbox's and egress's own lifecycle, with real guests
 * (support/guest_lab.h): a fork gets its parent's policy as it is now; a
 * create egress refuses (an invalid policy, egress down) fails with a
 * clear status and leaves nothing behind; and when egress dies and comes
 * back, vmhost attaches its sandboxes again with their current policies,
 * so allowed names work again and denied ones stay denied. egress is a
 * process this test started: it is killed by its pid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "guest_lab.h"
#include "netlab.h"

#define assert_prefix(s, prefix) assert_int_equal(strncmp((s), (prefix), strlen(prefix)), 0)
#define REATTACH_TIMEOUT_MS 60000

/* The sandbox reaches other.test (allowed by its current policy) and not
 * denied.test, and egress logged both. */
static void expect_current_policy(const char *id)
{
    char out[512];
    uint64_t mark = guest_log_mark_in(id);
    unsigned accepted = netlab_tcp_accepted();
    assert_int_equal(guest_sh_in(id, GUEST_CURL "http://other.test/", out, sizeof(out)), 0);
    assert_prefix(out, "HELLO " NETLAB_WEB2 ":80 got=");
    assert_int_equal(guest_sh_in(id, GUEST_CURL "http://denied.test/", out, sizeof(out)), 6);
    assert_int_equal(netlab_tcp_accepted(), accepted + 1);
    assert_true(guest_logged_in(id, mark, "tcp", "other.test", true, "allow_domains"));
    assert_true(guest_logged_in(id, mark, "dns", "denied.test", false, "default_deny"));
}

static void test_fork_gets_the_parents_current_policy(void **state)
{
    (void)state;
    /* Changed after the create: the fork must get this one. */
    Airlock__Egress__V1__Policy p;
    guest_lab_policy(&p, "other.test");
    assert_int_equal(guest_lab_set_policy(lab.sandbox_id, &p, NULL), GRPC_STATUS_OK);
    Airlock__Vmhost__V1__ForkSandboxRequest req = AIRLOCK__VMHOST__V1__FORK_SANDBOX_REQUEST__INIT;
    req.sandbox_id = lab.sandbox_id;
    req.count = 1;
    Airlock__Vmhost__V1__ForkSandboxResponse *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(lab.vh.ch, ITEST_METHOD("ForkSandbox"), &req.base,
                                    &airlock__vmhost__v1__fork_sandbox_response__descriptor,
                                    (ProtobufCMessage **)&resp, &details, ITEST_CALL_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        fprintf(stderr, "ForkSandbox: %s\n", details ? details : "");
    free(details);
    assert_int_equal(st, GRPC_STATUS_OK);
    assert_int_equal(resp->n_sandboxes, 1);
    char fork_id[65];
    snprintf(fork_id, sizeof(fork_id), "%s", resp->sandboxes[0]->id);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    expect_current_policy(fork_id);
    assert_int_equal(itest_delete_sandbox(&lab.vh, fork_id), GRPC_STATUS_OK);
}

/* Nothing of sandbox id is left: not in vmhost, no namespace, no files
 * under vmhost's data directory, no QEMU beyond the ones before. */
static void expect_no_trace(const char *id, size_t qemus_before)
{
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb = itest_sandbox_call(&lab.vh, ITEST_METHOD("GetSandbox"), id,
                                                          &st, NULL);
    assert_null(sb);
    assert_int_equal(st, GRPC_STATUS_NOT_FOUND);
    char ns[256];
    assert_int_equal(sandbox_net_netns_path(id, ns, sizeof(ns)), 0);
    assert_int_equal(access(ns, F_OK), -1);
    char script[PATH_MAX + 128], out[256];
    snprintf(script, sizeof(script), "find %s -name %s | head -n 1", lab.vh.data_dir, id);
    FILE *f = popen(script, "r");
    assert_non_null(f);
    out[0] = '\0';
    if (!fgets(out, sizeof(out), f))
        out[0] = '\0';
    pclose(f);
    assert_string_equal(out, "");
    assert_int_equal(itest_count_qemus(lab.vh.data_dir), qemus_before);
}

static void expect_create_refused(const char *id, const Airlock__Egress__V1__Policy *p,
                                  grpc_status_code want, const char *fragment)
{
    size_t qemus = itest_count_qemus(lab.vh.data_dir);
    char *details = NULL;
    grpc_status_code st = guest_lab_try_create(id, p, &details);
    if (st != want || !details || !strstr(details, fragment))
        fprintf(stderr, "CreateSandbox: %s %s\n", rpc_status_name(st), details ? details : "");
    assert_int_equal(st, want);
    assert_non_null(details);
    assert_non_null(strstr(details, fragment));
    free(details);
    expect_no_trace(id, qemus);
}

static void test_create_with_a_policy_egress_refuses_leaves_nothing(void **state)
{
    (void)state;
    Airlock__Egress__V1__Policy p;
    guest_lab_policy(&p, NULL);
    char *bad[] = { "198.51.100.0/33" };
    p.n_deny_cidrs = 1;
    p.deny_cidrs = bad;
    char id[64];
    snprintf(id, sizeof(id), "%s-badpolicy", lab.sandbox_id);
    expect_create_refused(id, &p, GRPC_STATUS_INVALID_ARGUMENT, "deny_cidrs[0]");
}

static void test_create_while_egress_is_down_leaves_nothing(void **state)
{
    (void)state;
    /* A crash, not a stop: the sandbox's attachment dies with it. */
    assert_int_equal(guest_lab_egress_stop(SIGKILL), 0);
    Airlock__Egress__V1__Policy p;
    guest_lab_policy(&p, NULL);
    char id[64];
    snprintf(id, sizeof(id), "%s-noegress", lab.sandbox_id);
    expect_create_refused(id, &p, GRPC_STATUS_UNAVAILABLE, "egress");
}

/* Polls egress until it knows the sandbox again (vmhost's re-attach),
 * bounded. */
static bool wait_attached(const char *id)
{
    int64_t deadline = clock_monotonic_ms() + REATTACH_TIMEOUT_MS;
    for (;;) {
        Airlock__Egress__V1__ListConnectionsRequest req =
            AIRLOCK__EGRESS__V1__LIST_CONNECTIONS_REQUEST__INIT;
        req.sandbox_id = (char *)id;
        ProtobufCMessage *resp = NULL;
        grpc_status_code st =
            rpc_unary(lab.egress, "/airlock.egress.v1.Egress/ListConnections", &req.base,
                      &airlock__egress__v1__list_connections_response__descriptor, &resp, NULL,
                      GUEST_LAB_CALL_TIMEOUT_MS);
        if (resp)
            protobuf_c_message_free_unpacked(resp, NULL);
        if (st == GRPC_STATUS_OK)
            return true;
        if (clock_monotonic_ms() > deadline) {
            fprintf(stderr, "egress still does not know %s: %s\n", id, rpc_status_name(st));
            itest_vmhost_print_log_tail(&lab.vh);
            return false;
        }
        usleep(100 * 1000);
    }
}

static void test_restarted_egress_gets_every_sandbox_back(void **state)
{
    (void)state;
    assert_int_equal(guest_lab_egress_start(), 0);
    assert_true(wait_attached(lab.sandbox_id));
    /* With the policy it has now (other.test added after the create), not
     * the one it was created with; denied names stay denied. */
    expect_current_policy(lab.sandbox_id);
    char out[512];
    assert_int_equal(guest_sh(GUEST_CURL "http://allowed.test/", out, sizeof(out)), 0);
    assert_prefix(out, "HELLO " NETLAB_WEB1 ":80 got=");
    expect_tcp_denied(GUEST_CURL "http://" NETLAB_WEB3 "/", NETLAB_WEB3,
                      "name_not_resolved_to_destination");
    /* And a new sandbox can be created again. */
    char id[64];
    snprintf(id, sizeof(id), "%s-after", lab.sandbox_id);
    Airlock__Egress__V1__Policy p;
    guest_lab_policy(&p, NULL);
    assert_int_equal(guest_lab_create_sandbox(id, &p), 0);
    assert_int_equal(guest_sh_in(id, GUEST_CURL "http://allowed.test/", out, sizeof(out)), 0);
    assert_int_equal(itest_delete_sandbox(&lab.vh, id), GRPC_STATUS_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_gets_the_parents_current_policy),
        cmocka_unit_test(test_create_with_a_policy_egress_refuses_leaves_nothing),
        cmocka_unit_test(test_create_while_egress_is_down_leaves_nothing),
        cmocka_unit_test(test_restarted_egress_gets_every_sandbox_back),
    };
    return GUEST_LAB_RUN(tests);
}
