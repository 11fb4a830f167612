/* Persistent volumes (docs/volumes.md) on a real vmhost, real VMs and the
 * real btrfs store: bytes written in one sandbox are read in the next one
 * after a delete; a second writer is refused naming the holder; a snapshot
 * taken while the volume is mounted and a clone of it diverge from the
 * volume after writes on either side; a read-only snapshot attach refuses
 * writes (EROFS); suspend/resume keeps data and writability; grows of an
 * attached and a detached volume show in the guest's df; a full volume is
 * ENOSPC in the guest while another volume of the same sandbox still
 * writes; a FULL checkpoint's restore reverts the volume; each fork gets
 * its own clone, named in the answer; bad input leaves no VM, namespace,
 * sandbox or volume directory; and a vmhost kill -9 + restart keeps the
 * attachment, its hold and data. */
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
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s

struct att {
    const char *volume_id, *snapshot_id, *path;
    bool read_only;
    uint64_t size_mb;
};

/* CreateSandbox id with the attachments: the status, details in *details. */
static grpc_status_code create_with(const char *id, const struct att *a, size_t n, char **details)
{
    Airlock__Vmhost__V1__VolumeAttachment msgs[8], *ptrs[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        airlock__vmhost__v1__volume_attachment__init(&msgs[i]);
        msgs[i].volume_id = (char *)a[i].volume_id;
        msgs[i].snapshot_id = (char *)(a[i].snapshot_id ? a[i].snapshot_id : "");
        msgs[i].path.data = (uint8_t *)a[i].path;
        msgs[i].path.len = strlen(a[i].path);
        msgs[i].read_only = a[i].read_only;
        msgs[i].size_mb = a[i].size_mb;
        ptrs[i] = &msgs[i];
    }
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = (char *)id;
    req.volumes = ptrs;
    req.n_volumes = n;
    grpc_status_code st;
    char *got = itest_create_sandbox_with(&itest_vh, &req, &st, details);
    free(got);
    return st;
}

static void create_ok(const char *id, const struct att *a, size_t n)
{
    char *details = NULL;
    grpc_status_code st = create_with(id, a, n, &details);
    if (st != GRPC_STATUS_OK) {
        itest_vmhost_print_log_tail(&itest_vh);
        fail_msg("create %s: status %d: %s", id, st, details ? details : "");
    }
    free(details);
    Airlock__Vmhost__V1__Sandbox *sb = itest_assert_get(&itest_vh, id);
    assert_int_equal(sb->n_volumes, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(sb->volumes[i]->volume_id, a[i].volume_id);
        assert_int_equal(sb->volumes[i]->read_only, a[i].read_only);
    }
    protobuf_c_message_free_unpacked(&sb->base, NULL);
}

/* A volume call; its answer (NULL unless OK) into *out when out is set. */
static grpc_status_code volume_call(const char *method, const char *id, const char *snap,
                                    const char *new_id, uint64_t size_mb,
                                    Airlock__Vmhost__V1__Volume **out, char **details)
{
    Airlock__Vmhost__V1__VolumeRef req = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
    req.volume_id = (char *)id;
    req.snapshot_id = (char *)(snap ? snap : "");
    req.new_volume_id = (char *)(new_id ? new_id : "");
    req.size_mb = size_mb;
    bool empty = strstr(method, "Delete") != NULL;
    ProtobufCMessage *answer = NULL;
    grpc_status_code st = rpc_unary(itest_vh.ch, method, &req.base,
                                    empty ? &airlock__vmhost__v1__empty__descriptor
                                          : &airlock__vmhost__v1__volume__descriptor,
                                    &answer, details, ITEST_CALL_TIMEOUT_MS);
    if (out && st == GRPC_STATUS_OK && !empty)
        *out = (Airlock__Vmhost__V1__Volume *)answer;
    else if (answer)
        protobuf_c_message_free_unpacked(answer, NULL);
    return st;
}

static void volume_ok(const char *method, const char *id, const char *snap, const char *new_id,
                      uint64_t size_mb)
{
    char *details = NULL;
    grpc_status_code st = volume_call(method, id, snap, new_id, size_mb, NULL, &details);
    if (st != GRPC_STATUS_OK)
        fail_msg("%s %s: status %d: %s", method, id, st, details ? details : "");
    free(details);
}

static Airlock__Vmhost__V1__Volume *get_volume(const char *id)
{
    Airlock__Vmhost__V1__Volume *v = NULL;
    char *details = NULL;
    grpc_status_code st = volume_call(ITEST_METHOD("GetVolume"), id, NULL, NULL, 0, &v, &details);
    if (st != GRPC_STATUS_OK)
        fail_msg("GetVolume %s: status %d: %s", id, st, details ? details : "");
    free(details);
    return v;
}

static bool volume_dir_exists(const char *id)
{
    char path[PATH_MAX];
    assert_int_equal(fs_path(path, sizeof(path), "%s/store/volumes/%s", itest_vh.data_dir, id), 0);
    return access(path, F_OK) == 0;
}

static char *sh(const char *id, const char *script)
{
    return itest_assert_sh(&itest_vh, id, script);
}

/* The file system size at path in MiB as the guest's df shows it. */
static long df_mb(const char *id, const char *path)
{
    char script[256];
    snprintf(script, sizeof(script), "df -m %s | tail -1 | awk '{print $2}'", path);
    char *out = sh(id, script);
    long mb = atol(out);
    free(out);
    return mb;
}

static void expect_out(const char *id, const char *script, const char *want)
{
    char *out = sh(id, script);
    if (strcmp(out, want) != 0)
        fail_msg("%s: %s: got \"%s\", want \"%s\"", id, script, out, want);
    free(out);
}

static void test_volume_lifecycle(void **state)
{
    (void)state;
    const struct att a_v1 = { "vol-one", NULL, "/work", false, 64 };
    create_ok("vol-a", &a_v1, 1);
    free(sh("vol-a", "printf first > /work/f && sync"));
    long before = df_mb("vol-a", "/work");
    assert_true(before > 40 && before <= 64);

    /* One writer: a second read-write attach names the holder, and the
     * volume cannot be deleted while attached. */
    char *details = NULL;
    itest_assert_status_naming(create_with("vol-b", &a_v1, 1, &details), &details,
                               GRPC_STATUS_FAILED_PRECONDITION, "vol-a");
    assert_false(itest_sandbox_path_exists(&itest_vh, "vol-b", ""));
    itest_assert_status_naming(volume_call(ITEST_METHOD("DeleteVolume"), "vol-one", NULL, NULL, 0,
                                           NULL, &details),
                               &details, GRPC_STATUS_FAILED_PRECONDITION, "vol-a");

    /* Snapshot while mounted (frozen for the reflink), then a clone. */
    volume_ok(ITEST_METHOD("SnapshotVolume"), "vol-one", "s1", NULL, 0);
    volume_ok(ITEST_METHOD("CloneVolume"), "vol-one", "s1", "vol-two", 0);
    free(sh("vol-a", "printf second > /work/f && sync"));

    /* Online grow. */
    volume_ok(ITEST_METHOD("GrowVolume"), "vol-one", NULL, NULL, 128);
    long grown = df_mb("vol-a", "/work");
    assert_true(grown > before + 40);
    /* Past what the jail lets its QEMU write: refused, nothing grown. */
    itest_assert_status_naming(volume_call(ITEST_METHOD("GrowVolume"), "vol-one", NULL, NULL,
                                           64 * 1024, NULL, &details),
                               &details, GRPC_STATUS_FAILED_PRECONDITION, "suspend");

    /* A grow while paused, then one while suspended: each resume tells
     * the guest, whose file system grows. */
    itest_assert_transition(&itest_vh, ITEST_METHOD("PauseSandbox"), "vol-a", STATE(PAUSED));
    volume_ok(ITEST_METHOD("GrowVolume"), "vol-one", NULL, NULL, 160);
    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), "vol-a", STATE(RUNNING));
    long after_pause = df_mb("vol-a", "/work");
    assert_true(after_pause > grown + 20);

    /* Suspend/resume: the data is there and still writable. */
    itest_assert_transition(&itest_vh, ITEST_METHOD("SuspendSandbox"), "vol-a", STATE(SUSPENDED));
    volume_ok(ITEST_METHOD("GrowVolume"), "vol-one", NULL, NULL, 192);
    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), "vol-a", STATE(RUNNING));
    assert_true(df_mb("vol-a", "/work") > after_pause + 20);
    expect_out("vol-a", "cat /work/f", "second");
    free(sh("vol-a", "printf third > /work/f && sync"));

    Airlock__Vmhost__V1__Volume *v = get_volume("vol-one");
    assert_string_equal(v->attached_sandbox, "vol-a");
    assert_int_equal(v->size_mb, 192);
    assert_int_equal(v->n_snapshots, 1);
    assert_string_equal(v->snapshots[0], "s1");
    protobuf_c_message_free_unpacked(&v->base, NULL);

    /* Delete detaches and keeps the volume. */
    assert_int_equal(itest_delete_sandbox(&itest_vh, "vol-a"), GRPC_STATUS_OK);
    v = get_volume("vol-one");
    assert_string_equal(v->attached_sandbox, "");
    protobuf_c_message_free_unpacked(&v->base, NULL);

    /* The next sandbox reads the same bytes; the clone and the snapshot
     * have the bytes of the snapshot's time; writes diverge. */
    const struct att c[] = {
        { "vol-one", NULL, "/data", false, 0 },
        { "vol-two", NULL, "/clone", false, 0 },
        { "vol-one", "s1", "/snap", true, 0 },
    };
    create_ok("vol-c", c, 3);
    expect_out("vol-c", "cat /data/f", "third");
    expect_out("vol-c", "cat /clone/f", "first");
    expect_out("vol-c", "cat /snap/f", "first");
    expect_out("vol-c", "sh -c 'echo x > /snap/x' 2>/tmp/e; grep -c 'Read-only file system' /tmp/e",
               "1\n");
    free(sh("vol-c", "printf clone > /clone/f && sync"));
    expect_out("vol-c", "cat /data/f /snap/f", "thirdfirst");
    /* A full volume is ENOSPC in the guest; another volume still writes. */
    expect_out("vol-c",
               "dd if=/dev/zero of=/clone/fill bs=1M count=200 2>/tmp/e; "
               "grep -c 'No space left on device' /tmp/e",
               "1\n");
    free(sh("vol-c", "printf after-full > /data/g && sync && cat /data/g >/dev/null"));
    assert_int_equal(itest_delete_sandbox(&itest_vh, "vol-c"), GRPC_STATUS_OK);
}

static void test_checkpoint_and_fork(void **state)
{
    (void)state;
    const struct att a = { "vol-three", NULL, "/w", false, 32 };
    create_ok("vol-f", &a, 1);
    free(sh("vol-f", "printf one > /w/f && sync"));
    char *details = NULL;
    if (itest_create_checkpoint(&itest_vh, "vol-f", "c1",
                                AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL,
                                &details) != GRPC_STATUS_OK)
        fail_msg("checkpoint: %s", details ? details : "");
    free(details);
    details = NULL;
    free(sh("vol-f", "printf two > /w/f && sync"));
    /* A restore reverts the volume with the VM. */
    Airlock__Vmhost__V1__CheckpointRequest cr = AIRLOCK__VMHOST__V1__CHECKPOINT_REQUEST__INIT;
    cr.sandbox_id = "vol-f";
    cr.name = "c1";
    assert_int_equal(itest_call(&itest_vh, ITEST_METHOD("RestoreCheckpoint"), &cr.base,
                                &airlock__vmhost__v1__sandbox__descriptor, &details),
                     GRPC_STATUS_OK);
    free(details);
    details = NULL;
    expect_out("vol-f", "cat /w/f", "one");
    free(sh("vol-f", "printf three > /w/f && sync"));

    /* A fork needs one new volume id per fork and read-write volume. */
    Airlock__Vmhost__V1__ForkSandboxRequest fr = AIRLOCK__VMHOST__V1__FORK_SANDBOX_REQUEST__INIT;
    char *ids[] = { "vol-f1", "vol-f2" };
    fr.sandbox_id = "vol-f";
    fr.count = 2;
    fr.volume_ids = ids;
    fr.n_volume_ids = 1;
    itest_assert_status_naming(itest_call(&itest_vh, ITEST_METHOD("ForkSandbox"), &fr.base,
                                          &airlock__vmhost__v1__fork_sandbox_response__descriptor,
                                          &details),
                               &details, GRPC_STATUS_INVALID_ARGUMENT, "volume_ids");
    fr.n_volume_ids = 2;
    Airlock__Vmhost__V1__ForkSandboxResponse *forks = NULL;
    grpc_status_code st = rpc_unary(itest_vh.ch, ITEST_METHOD("ForkSandbox"), &fr.base,
                                    &airlock__vmhost__v1__fork_sandbox_response__descriptor,
                                    (ProtobufCMessage **)&forks, &details, ITEST_CALL_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        fail_msg("fork: %d %s", st, details ? details : "");
    free(details);
    assert_int_equal(forks->n_sandboxes, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(forks->sandboxes[i]->n_volumes, 1);
        assert_string_equal(forks->sandboxes[i]->volumes[0]->volume_id, ids[i]);
    }
    /* Each fork has its own clone: writes diverge from the parent's. */
    const char *f0 = forks->sandboxes[0]->id, *f1 = forks->sandboxes[1]->id;
    expect_out(f0, "cat /w/f", "three");
    free(sh(f0, "printf fork0 > /w/f && sync"));
    expect_out(f1, "cat /w/f", "three");
    expect_out("vol-f", "cat /w/f", "three");
    Airlock__Vmhost__V1__Volume *v = get_volume("vol-f1");
    assert_string_equal(v->attached_sandbox, f0);
    protobuf_c_message_free_unpacked(&v->base, NULL);
    assert_int_equal(itest_delete_sandbox(&itest_vh, f0), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, f1), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, "vol-f"), GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&forks->base, NULL);
    volume_ok(ITEST_METHOD("DeleteVolume"), "vol-f1", NULL, NULL, 0);
    volume_ok(ITEST_METHOD("DeleteVolume"), "vol-f2", NULL, NULL, 0);
    volume_ok(ITEST_METHOD("DeleteVolume"), "vol-three", NULL, NULL, 0);
}

static void test_bad_input_leaves_nothing(void **state)
{
    (void)state;
    size_t qemus = itest_count_qemus(itest_vh.data_dir);
    const struct att sys[] = { { "vol-new1", NULL, "/proc/x", false, 16 } };
    const struct att five[] = {
        { "vol-new1", NULL, "/a", false, 16 }, { "vol-new2", NULL, "/b", false, 16 },
        { "vol-new3", NULL, "/c", false, 16 }, { "vol-new4", NULL, "/d", false, 16 },
        { "vol-new5", NULL, "/e", false, 16 },
    };
    const struct att twice[] = { { "vol-new1", NULL, "/a", false, 16 },
                                 { "vol-new1", NULL, "/b", false, 16 } };
    const struct att unknown[] = { { "vol-new1", NULL, "/a", false, 16 },
                                   { "vol-one", "nosuch", "/b", true, 0 } };
    const struct att rw_snap[] = { { "vol-one", "s1", "/a", false, 0 } };
    char *details = NULL;
    itest_assert_status_naming(create_with("vol-bad", sys, 1, &details), &details,
                               GRPC_STATUS_INVALID_ARGUMENT, "/proc/x");
    itest_assert_status_naming(create_with("vol-bad", five, 5, &details), &details,
                               GRPC_STATUS_INVALID_ARGUMENT, "at most 4");
    itest_assert_status_naming(create_with("vol-bad", twice, 2, &details), &details,
                               GRPC_STATUS_INVALID_ARGUMENT, "twice");
    itest_assert_status_naming(create_with("vol-bad", rw_snap, 1, &details), &details,
                               GRPC_STATUS_INVALID_ARGUMENT, "read_only");
    /* The first volume of this one is made, then undone. */
    itest_assert_status_naming(create_with("vol-bad", unknown, 2, &details), &details,
                               GRPC_STATUS_NOT_FOUND, "nosuch");
    assert_false(itest_sandbox_path_exists(&itest_vh, "vol-bad", ""));
    assert_false(itest_netns_exists("vol-bad"));
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), qemus);
    for (int i = 1; i <= 5; i++) {
        char id[16];
        snprintf(id, sizeof(id), "vol-new%d", i);
        assert_false(volume_dir_exists(id));
    }
    itest_assert_status_naming(volume_call(ITEST_METHOD("GetVolume"), "vol-none", NULL, NULL, 0,
                                           NULL, &details),
                               &details, GRPC_STATUS_NOT_FOUND, "vol-none");
    itest_assert_status_naming(volume_call(ITEST_METHOD("GrowVolume"), "vol-one", NULL, NULL, 1,
                                           NULL, &details),
                               &details, GRPC_STATUS_INVALID_ARGUMENT, "only grows");
}

static void test_detached_grow_and_crash(void **state)
{
    (void)state;
    /* A detached grow shows at the next mount. */
    volume_ok(ITEST_METHOD("GrowVolume"), "vol-two", NULL, NULL, 128);
    const struct att d = { "vol-two", NULL, "/w", false, 0 };
    create_ok("vol-d", &d, 1);
    assert_true(df_mb("vol-d", "/w") > 100);
    free(sh("vol-d", "printf kept > /w/k && sync"));

    assert_int_equal(itest_vmhost_crash_and_restart(&itest_vh), 0);
    expect_out("vol-d", "cat /w/k", "kept");
    char *details = NULL;
    const struct att e = { "vol-two", NULL, "/w", false, 0 };
    itest_assert_status_naming(create_with("vol-e", &e, 1, &details), &details,
                               GRPC_STATUS_FAILED_PRECONDITION, "vol-d");
    Airlock__Vmhost__V1__Sandbox *sb = itest_assert_get(&itest_vh, "vol-d");
    assert_int_equal(sb->n_volumes, 1);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    assert_int_equal(itest_delete_sandbox(&itest_vh, "vol-d"), GRPC_STATUS_OK);
    volume_ok(ITEST_METHOD("DeleteVolumeSnapshot"), "vol-one", "s1", NULL, 0);
    volume_ok(ITEST_METHOD("DeleteVolume"), "vol-one", NULL, NULL, 0);
    volume_ok(ITEST_METHOD("DeleteVolume"), "vol-two", NULL, NULL, 0);
    assert_false(volume_dir_exists("vol-one"));
    assert_false(volume_dir_exists("vol-two"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_volume_lifecycle),
        cmocka_unit_test(test_checkpoint_and_fork),
        cmocka_unit_test(test_bad_input_leaves_nothing),
        cmocka_unit_test(test_detached_grow_and_crash),
    };
    return cmocka_run_group_tests(tests, itest_group_setup, itest_group_teardown);
}
