/* Template snapshots on a real vmhost: the btrfs store, sandboxes restored
 * from the default template (own entropy, uuid, hostname, current clock,
 * reflinked disk), a snapshot per size for other sizes, pause/resume and their illegal
 * transitions, and a vmhost restart reusing the mounted store. The group
 * teardown (itest_vmhost_stop) fails if the store's mount or loop device
 * outlives vmhost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"
#include "itest_store.h"

#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s

static double host_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What a restored guest says about itself, in one exec. */
struct guest_identity {
    char random_hex[80];
    char uuid[40];
    char hostname[80];
    double clock_offset_s; /* guest wall clock minus host's, at the exec's end */
};

static void guest_identity(const char *id, struct guest_identity *gi)
{
    struct itest_exec_result r;
    itest_sh(&itest_vh, id,
             "head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n'; echo;"
             "cat /proc/sys/kernel/random/uuid; hostname; date +%s.%N",
             &r);
    double host = host_now();
    assert_int_equal(r.status, GRPC_STATUS_OK);
    assert_int_equal(r.exit_code, 0);
    double guest = 0;
    assert_int_equal(sscanf((char *)r.out, "%79s %39s %79s %lf", gi->random_hex, gi->uuid,
                            gi->hostname, &guest),
                     4);
    gi->clock_offset_s = guest - host;
    itest_exec_result_free(&r);
}

static void assert_state(const char *id, int want)
{
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("GetSandbox"), id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    assert_int_equal(sb->state, want);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
}

static void test_store_is_btrfs_with_template(void **state)
{
    (void)state;
    char path[PATH_MAX];
    assert_int_equal(fs_path(path, sizeof(path), "%s/store", itest_vh.data_dir), 0);
    struct statfs sf;
    assert_int_equal(statfs(path, &sf), 0);
    assert_true(sf.f_type == BTRFS_SUPER_MAGIC);
    assert_int_equal(itest_mounts_under(itest_vh.data_dir, false), 1);
    assert_int_equal(itest_loops_under(itest_vh.data_dir, false), 1);
    /* One template: disk, memory, device state and manifest, no build dir. */
    assert_int_equal(fs_path(path, sizeof(path), "%s/store/templates", itest_vh.data_dir), 0);
    char cmd[6 * PATH_MAX];
    snprintf(cmd, sizeof(cmd), "ls -a %s/*/state %s/*/mem %s/*/disk.ext4 %s/*/manifest.json "
                               "%s/.build-* 2>/dev/null | wc -l",
             path, path, path, path, path);
    FILE *p = popen(cmd, "r");
    int n = 0;
    assert_int_equal(fscanf(p, "%d", &n), 1);
    pclose(p);
    assert_int_equal(n, 4);
}

/* True when some extent of the file is shared with another file (a reflink). */
static bool file_has_shared_extents(const char *path)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct {
        struct fiemap fm;
        struct fiemap_extent ext[64];
    } q = { .fm = { .fm_length = FIEMAP_MAX_OFFSET, .fm_extent_count = 64 } };
    assert_int_equal(ioctl(fd, FS_IOC_FIEMAP, &q), 0);
    close(fd);
    for (unsigned i = 0; i < q.fm.fm_mapped_extents; i++)
        if (q.ext[i].fe_flags & FIEMAP_EXTENT_SHARED)
            return true;
    return false;
}

static void test_restored_sandboxes_diverge(void **state)
{
    (void)state;
    char *a = itest_assert_create(&itest_vh);
    char *b = itest_assert_create(&itest_vh);
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("GetSandbox"), a, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    assert_true(sb->restored);
    protobuf_c_message_free_unpacked(&sb->base, NULL);

    struct guest_identity ga, gb;
    guest_identity(a, &ga);
    guest_identity(b, &gb);
    assert_int_equal(strlen(ga.random_hex), 32);
    assert_string_not_equal(ga.random_hex, gb.random_hex);
    assert_string_not_equal(ga.uuid, gb.uuid);
    assert_string_equal(ga.hostname, a);
    assert_string_equal(gb.hostname, b);
    /* The snapshot's clock is minutes old; the host set the current time. */
    assert_true(ga.clock_offset_s > -2.0 && ga.clock_offset_s < 2.0);
    assert_true(gb.clock_offset_s > -2.0 && gb.clock_offset_s < 2.0);

    char disk[PATH_MAX];
    assert_int_equal(
        fs_path(disk, sizeof(disk), "%s/store/sandboxes/%s/disk.ext4", itest_vh.data_dir, a), 0);
    assert_true(file_has_shared_extents(disk));

    assert_int_equal(itest_delete_sandbox(&itest_vh, a), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, b), GRPC_STATUS_OK);
    free(a);
    free(b);
}

/* The default template at another size: its snapshot is built on first
 * use (docs/templates.md), and the sandbox restored from it. */
static void test_other_size_restores_its_own_snapshot(void **state)
{
    (void)state;
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.memory_mb = 384;
    char *id = itest_create_sandbox_with(&itest_vh, &req, NULL, NULL);
    assert_non_null(id);
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("GetSandbox"), id, &st, NULL);
    assert_true(sb->restored);
    assert_int_equal(sb->memory_mb, 384);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    struct guest_identity gi;
    guest_identity(id, &gi);
    assert_string_equal(gi.hostname, id);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
}

static void test_unknown_template_is_not_found(void **state)
{
    (void)state;
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.template_ = "no-such-template";
    grpc_status_code st;
    char *details = NULL;
    assert_null(itest_create_sandbox_with(&itest_vh, &req, &st, &details));
    assert_int_equal(st, GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(details, "no-such-template"));
    free(details);
}

static void test_pause_resume(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    struct itest_exec_result r;
    itest_sh(&itest_vh, id, "echo before > /root/state", &r);
    itest_exec_result_free(&r);

    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("PauseSandbox"), id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    assert_int_equal(sb->state, STATE(PAUSED));
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    assert_state(id, STATE(PAUSED));
    itest_assert_refused(&itest_vh, ITEST_METHOD("PauseSandbox"), id, "paused");

    itest_sh(&itest_vh, id, "true", &r);
    assert_int_equal(r.status, GRPC_STATUS_FAILED_PRECONDITION);
    char want[128];
    snprintf(want, sizeof(want), "sandbox %s is paused", id);
    assert_non_null(strstr(r.details, want));
    itest_exec_result_free(&r);

    /* The guest's clock stands still while paused; resume sets it again. */
    sleep(3);
    sb = itest_sandbox_call(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    assert_int_equal(sb->state, STATE(RUNNING));
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    itest_assert_refused(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, "running");
    struct guest_identity gi;
    guest_identity(id, &gi);
    assert_true(gi.clock_offset_s > -1.5 && gi.clock_offset_s < 1.5);
    itest_sh(&itest_vh, id, "cat /root/state", &r);
    assert_string_equal((char *)r.out, "before\n");
    itest_exec_result_free(&r);

    /* Delete works from paused too. */
    sb = itest_sandbox_call(&itest_vh, ITEST_METHOD("PauseSandbox"), id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);

    char *details = NULL;
    assert_null(itest_sandbox_call(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, &st, &details));
    assert_int_equal(st, GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(details, id));
    free(details);
    free(id);
}

/* A vmhost killed with -9 leaves its store mounted; the next one takes it
 * over, finds the template and restores from it at once. */
static void test_restart_reuses_store_and_template(void **state)
{
    (void)state;
    assert_int_equal(itest_vmhost_crash_and_restart(&itest_vh), 0);
    assert_int_equal(itest_mounts_under(itest_vh.data_dir, false), 1);
    char *id = itest_assert_create(&itest_vh);
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("GetSandbox"), id, &st, NULL);
    assert_true(sb->restored);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
    char log_text[PATH_MAX + 64];
    snprintf(log_text, sizeof(log_text), "grep -c 'template snapshot found' %s", itest_vh.log_path);
    FILE *p = popen(log_text, "r");
    int found = 0;
    assert_int_equal(fscanf(p, "%d", &found), 1);
    pclose(p);
    assert_true(found >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_is_btrfs_with_template),
        cmocka_unit_test(test_restored_sandboxes_diverge),
        cmocka_unit_test(test_other_size_restores_its_own_snapshot),
        cmocka_unit_test(test_unknown_template_is_not_found),
        cmocka_unit_test(test_pause_resume),
        cmocka_unit_test(test_restart_reuses_store_and_template),
    };
    return cmocka_run_group_tests(tests, itest_group_setup, itest_group_teardown);
}
