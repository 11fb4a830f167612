/* Sandbox lifecycle on a real vmhost: create/get/list/delete, deletion
 * leaving no process, socket or file behind, and a VM that dies on its own
 * turning into state error with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

static Airlock__Vmhost__V1__Sandbox *get_sandbox(const char *id, grpc_status_code *st,
                                                 char **details)
{
    return itest_sandbox_call(&itest_vh, ITEST_METHOD("GetSandbox"), id, st, details);
}

static bool path_exists(const char *fmt, const char *id)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), fmt, itest_vh.data_dir, id);
    struct stat st;
    return lstat(path, &st) == 0;
}

static void test_create_get_list_delete_leaves_nothing(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);

    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb = get_sandbox(id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    assert_string_equal(sb->id, id);
    assert_int_equal(sb->state, AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_RUNNING);
    assert_string_equal(sb->template_, "default");
    assert_int_equal(sb->vcpus, 1);
    assert_int_equal(sb->memory_mb, 512);
    assert_true(strcmp(sb->accel, "tcg") == 0 || strcmp(sb->accel, "kvm") == 0);
    pid_t qemu = sb->qemu_pid;
    assert_true(qemu > 1);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    assert_int_equal(kill(qemu, 0), 0);
    assert_true(path_exists("%s/store/sandboxes/%s/disk.ext4", id));
    assert_true(path_exists("%s/store/sandboxes/%s/vm/agent.sock", id));
    assert_true(itest_netns_exists(id));

    Airlock__Vmhost__V1__ListSandboxesResponse *list = itest_list_sandboxes(&itest_vh);
    assert_non_null(list);
    bool listed = false;
    for (size_t i = 0; i < list->n_sandboxes; i++)
        listed |= strcmp(list->sandboxes[i]->id, id) == 0;
    assert_true(listed);
    protobuf_c_message_free_unpacked(&list->base, NULL);

    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    /* vmhost reaped its child, so the pid is gone, not a zombie. */
    assert_int_equal(kill(qemu, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_false(path_exists("%s/store/sandboxes/%s", id));
    assert_false(itest_netns_exists(id));
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);

    char *details = NULL;
    sb = get_sandbox(id, &st, &details);
    assert_null(sb);
    assert_int_equal(st, GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(details, id));
    free(details);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_NOT_FOUND);
    free(id);
}

static void test_vm_dying_marks_error_with_reason(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb = get_sandbox(id, &st, NULL);
    pid_t qemu = sb->qemu_pid;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    assert_true(itest_netns_exists(id));
    assert_int_equal(kill(qemu, SIGKILL), 0);

    /* vmhost notices within moments; poll rather than sleep a fixed time. */
    sb = NULL;
    for (int i = 0; i < 200; i++) {
        sb = get_sandbox(id, &st, NULL);
        assert_int_equal(st, GRPC_STATUS_OK);
        if (sb->state == AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_ERROR)
            break;
        protobuf_c_message_free_unpacked(&sb->base, NULL);
        sb = NULL;
        usleep(50 * 1000);
    }
    assert_non_null(sb);
    assert_non_null(strstr(sb->error, "signal 9"));
    protobuf_c_message_free_unpacked(&sb->base, NULL);

    struct itest_exec_result r;
    itest_sh(&itest_vh, id, "true", &r);
    assert_int_equal(r.status, GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(r.details, "error"));
    itest_exec_result_free(&r);

    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_false(path_exists("%s/store/sandboxes/%s", id));
    assert_false(itest_netns_exists(id));
    free(id);
}

static void test_two_sandboxes_are_isolated(void **state)
{
    (void)state;
    char *a = itest_assert_create(&itest_vh);
    char *b = itest_assert_create(&itest_vh);
    assert_string_not_equal(a, b);
    struct itest_exec_result r;
    itest_sh(&itest_vh, a, "echo only-in-a > /root/marker", &r);
    assert_int_equal(r.exit_code, 0);
    itest_exec_result_free(&r);
    itest_sh(&itest_vh, b, "cat /root/marker 2>/dev/null || echo absent", &r);
    assert_string_equal((char *)r.out, "absent\n");
    itest_exec_result_free(&r);
    assert_int_equal(itest_delete_sandbox(&itest_vh, a), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, b), GRPC_STATUS_OK);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_get_list_delete_leaves_nothing),
        cmocka_unit_test(test_vm_dying_marks_error_with_reason),
        cmocka_unit_test(test_two_sandboxes_are_isolated),
    };
    return cmocka_run_group_tests(tests, itest_group_setup, itest_group_teardown);
}
