/* Two vmhosts on one machine, each on a data directory of its own, as a
 * local cluster runs them (`make up NODES=N`, the test stack's nodes;
 * docs/operations.md "A local cluster"). Each keeps a warm pool, whose VMs
 * have no record, so they are what a vmhost removes at start as leftovers
 * of a crash:
 * - a kill -9 and restart of one removes only its own leftovers: the
 *   other's sandbox, pooled VM and namespaces stay, and its sandbox runs;
 * - a second vmhost on a data directory in use (here `build-image`, which
 *   opens the store as `serve` does, then exits) is refused at start and
 *   leaves the first's VMs alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

#define POOL_READY_MS 300000

static struct itest_vmhost other; /* the second node; itest_vh is the first */
static const char *const pool_args[] = { "--warm-pool", "1", NULL };

static int group_setup(void **state)
{
    (void)state;
    return itest_vmhost_start(&itest_vh, pool_args) < 0 ||
                   itest_vmhost_start(&other, pool_args) < 0
               ? -1
               : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    int rc = other.data_dir[0] && itest_vmhost_stop(&other) < 0 ? -1 : 0;
    return itest_group_teardown(state) < 0 ? -1 : rc;
}

static void test_restart_removes_only_its_own_leftovers(void **state)
{
    (void)state;
    char *id = itest_assert_create(&other);
    assert_true(itest_wait_pool_ready(&other, 1, POOL_READY_MS));
    assert_true(itest_wait_pool_ready(&itest_vh, 1, POOL_READY_MS));
    size_t other_qemus = itest_count_qemus(other.data_dir);
    assert_int_equal(other_qemus, 2); /* the sandbox and the pooled VM */

    /* The first node's pooled VM is a leftover for its next start. */
    assert_int_equal(itest_vmhost_crash_and_restart_with(&itest_vh, pool_args), 0);
    assert_true(itest_wait_pool_ready(&itest_vh, 1, POOL_READY_MS));

    assert_int_equal(itest_count_qemus(other.data_dir), other_qemus);
    assert_true(itest_netns_exists(id));
    free(itest_assert_sh(&other, id, "true"));
    Airlock__Vmhost__V1__NodeStats *stats = itest_node_stats(&other);
    assert_non_null(stats);
    assert_int_equal(stats->pool_ready, 1);
    protobuf_c_message_free_unpacked(&stats->base, NULL);
    assert_int_equal(itest_delete_sandbox(&other, id), GRPC_STATUS_OK);
    assert_false(itest_netns_exists(id));
    free(id);
}

static void test_second_vmhost_on_a_data_dir_is_refused(void **state)
{
    (void)state;
    assert_true(itest_wait_pool_ready(&itest_vh, 1, POOL_READY_MS));
    size_t qemus = itest_count_qemus(itest_vh.data_dir);
    const char *const argv[] = { AIRLOCK_VMHOST_BIN, "build-image", "--data-dir",
                                 itest_vh.data_dir, "--image-dir", itest_vh.image_dir,
                                 "--guestd", AIRLOCK_GUESTD_BIN, NULL };
    char *output = NULL, err[4096];
    assert_int_equal(run_command(argv, NULL, &output, err, sizeof(err)), -1);
    assert_non_null(output);
    if (!strstr(output, "is in use by another vmhost"))
        fail_msg("build-image on a data directory in use: %s", output);
    assert_non_null(strstr(output, itest_vh.data_dir));
    free(output);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), qemus);
    assert_true(itest_wait_pool_ready(&itest_vh, 1, POOL_READY_MS));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restart_removes_only_its_own_leftovers),
        cmocka_unit_test(test_second_vmhost_on_a_data_dir_is_refused),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
