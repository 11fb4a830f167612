/* A node's own bounds on what a sandbox may ask of it (issue 14, item 3):
 * sizes within --sandbox-max-vcpus and --sandbox-max-memory-mb, and at most
 * --template-sizes-max sizes of the default template kept as snapshots
 * (each is a memory file as large as its RAM): the least recently used
 * size no sandbox holds goes, its files with it; when each is held, a new
 * size is refused naming the limit and the sizes. And admission by the
 * node's budget (vmhost/node_budget.h), not by a count: running VMs hold
 * vCPUs and memory; a create or resume past them is refused naming what
 * ran out, a suspend gives back, an adopted VM holds what it held. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

#define LIMITS_MAX_VCPUS "2"
#define LIMITS_MAX_MEMORY_MB "1024"
#define LIMITS_SIZES_MAX "2"
#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s

/* Snapshot directories (64 hex digits) in the store's templates. */
static size_t snapshot_dirs(void)
{
    char path[PATH_MAX];
    assert_int_equal(fs_path(path, sizeof(path), "%s/store/templates", itest_vh.data_dir), 0);
    DIR *d = opendir(path);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strspn(de->d_name, "0123456789abcdef");
        n += len == 64 && de->d_name[64] == '\0';
    }
    closedir(d);
    return n;
}

static char *create_sized(unsigned vcpus, unsigned memory_mb, grpc_status_code *st,
                          char **details)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req =
        AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.vcpus = vcpus;
    req.memory_mb = memory_mb;
    char *id = itest_create_sandbox_with(&itest_vh, &req, st, details);
    if (id) { /* details only say why it failed */
        free(*details);
        *details = NULL;
    }
    return id;
}

static void test_sizes_past_the_node_bounds_are_refused(void **state)
{
    (void)state;
    grpc_status_code st;
    char *details = NULL;
    size_t before = snapshot_dirs();
    assert_null(create_sized(3, 512, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_INVALID_ARGUMENT,
                               "vcpus: 3 is more than this node's maximum of 2 "
                               "(--sandbox-max-vcpus)");
    assert_null(create_sized(1, 2048, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_INVALID_ARGUMENT,
                               "memory_mb: 2048 is outside this node's 128..1024 "
                               "(--sandbox-max-memory-mb)");
    assert_int_equal(snapshot_dirs(), before); /* nothing built for a refused size */
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
}

static void test_least_recently_used_size_goes(void **state)
{
    (void)state;
    grpc_status_code st;
    char *details = NULL;
    assert_int_equal(snapshot_dirs(), 1); /* the first size, made at start */

    /* A second size: built, and kept after its sandbox goes. */
    char *a = create_sized(1, 256, &st, &details);
    if (!a)
        fail_msg("create 1x256: %s", details);
    assert_int_equal(snapshot_dirs(), 2);
    assert_int_equal(itest_delete_sandbox(&itest_vh, a), GRPC_STATUS_OK);
    free(a);
    assert_int_equal(snapshot_dirs(), 2);

    /* A third, at the limit of 2: the unused second size goes. */
    char *b = create_sized(1, 384, &st, &details);
    if (!b)
        fail_msg("create 1x384: %s", details);
    assert_int_equal(snapshot_dirs(), 2);

    /* A fourth while the third is held: refused, naming the limit and the
     * sizes; nothing built, nothing left running. */
    assert_null(create_sized(1, 320, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_RESOURCE_EXHAUSTED,
                               "at 2 sizes (--template-sizes-max), each in use: 1 vCPUs/384 MiB, "
                               "1 vCPUs/512 MiB");
    assert_int_equal(snapshot_dirs(), 2);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 1);

    /* The held size still makes sandboxes. */
    char *c = create_sized(1, 384, &st, &details);
    if (!c)
        fail_msg("create 1x384 again: %s", details);
    assert_int_equal(itest_delete_sandbox(&itest_vh, b), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, c), GRPC_STATUS_OK);
    free(b);
    free(c);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
}

static const char *const limits_args[] = { "--sandbox-max-vcpus", LIMITS_MAX_VCPUS,
                                           "--sandbox-max-memory-mb", LIMITS_MAX_MEMORY_MB,
                                           "--template-sizes-max", LIMITS_SIZES_MAX, NULL };

/* Across restarts the bound holds too: a size an adopted sandbox holds
 * stays (and its sandbox works), one nobody holds goes. */
static void test_restart_keeps_only_held_sizes(void **state)
{
    (void)state;
    const char *const three[] = { "--template-sizes-max", "3", NULL };
    assert_int_equal(snapshot_dirs(), 2); /* the first size and 1x384, left unheld above */
    assert_int_equal(itest_vmhost_crash_and_restart_with(&itest_vh, three), 0);
    assert_int_equal(snapshot_dirs(), 1);

    grpc_status_code st;
    char *details = NULL;
    char *held = create_sized(1, 256, &st, &details);
    if (!held)
        fail_msg("create 1x256: %s", details);
    char *unheld = create_sized(1, 384, &st, &details);
    if (!unheld)
        fail_msg("create 1x384: %s", details);
    assert_int_equal(itest_delete_sandbox(&itest_vh, unheld), GRPC_STATUS_OK);
    free(unheld);
    assert_int_equal(snapshot_dirs(), 3);

    /* Back to 2 after a kill -9: the adopted sandbox's size is kept. */
    assert_int_equal(itest_vmhost_crash_and_restart_with(&itest_vh, limits_args), 0);
    assert_int_equal(snapshot_dirs(), 2);
    assert_int_equal(itest_assert_sh_code(&itest_vh, held, "exit 7", NULL, 0), 7);
    assert_int_equal(itest_delete_sandbox(&itest_vh, held), GRPC_STATUS_OK);
    free(held);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
}

/* 1 CPU x 2 = 2 vCPUs; (2560 - 1024) x 1 = 1536 MiB: two default
 * sandboxes (1 vCPU, 512 MiB) fill the vCPUs. */
static const char *const budget_args[] = { "--node-cpus", "1", "--cpu-overcommit", "2",
                                           "--node-memory-mb", "2560", "--memory-overcommit",
                                           "1", "--memory-reserve-mb", "1024", NULL };

static void assert_committed(unsigned vcpus, unsigned long long memory_mb)
{
    Airlock__Vmhost__V1__NodeStats *ns = itest_node_stats(&itest_vh);
    assert_non_null(ns);
    assert_int_equal(ns->vcpus_limit, 2);
    assert_int_equal(ns->memory_limit_mb, 1536);
    assert_int_equal(ns->vcpus_committed, vcpus);
    assert_int_equal(ns->memory_committed_mb, memory_mb);
    protobuf_c_message_free_unpacked(&ns->base, NULL);
}

static void assert_state(const char *id, int want)
{
    grpc_status_code st;
    char *details = NULL;
    Airlock__Vmhost__V1__Sandbox *sb = itest_sandbox_call(&itest_vh, ITEST_METHOD("GetSandbox"),
                                                          id, &st, &details);
    if (!sb)
        fail_msg("GetSandbox %s: %d %s", id, st, details ? details : "");
    free(details);
    assert_int_equal(sb->state, want);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
}

static void test_node_budget_admits_by_vcpus_and_memory(void **state)
{
    (void)state;
    assert_int_equal(itest_vmhost_crash_and_restart_with(&itest_vh, budget_args), 0);
    assert_committed(0, 0);
    char *a = itest_assert_create(&itest_vh), *b = itest_assert_create(&itest_vh);
    assert_committed(2, 1024);

    /* Full: refused before anything is made, naming the vCPUs. */
    grpc_status_code st;
    char *details = NULL;
    assert_null(create_sized(0, 0, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_RESOURCE_EXHAUSTED,
                               "node has no room for 1 more vCPUs: 2 of 2 committed "
                               "(1 CPUs x overcommit 2)");
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 2);
    Airlock__Vmhost__V1__ListSandboxesResponse *l = itest_list_sandboxes(&itest_vh);
    assert_non_null(l);
    assert_int_equal(l->n_sandboxes, 2);
    protobuf_c_message_free_unpacked(&l->base, NULL);

    /* A suspended sandbox holds no VM: its room goes to another. */
    itest_assert_transition(&itest_vh, ITEST_METHOD("SuspendSandbox"), a, STATE(SUSPENDED));
    assert_committed(1, 512);
    char *c = itest_assert_create(&itest_vh);
    assert_committed(2, 1024);
    /* and coming back needs room: refused, still suspended, resumable. */
    Airlock__Vmhost__V1__Sandbox *r =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("ResumeSandbox"), a, &st, &details);
    assert_null(r);
    itest_assert_status_naming(st, &details, GRPC_STATUS_RESOURCE_EXHAUSTED,
                               "node has no room for 1 more vCPUs");
    assert_state(a, STATE(SUSPENDED));
    assert_int_equal(itest_delete_sandbox(&itest_vh, c), GRPC_STATUS_OK);
    free(c);
    assert_committed(1, 512);
    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), a, STATE(RUNNING));
    assert_committed(2, 1024);

    /* A restart adopts both VMs with what they hold. */
    assert_int_equal(itest_vmhost_crash_and_restart_with(&itest_vh, budget_args), 0);
    assert_committed(2, 1024);
    assert_null(create_sized(0, 0, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_RESOURCE_EXHAUSTED, "no room");
    assert_int_equal(itest_assert_sh_code(&itest_vh, a, "exit 3", NULL, 0), 3);

    assert_int_equal(itest_delete_sandbox(&itest_vh, a), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, b), GRPC_STATUS_OK);
    free(a);
    free(b);
    assert_committed(0, 0);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
}

static int setup(void **state)
{
    (void)state;
    return itest_vmhost_start(&itest_vh, limits_args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_past_the_node_bounds_are_refused),
        cmocka_unit_test(test_least_recently_used_size_goes),
        cmocka_unit_test(test_restart_keeps_only_held_sizes),
        cmocka_unit_test(test_node_budget_admits_by_vcpus_and_memory),
    };
    return cmocka_run_group_tests(tests, setup, itest_group_teardown);
}
