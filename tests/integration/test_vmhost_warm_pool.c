/* The warm pool on a real vmhost started with --warm-pool 2: creates
 * without an id are served from the pool (from_pool), the pool refills in
 * the background, pooled sandboxes still get their own entropy, uuid and
 * hostname, a create that names its id restores as before, and GetNodeStats
 * reports all of it. The group teardown fails if vmhost leaves a VM, mount
 * or loop device behind (pooled VMs included). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define POOL_SIZE 2
#define POOL_FILL_TIMEOUT_MS 180000

static struct itest_vmhost vh;

static int group_setup(void **state)
{
    (void)state;
    const char *const args[] = { "--warm-pool", "2", NULL };
    return itest_vmhost_start(&vh, args);
}

static int group_teardown(void **state)
{
    (void)state;
    return itest_vmhost_stop(&vh);
}

static Airlock__Vmhost__V1__NodeStats *node_stats(void)
{
    Airlock__Vmhost__V1__NodeStats *st = itest_node_stats(&vh);
    assert_non_null(st);
    return st;
}

static void wait_pool_full(void)
{
    assert_true(itest_wait_pool_ready(&vh, POOL_SIZE, POOL_FILL_TIMEOUT_MS));
}

static Airlock__Vmhost__V1__Sandbox *get_sandbox(const char *id)
{
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb = itest_sandbox_call(&vh, ITEST_METHOD("GetSandbox"), id, &st,
                                                          NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    return sb;
}

/* "random-hex uuid hostname" of a guest, malloc'd. */
static char *guest_identity(const char *id)
{
    struct itest_exec_result r;
    itest_sh(&vh, id,
             "head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n'; echo;"
             "cat /proc/sys/kernel/random/uuid; hostname",
             &r);
    assert_int_equal(r.status, GRPC_STATUS_OK);
    assert_int_equal(r.exit_code, 0);
    char *out = strdup((char *)r.out);
    itest_exec_result_free(&r);
    return out;
}

static void test_pool_fills_and_reports(void **state)
{
    (void)state;
    wait_pool_full();
    Airlock__Vmhost__V1__NodeStats *st = node_stats();
    assert_int_equal(st->pool_target, POOL_SIZE);
    assert_int_equal(st->sandboxes, 0); /* pooled VMs are not sandboxes yet */
    assert_int_equal(st->free_slots, st->max_sandboxes);
    protobuf_c_message_free_unpacked(&st->base, NULL);
    assert_int_equal(itest_count_qemus(vh.data_dir), POOL_SIZE);
}

static void test_creates_come_from_pool_and_diverge(void **state)
{
    (void)state;
    wait_pool_full();
    char *a = itest_create_sandbox(&vh, NULL, NULL);
    char *b = itest_create_sandbox(&vh, NULL, NULL);
    assert_non_null(a);
    assert_non_null(b);
    char *ids[] = { a, b };
    for (int i = 0; i < 2; i++) {
        Airlock__Vmhost__V1__Sandbox *sb = get_sandbox(ids[i]);
        assert_true(sb->from_pool);
        assert_true(sb->restored);
        assert_int_equal(sb->state, AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_RUNNING);
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    }
    Airlock__Vmhost__V1__NodeStats *st = node_stats();
    assert_int_equal(st->pool_taken, 2);
    assert_int_equal(st->sandboxes, 2);
    protobuf_c_message_free_unpacked(&st->base, NULL);

    /* Paused together in the pool, reseeded when handed out. */
    char *ga = guest_identity(a);
    char *gb = guest_identity(b);
    char ra[80], ua[40], ha[80], rb[80], ub[40], hb[80];
    assert_int_equal(sscanf(ga, "%79s %39s %79s", ra, ua, ha), 3);
    assert_int_equal(sscanf(gb, "%79s %39s %79s", rb, ub, hb), 3);
    assert_int_equal(strlen(ra), 32);
    assert_string_not_equal(ra, rb);
    assert_string_not_equal(ua, ub);
    assert_string_equal(ha, a);
    assert_string_equal(hb, b);

    /* The pool refills behind the creates. */
    wait_pool_full();
    assert_int_equal(itest_delete_sandbox(&vh, a), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&vh, b), GRPC_STATUS_OK);
    assert_int_equal(itest_count_qemus(vh.data_dir), POOL_SIZE);
    free(ga);
    free(gb);
    free(a);
    free(b);
}

static void test_named_create_restores(void **state)
{
    (void)state;
    wait_pool_full();
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = "named-sandbox";
    char *id = itest_create_sandbox_with(&vh, &req, NULL, NULL);
    assert_non_null(id);
    assert_string_equal(id, "named-sandbox");
    Airlock__Vmhost__V1__Sandbox *sb = get_sandbox(id);
    assert_false(sb->from_pool);
    assert_true(sb->restored);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    Airlock__Vmhost__V1__NodeStats *st = node_stats();
    assert_int_equal(st->pool_ready, POOL_SIZE);
    protobuf_c_message_free_unpacked(&st->base, NULL);
    assert_int_equal(itest_delete_sandbox(&vh, id), GRPC_STATUS_OK);
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_fills_and_reports),
        cmocka_unit_test(test_creates_come_from_pool_and_diverge),
        cmocka_unit_test(test_named_create_restores),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
