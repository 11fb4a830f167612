/* The shared snapshot store with two real vmhosts (A, B) on one store
 * directory (docs/snapshot-store.md): a sandbox suspended on A resumes on
 * B with its processes, memory and files (a counting loop, a python
 * process's value, 4 MiB of random bytes), and back from B to A; the
 * suspend moved far fewer bytes than the guest's RAM and disk; the store
 * forgets a suspend once its sandbox runs; a corrupt delta is refused
 * (DATA_LOSS) and leaves nothing on B while A still resumes its own
 * copy; unknown and foreign objects are refused naming them; a full store
 * fails the suspend (RESOURCE_EXHAUSTED naming it) and the sandbox keeps
 * running; TakeSandbox moves a suspended sandbox to B as B's own
 * (suspended, recorded, surviving a kill -9 of B), a retry answers it, and
 * A's delete naming the set leaves it in the store; a sandbox a clean stop
 * of A suspended locally goes to the store at its suspend request; a
 * sandbox's volume travels with its suspend (a corrupt volume delta
 * refused, A's image dropped once the volume moved). Each vmhost built its
 * own default template, so B fetches A's build from the store and A
 * fetches B's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"
#include "itest_shared_store.h"

#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s

static struct itest_vmhost node_b;
static char store_dir[64] = "/tmp/airlock-shared-store-XXXXXX";

static int group_setup(void **state)
{
    (void)state;
    return itest_store_pair_start(store_dir, &node_b, NULL);
}

static int group_teardown(void **state)
{
    umount2(store_dir, MNT_DETACH); /* the full-store test's, if it failed midway */
    return itest_store_pair_stop(store_dir, &node_b, state);
}


static bool store_has(const char *object, const char *file)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s/%s", store_dir, object, file);
    return access(path, F_OK) == 0;
}

/* files.<name>.<field> of object's manifest. */
static long long manifest_field(const char *object, const char *name, const char *field)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s/manifest.json", store_dir, object);
    json_t *m = json_load_file(path, 0, NULL);
    assert_non_null(m);
    long long v = json_integer_value(
        json_object_get(json_object_get(json_object_get(m, "files"), name), field));
    json_decref(m);
    return v;
}

static void test_suspend_on_a_resume_on_b_and_back(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    itest_workload_start(&itest_vh, id);
    struct itest_workload before;
    itest_workload_read(&itest_vh, id, &before);

    char *object = itest_assert_suspend_to_store(&itest_vh, id);
    assert_true(store_has(object, "manifest.json"));
    assert_true(store_has(object, "state.delta"));
    assert_true(store_has(object, "disk.delta"));
    /* Only what the guest changed moved: far less than its RAM and disk. */
    long long state_size = manifest_field(object, "state", "size");
    long long state_stored = manifest_field(object, "state", "stored");
    long long disk_stored = manifest_field(object, "disk.ext4", "stored");
    print_message("suspend: state %lld bytes, %lld stored; disk %lld stored\n", state_size,
                  state_stored, disk_stored);
    assert_true(state_size > 64ll << 20);
    assert_true(state_stored < state_size / 4);
    /* The blob is random: in the disk, or still in the guest's page cache. */
    assert_true(state_stored + disk_stored >= 4ll << 20);
    assert_true(disk_stored < 64ll << 20);
    /* Suspended to the store, it holds nothing of node A but files. */
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
    assert_false(itest_netns_exists(id));

    itest_assert_resume_from(&node_b, id, object);
    itest_assert_workload_carried_on(&node_b, id, &before);
    /* Running again: the store forgot the suspend. */
    assert_false(store_has(object, "manifest.json"));
    itest_workload_read(&node_b, id, &before);

    /* A still holds its own suspended copy until told to delete it (the
     * scheduler does); that leaves B's sandbox alone. */
    Airlock__Vmhost__V1__Sandbox *on_a = itest_assert_get(&itest_vh, id);
    assert_int_equal(on_a->state, STATE(SUSPENDED));
    protobuf_c_message_free_unpacked(&on_a->base, NULL);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    itest_workload_read(&node_b, id, &before);

    /* And back: B's suspend (against B's template build) resumes on A. */
    char *again = itest_assert_suspend_to_store(&node_b, id);
    assert_string_not_equal(again, object);
    itest_assert_resume_from(&itest_vh, id, again);
    itest_assert_workload_carried_on(&itest_vh, id, &before);
    assert_int_equal(itest_delete_sandbox(&node_b, id), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_false(itest_netns_exists(id));
    free(again);
    free(object);
    free(id);
}

static void test_corrupt_unknown_and_foreign_objects(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    free(itest_assert_sh(&itest_vh, id, "echo kept > /root/kept"));
    char *object = itest_assert_suspend_to_store(&itest_vh, id);

    char *details = NULL;
    /* Another sandbox's object, and one that does not exist. */
    assert_int_equal(itest_resume_from(&node_b, id, "sandboxes/someone-else/1", &details),
                     GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(details, "someone-else"));
    free(details);
    details = NULL;
    char missing[256];
    snprintf(missing, sizeof(missing), "sandboxes/%s/1", id);
    itest_assert_status_naming(itest_resume_from(&node_b, id, missing, &details), &details,
                               GRPC_STATUS_NOT_FOUND, missing);

    /* A corrupt memory delta: refused, nothing left on B. */
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s/state.delta", store_dir, object);
    itest_flip_middle_byte(path);
    char named[300];
    snprintf(named, sizeof(named), "%s/state.delta", object);
    itest_assert_status_naming(itest_resume_from(&node_b, id, object, &details), &details,
                               GRPC_STATUS_DATA_LOSS, named);
    grpc_status_code gst;
    Airlock__Vmhost__V1__Sandbox *gone =
        itest_sandbox_call(&node_b, ITEST_METHOD("GetSandbox"), id, &gst, &details);
    assert_int_equal(gst, GRPC_STATUS_NOT_FOUND);
    assert_null(gone);
    free(details);
    details = NULL;
    assert_false(itest_sandbox_path_exists(&node_b, id, ""));
    assert_int_equal(itest_count_qemus(node_b.data_dir), 0);
    /* The store keeps the set; A resumes its own copy. */
    assert_true(store_has(object, "manifest.json"));
    itest_flip_middle_byte(path);
    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, STATE(RUNNING));
    char *kept = itest_assert_sh(&itest_vh, id, "cat /root/kept");
    assert_string_equal(kept, "kept\n");
    free(kept);
    assert_false(store_has(object, "manifest.json"));
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(object);
    free(id);
}

static void test_take_moves_a_suspended_sandbox(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    free(itest_assert_sh(&itest_vh, id, "echo moved > /root/moved"));
    char *object = itest_assert_suspend_to_store(&itest_vh, id);
    char *details = NULL;
    for (int attempt = 0; attempt < 2; attempt++) { /* the second is a retry */
        grpc_status_code st =
            itest_call_with_object(&node_b, ITEST_METHOD("TakeSandbox"), id, object,
                                   &airlock__vmhost__v1__sandbox__descriptor, &details);
        if (st != GRPC_STATUS_OK) {
            itest_vmhost_print_log_tail(&node_b);
            fail_msg("TakeSandbox %s: %s", id, details ? details : "?");
        }
        free(details);
        details = NULL;
    }
    Airlock__Vmhost__V1__Sandbox *on_b = itest_assert_get(&node_b, id);
    assert_int_equal(on_b->state, STATE(SUSPENDED));
    assert_string_equal(on_b->store_object, object);
    protobuf_c_message_free_unpacked(&on_b->base, NULL);
    assert_true(itest_sandbox_path_exists(&node_b, id, "sandbox.json"));
    /* A lets go of its copy; the store keeps the set B now holds. */
    assert_int_equal(itest_call_with_object(&itest_vh, ITEST_METHOD("DeleteSandbox"), id,
                                            object, &airlock__vmhost__v1__empty__descriptor, NULL),
                     GRPC_STATUS_OK);
    assert_true(store_has(object, "manifest.json"));
    /* B's own now: it survives a kill -9 of B, and resumes from B's copy. */
    const char *const args[] = { "--snapshot-store", store_dir, NULL };
    assert_int_equal(itest_vmhost_crash_and_restart_with(&node_b, args), 0);
    itest_assert_transition(&node_b, ITEST_METHOD("ResumeSandbox"), id, STATE(RUNNING));
    char *out = itest_assert_sh(&node_b, id, "cat /root/moved");
    assert_string_equal(out, "moved\n");
    free(out);
    assert_false(store_has(object, "manifest.json"));
    assert_int_equal(itest_delete_sandbox(&node_b, id), GRPC_STATUS_OK);
    /* Without a store object, or for a sandbox B holds, Take is refused. */
    assert_int_equal(itest_call_with_object(&node_b, ITEST_METHOD("TakeSandbox"), id, "",
                                            &airlock__vmhost__v1__sandbox__descriptor, NULL),
                     GRPC_STATUS_INVALID_ARGUMENT);
    free(object);
    free(id);
}

/* A clean stop suspends its running sandboxes locally (the control plane
 * believes they run); a suspend request for one then puts it into the
 * store like any suspend. */
static void test_suspend_after_a_clean_stop_goes_to_the_store(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    free(itest_assert_sh(&itest_vh, id, "echo stopped > /root/stopped"));
    const char *const args[] = { "--snapshot-store", store_dir, NULL };
    assert_int_equal(itest_vmhost_restart_with(&itest_vh, args), 0);
    char *object = itest_assert_suspend_to_store(&itest_vh, id);
    assert_true(store_has(object, "manifest.json"));
    itest_assert_resume_from(&node_b, id, object);
    char *out = itest_assert_sh(&node_b, id, "cat /root/stopped");
    assert_string_equal(out, "stopped\n");
    free(out);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&node_b, id), GRPC_STATUS_OK);
    free(object);
    free(id);
}

static void test_full_store_keeps_the_sandbox_running(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    /* A 1 MiB file system over the store: not even the template fits. */
    assert_int_equal(mount("tmpfs", store_dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0700"),
                     0);
    grpc_status_code st;
    char *details = NULL;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("SuspendSandbox"), id, &st, &details);
    assert_null(sb);
    itest_assert_status_naming(st, &details, GRPC_STATUS_RESOURCE_EXHAUSTED, store_dir);
    assert_int_equal(umount2(store_dir, 0), 0);
    Airlock__Vmhost__V1__Sandbox *now = itest_assert_get(&itest_vh, id);
    assert_int_equal(now->state, STATE(RUNNING));
    assert_string_equal(now->store_object, "");
    protobuf_c_message_free_unpacked(&now->base, NULL);
    char *out = itest_assert_sh(&itest_vh, id, "echo still-here");
    assert_string_equal(out, "still-here\n");
    free(out);
    assert_false(itest_sandbox_path_exists(&itest_vh, id, "suspend"));
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
}

/* node's store path of volume id (rest: "" or "/disk.img", ...). */
static bool volume_has(struct itest_vmhost *node, const char *id, const char *rest)
{
    char path[PATH_MAX];
    assert_int_equal(fs_path(path, sizeof(path), "%s/store/volumes/%s%s", node->data_dir, id, rest),
                     0);
    return access(path, F_OK) == 0;
}

static void volume_rpc(struct itest_vmhost *node, const char *method, const char *id,
                       const char *snapshot)
{
    Airlock__Vmhost__V1__VolumeRef req = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
    req.volume_id = (char *)id;
    req.snapshot_id = (char *)snapshot;
    ProtobufCMessage *answer = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(node->ch, method, &req.base,
                                    strstr(method, "Delete") ? &airlock__vmhost__v1__empty__descriptor
                                                             : &airlock__vmhost__v1__volume__descriptor,
                                    &answer, &details, ITEST_CALL_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        fail_msg("%s %s: status %d: %s", method, id, st, details ? details : "");
    if (answer)
        protobuf_c_message_free_unpacked(answer, NULL);
    free(details);
}

/* CreateSandbox id on node with the attachments (n of them). */
static void create_with_volumes(struct itest_vmhost *node, const char *id,
                                Airlock__Vmhost__V1__VolumeAttachment **atts, size_t n)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = (char *)id;
    req.volumes = atts;
    req.n_volumes = n;
    grpc_status_code st;
    char *details = NULL;
    free(itest_create_sandbox_with(node, &req, &st, &details));
    if (st != GRPC_STATUS_OK)
        fail_msg("create %s: %d %s", id, st, details ? details : "");
    free(details);
}

static void attachment(Airlock__Vmhost__V1__VolumeAttachment *a, const char *volume,
                       const char *snapshot, const char *path)
{
    airlock__vmhost__v1__volume_attachment__init(a);
    a->volume_id = (char *)volume;
    a->snapshot_id = (char *)snapshot;
    a->read_only = *snapshot != '\0';
    a->path.data = (uint8_t *)path;
    a->path.len = strlen(path);
    a->size_mb = *snapshot ? 0 : 64;
}

/* docs/volumes.md "Across nodes": a suspend to the store carries the
 * sandbox's volume and its read-only snapshot; a corrupt volume delta is
 * refused (DATA_LOSS naming it) and makes no volume on B; resumed on B the
 * volume is B's, held and with its bytes, and a fork there has the
 * snapshot (which stayed on A); A's delete naming the volume as moved
 * drops A's image and keeps A's snapshot of it. */
static void test_volume_travels_with_its_sandbox(void **state)
{
    (void)state;
    const char *id = "sb-volume-travels", *vol = "vol-travels";
    Airlock__Vmhost__V1__VolumeAttachment att[2], *atts[] = { &att[0], &att[1] };
    /* A snapshot on A, of a volume a first sandbox wrote. */
    attachment(&att[0], "vol-ro", "", "/ro");
    create_with_volumes(&itest_vh, "sb-volume-ro", atts, 1);
    free(itest_assert_sh(&itest_vh, "sb-volume-ro", "echo ro-bytes > /ro/f && sync"));
    assert_int_equal(itest_delete_sandbox(&itest_vh, "sb-volume-ro"), GRPC_STATUS_OK);
    volume_rpc(&itest_vh, ITEST_METHOD("SnapshotVolume"), "vol-ro", "r1");

    attachment(&att[0], vol, "", "/data");
    attachment(&att[1], "vol-ro", "r1", "/ro");
    create_with_volumes(&itest_vh, id, atts, 2);
    char *details = NULL;
    free(itest_assert_sh(&itest_vh, id, "echo travels > /data/f"));
    volume_rpc(&itest_vh, ITEST_METHOD("SnapshotVolume"), vol, "s1");
    char *object = itest_assert_suspend_to_store(&itest_vh, id);
    assert_true(store_has(object, "vol0.delta"));
    assert_true(store_has(object, "vol1.delta"));
    assert_true(manifest_field(object, "vol0", "size") == 64ll << 20);

    char path[PATH_MAX], named[300];
    snprintf(path, sizeof(path), "%s/%s/vol0.delta", store_dir, object);
    snprintf(named, sizeof(named), "%s/vol0.delta", object);
    itest_flip_middle_byte(path);
    itest_assert_status_naming(itest_resume_from(&node_b, id, object, &details), &details,
                               GRPC_STATUS_DATA_LOSS, named);
    assert_false(volume_has(&node_b, vol, ""));
    assert_false(itest_sandbox_path_exists(&node_b, id, ""));
    assert_int_equal(itest_count_qemus(node_b.data_dir), 0);
    itest_flip_middle_byte(path);

    itest_assert_resume_from(&node_b, id, object);
    char *out = itest_assert_sh(&node_b, id, "cat /data/f /ro/f && echo more > /data/g && sync");
    assert_string_equal(out, "travels\nro-bytes\n");
    free(out);
    assert_true(volume_has(&node_b, vol, "/disk.img"));
    assert_false(volume_has(&node_b, "vol-ro", "")); /* the snapshot stays on A */

    /* A fork on B: its clone of the volume, the snapshot from the parent. */
    char *fork_volume[] = { "vol-travels-fork" };
    Airlock__Vmhost__V1__ForkSandboxRequest fr = AIRLOCK__VMHOST__V1__FORK_SANDBOX_REQUEST__INIT;
    fr.sandbox_id = (char *)id;
    fr.count = 1;
    fr.volume_ids = fork_volume;
    fr.n_volume_ids = 1;
    Airlock__Vmhost__V1__ForkSandboxResponse *forks = NULL;
    if (rpc_unary(node_b.ch, ITEST_METHOD("ForkSandbox"), &fr.base,
                  &airlock__vmhost__v1__fork_sandbox_response__descriptor,
                  (ProtobufCMessage **)&forks, &details, ITEST_CALL_TIMEOUT_MS) != GRPC_STATUS_OK)
        fail_msg("fork on B: %s", details ? details : "");
    free(details);
    details = NULL;
    assert_int_equal(forks->n_sandboxes, 1);
    out = itest_assert_sh(&node_b, forks->sandboxes[0]->id, "cat /data/f /ro/f");
    assert_string_equal(out, "travels\nro-bytes\n");
    free(out);
    assert_int_equal(itest_delete_sandbox(&node_b, forks->sandboxes[0]->id), GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&forks->base, NULL);
    volume_rpc(&node_b, ITEST_METHOD("DeleteVolume"), "vol-travels-fork", "");

    /* A's copy goes as moved: its image with it, its snapshot stays. */
    char *moved[] = { (char *)vol };
    Airlock__Vmhost__V1__SandboxRef del = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    del.id = (char *)id;
    del.store_object = object;
    del.keep_checkpoints = true;
    del.moved_volume_ids = moved;
    del.n_moved_volume_ids = 1;
    ProtobufCMessage *empty = NULL;
    assert_int_equal(rpc_unary(itest_vh.ch, ITEST_METHOD("DeleteSandbox"), &del.base,
                               &airlock__vmhost__v1__empty__descriptor, &empty, NULL,
                               ITEST_CALL_TIMEOUT_MS),
                     GRPC_STATUS_OK);
    if (empty)
        protobuf_c_message_free_unpacked(empty, NULL);
    assert_false(volume_has(&itest_vh, vol, "/disk.img"));
    assert_true(volume_has(&itest_vh, vol, "/snapshots/s1.img"));

    assert_int_equal(itest_delete_sandbox(&node_b, id), GRPC_STATUS_OK);
    assert_true(volume_has(&node_b, vol, "/disk.img")); /* a volume outlives its sandbox */
    volume_rpc(&node_b, ITEST_METHOD("DeleteVolume"), vol, "");
    volume_rpc(&itest_vh, ITEST_METHOD("DeleteVolume"), vol, "");
    volume_rpc(&itest_vh, ITEST_METHOD("DeleteVolume"), "vol-ro", "");
    assert_false(volume_has(&node_b, vol, ""));
    assert_false(volume_has(&itest_vh, vol, ""));
    free(object);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suspend_on_a_resume_on_b_and_back),
        cmocka_unit_test(test_corrupt_unknown_and_foreign_objects),
        cmocka_unit_test(test_take_moves_a_suspended_sandbox),
        cmocka_unit_test(test_suspend_after_a_clean_stop_goes_to_the_store),
        cmocka_unit_test(test_full_store_keeps_the_sandbox_running),
        cmocka_unit_test(test_volume_travels_with_its_sandbox),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
