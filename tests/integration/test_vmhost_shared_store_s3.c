/* The snapshot store's S3 backend with two real vmhosts on one bucket of a
 * real S3-compatible server, s3rver from the npm registry, on loopback
 * (docs/snapshot-store.md): a sandbox suspended on A resumes on B with its
 * processes, memory and files, and the bucket forgets the suspend; a
 * corrupt object is refused (DATA_LOSS) and A still resumes its own copy;
 * with the server down a suspend fails UNAVAILABLE naming the store and
 * the sandbox keeps running, and works again once the server is back; a
 * vmhost with credentials the server does not know does not start.
 * s3rver checks the access key but not Signature V4 itself (it says so in
 * its source): the signature is libcurl's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"
#include "itest_shared_store.h"
#include "test_proc.h"

#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s
#define BUCKET "airlock-test"
#define PREFIX "nodes"
#define S3RVER_START_MS 30000

static struct itest_vmhost node_b;
static char dir[PATH_MAX - 64];     /* s3rver's data, the credentials, its log */
static char data_dir[PATH_MAX + 8]; /* dir/data: s3rver's objects */
static char creds[PATH_MAX + 8];
static char endpoint[64];
static char port_text[16];
static pid_t s3rver_pid;

static int s3rver_start(void)
{
    const char *argv[] = { AIRLOCK_S3RVER_BIN, "--directory", data_dir, "--address", "127.0.0.1",
                           "--port", port_text, "--configure-bucket", BUCKET, "--silent", NULL };
    s3rver_pid = test_spawn(argv, dir, "s3rver.log");
    for (int waited = 0; s3rver_pid > 0 && waited < S3RVER_START_MS; waited += 100) {
        if (test_port_answers(atoi(port_text)))
            return 0;
        usleep(100 * 1000);
    }
    fprintf(stderr, "s3rver did not answer on %s (log in %s)\n", port_text, dir);
    return -1;
}

static void s3rver_stop(void)
{
    if (s3rver_pid > 0)
        test_stop_pid(&s3rver_pid, dir, "s3rver.log", false);
}

static int group_setup(void **state)
{
    (void)state;
    if (access(AIRLOCK_S3RVER_BIN, X_OK) != 0) {
        fprintf(stderr, "%s missing: make deps installs it\n", AIRLOCK_S3RVER_BIN);
        return -1;
    }
    if (test_temp_dir(dir, sizeof(dir), "airlock-s3") < 0)
        return -1;
    test_cleanup_install(s3rver_stop);
    snprintf(data_dir, sizeof(data_dir), "%s/data", dir);
    snprintf(creds, sizeof(creds), "%s/credentials", dir);
    snprintf(port_text, sizeof(port_text), "%d", test_free_port());
    snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%s", port_text);
    char err[256];
    /* s3rver's one account. */
    if (mkdir(data_dir, 0700) < 0 ||
        fs_write_file_atomic(creds, "S3RVER:S3RVER", 13, 0600, err, sizeof(err)) < 0 ||
        s3rver_start() < 0)
        return -1;
    const char *const args[] = { "--snapshot-store", "s3://" BUCKET "/" PREFIX,
                                 "--snapshot-store-endpoint", endpoint,
                                 "--snapshot-store-credentials", creds, NULL };
    if (itest_vmhost_start(&itest_vh, args) < 0 || itest_vmhost_start(&node_b, args) < 0)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    int rc = itest_vmhost_stop(&node_b) < 0 ? -1 : 0;
    if (itest_group_teardown(state) < 0)
        rc = -1;
    s3rver_stop();
    char err[256];
    fs_remove_tree(dir, err, sizeof(err));
    return rc;
}

/* Where s3rver keeps the object: DATA/BUCKET/PREFIX/NAME._S3rver_object. */
static void object_file(const char *object, const char *file, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/" BUCKET "/" PREFIX "/%s/%s._S3rver_object", data_dir, object,
             file);
}

static bool bucket_has(const char *object, const char *file)
{
    char path[PATH_MAX * 2];
    object_file(object, file, path, sizeof(path));
    return access(path, F_OK) == 0;
}


static void test_suspend_on_a_resume_on_b(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    itest_workload_start(&itest_vh, id);
    struct itest_workload before;
    itest_workload_read(&itest_vh, id, &before);
    char *object = itest_assert_suspend_to_store(&itest_vh, id);
    assert_true(bucket_has(object, "manifest.json"));
    assert_true(bucket_has(object, "state.delta"));
    itest_assert_resume_from(&node_b, id, object);
    itest_assert_workload_carried_on(&node_b, id, &before);
    assert_false(bucket_has(object, "manifest.json"));
    assert_false(bucket_has(object, "state.delta"));
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&node_b, id), GRPC_STATUS_OK);
    free(object);
    free(id);
}

static void test_corrupt_object_is_refused(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    free(itest_assert_sh(&itest_vh, id, "echo kept > /root/kept"));
    char *object = itest_assert_suspend_to_store(&itest_vh, id);
    char path[PATH_MAX * 2];
    object_file(object, "state.delta", path, sizeof(path));
    itest_flip_middle_byte(path);
    char *details = NULL, named[300];
    snprintf(named, sizeof(named), "%s/state.delta", object);
    itest_assert_status_naming(itest_resume_from(&node_b, id, object, &details), &details,
                               GRPC_STATUS_DATA_LOSS, named);
    assert_false(itest_sandbox_path_exists(&node_b, id, ""));
    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, STATE(RUNNING));
    char *kept = itest_assert_sh(&itest_vh, id, "cat /root/kept");
    assert_string_equal(kept, "kept\n");
    free(kept);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(object);
    free(id);
}

static void test_server_down_keeps_the_sandbox_running(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    s3rver_stop();
    grpc_status_code st;
    char *details = NULL;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("SuspendSandbox"), id, &st, &details);
    assert_null(sb);
    itest_assert_status_naming(st, &details, GRPC_STATUS_UNAVAILABLE, "s3://" BUCKET);
    char *out = itest_assert_sh(&itest_vh, id, "echo still-here");
    assert_string_equal(out, "still-here\n");
    free(out);
    /* Back: the same suspend goes through, and B resumes it. */
    assert_int_equal(s3rver_start(), 0);
    char *object = itest_assert_suspend_to_store(&itest_vh, id);
    itest_assert_resume_from(&node_b, id, object);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&node_b, id), GRPC_STATUS_OK);
    free(object);
    free(id);
}

static void test_unknown_credentials_refuse_to_start(void **state)
{
    (void)state;
    char wrong[PATH_MAX + 8], err[256];
    snprintf(wrong, sizeof(wrong), "%s/wrong", dir);
    assert_int_equal(fs_write_file_atomic(wrong, "NOBODY:NOTHING", 14, 0600, err, sizeof(err)),
                     0);
    const char *const args[] = { "--snapshot-store", "s3://" BUCKET "/" PREFIX,
                                 "--snapshot-store-endpoint", endpoint,
                                 "--snapshot-store-credentials", wrong, NULL };
    struct itest_vmhost c;
    assert_int_equal(itest_vmhost_start(&c, args), -1);
    char *log = NULL;
    size_t len = 0;
    assert_int_equal(fs_read_file(c.log_path, 1 << 20, &log, &len, err, sizeof(err)), 0);
    assert_non_null(strstr(log, "s3://" BUCKET));
    assert_non_null(strstr(log, "HTTP 403"));
    free(log);
    itest_vmhost_stop(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suspend_on_a_resume_on_b),
        cmocka_unit_test(test_corrupt_object_is_refused),
        cmocka_unit_test(test_server_down_keeps_the_sandbox_running),
        cmocka_unit_test(test_unknown_credentials_refuse_to_start),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
