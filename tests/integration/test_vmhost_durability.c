/* Durability of vmhost (docs/vm-driver.md "Durability") with real QEMU and
 * a real loop-mounted btrfs store:
 * - kill -9 of vmhost: the next one adopts the running VM (same QEMU, a
 *   counting process in the guest keeps counting, files intact); a VM whose
 *   QEMU died meanwhile comes back as error, saying so; a suspended sandbox
 *   and its checkpoints survive and resume/restore work;
 * - vmhost killed at each named point of a suspend (AIRLOCK_CRASH_AT):
 *   afterwards the sandbox is either running (the same VM) or suspended
 *   with a complete snapshot, never torn, and nothing temporary is left;
 * - a clean stop (SIGTERM) leaves no QEMU and no namespace, and the next
 *   vmhost resumes the sandboxes on first use (a paused one to paused);
 * - a directory without a record (a create cut short) is removed;
 * - a full store: a FULL checkpoint and a suspend answer RESOURCE_EXHAUSTED
 *   naming the store, the sandbox keeps running, no partial files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s
#define KIND(k) AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_##k
/* crash_point.h's exit status. */
#define CRASH_POINT_EXIT_STATUS 86
/* A suspend reaches its last crash point within seconds. */
#define CRASH_WAIT_MS 120000
/* Free space left on the store by the disk-full test: enough for the
 * guests' own writes, far from what a full snapshot of 512 MiB needs. */
#define DISK_FULL_LEFT_FREE (96ll << 20)

static int group_setup(void **state)
{
    (void)state;
    /* A small store, so the disk-full test can fill it. */
    const char *args[] = { "--store-size-gb", "4", NULL };
    return itest_vmhost_start(&itest_vh, args);
}

static char *sh_out(const char *id, const char *script)
{
    return itest_assert_sh(&itest_vh, id, script);
}

static Airlock__Vmhost__V1__Sandbox *get(const char *id)
{
    return itest_assert_get(&itest_vh, id);
}

static int state_of(const char *id)
{
    Airlock__Vmhost__V1__Sandbox *sb = get(id);
    int s = sb->state;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return s;
}

static pid_t qemu_of(const char *id)
{
    Airlock__Vmhost__V1__Sandbox *sb = get(id);
    pid_t pid = sb->qemu_pid;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return pid;
}

/* Names in the sandbox's checkpoints/ directory, "" when none. */
static void checkpoint_entries(const char *id, char *out, size_t outlen)
{
    char path[PATH_MAX];
    out[0] = '\0';
    assert_int_equal(
        fs_path(path, sizeof(path), "%s/store/sandboxes/%s/checkpoints", itest_vh.data_dir, id), 0);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            snprintf(out + strlen(out), outlen - strlen(out), "%s ", e->d_name);
    closedir(d);
}

/* A detached counting loop (survives sessions, like a user's daemon) and a
 * file with known content, both in the guest. */
static void start_workload(const char *id)
{
    free(sh_out(id, "setsid sh -c 'i=0; while true; do i=$((i+1)); echo $i > /root/counter.tmp;"
                    " mv /root/counter.tmp /root/counter; sleep 0.2; done' </dev/null >/dev/null"
                    " 2>&1 & echo $! > /root/counter.pid;"
                    "echo kept-across-restarts > /root/kept; sync;"
                    "for i in $(seq 300); do [ -s /root/counter ] && break; sleep 0.1; done"));
}

struct counter {
    long pid;
    long value;
};

static void counter_read(const char *id, struct counter *c)
{
    char *out = sh_out(id, "cat /root/counter.pid /root/counter");
    assert_int_equal(sscanf(out, "%ld %ld", &c->pid, &c->value), 2);
    free(out);
}

/* The same process is alive and counts on past before (and the file is
 * intact). The loop only bounds a wait for progress. */
static void assert_workload_continues(const char *id, const struct counter *before)
{
    char *kept = sh_out(id, "cat /root/kept");
    assert_string_equal(kept, "kept-across-restarts\n");
    free(kept);
    char *alive = sh_out(id, "kill -0 $(cat /root/counter.pid) && echo alive");
    assert_string_equal(alive, "alive\n");
    free(alive);
    struct counter now = { 0 };
    for (int i = 0; i < 600; i++) {
        counter_read(id, &now);
        assert_int_equal(now.pid, before->pid);
        if (now.value > before->value)
            return;
        usleep(100 * 1000);
    }
    fail_msg("the counter of %s stayed at %ld", id, now.value);
}

static char *create_with_workload(struct counter *c)
{
    char *id = itest_assert_create(&itest_vh);
    start_workload(id);
    counter_read(id, c);
    assert_true(c->value > 0);
    return id;
}

static void delete_and_check_gone(const char *id)
{
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_false(itest_sandbox_path_exists(&itest_vh, id, ""));
    assert_false(itest_netns_exists(id));
}

/* A Sandbox-answering call by id (Suspend, Resume, Pause) and its status. */
static grpc_status_code lifecycle(const char *method, const char *id, char **details)
{
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb = itest_sandbox_call(&itest_vh, method, id, &st, details);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return st;
}

static grpc_status_code create_checkpoint(const char *id, const char *name, int kind,
                                          char **details)
{
    return itest_create_checkpoint(&itest_vh, id, name, kind, details);
}

static void test_kill9_adopts_running_sandbox(void **state)
{
    (void)state;
    struct counter before;
    char *id = create_with_workload(&before);
    pid_t qemu = qemu_of(id);

    assert_int_equal(itest_vmhost_crash_and_restart(&itest_vh), 0);
    assert_int_equal(state_of(id), STATE(RUNNING));
    assert_int_equal(qemu_of(id), qemu); /* the same VM, not a new one */
    assert_workload_continues(id, &before);
    /* Adopted VMs can still be paused, resumed and deleted. */
    itest_assert_transition(&itest_vh, ITEST_METHOD("PauseSandbox"), id, STATE(PAUSED));
    assert_int_equal(itest_vmhost_crash_and_restart(&itest_vh), 0);
    assert_int_equal(state_of(id), STATE(PAUSED));
    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, STATE(RUNNING));
    assert_workload_continues(id, &before);
    delete_and_check_gone(id);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
    free(id);
}

/* vmhost frozen, its QEMU killed, then vmhost killed: the next one finds
 * the record but no VM. */
static void test_vm_gone_at_restart_is_error(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    pid_t qemu = qemu_of(id);
    assert_true(qemu > 1);
    /* Stopped, vmhost cannot reap QEMU: the pid stays QEMU's until then. */
    assert_int_equal(kill(itest_vh.pid, SIGSTOP), 0);
    assert_int_equal(kill(qemu, SIGKILL), 0);
    assert_int_equal(itest_vmhost_crash_and_restart(&itest_vh), 0);

    Airlock__Vmhost__V1__Sandbox *sb = get(id);
    assert_int_equal(sb->state, STATE(ERROR));
    assert_non_null(strstr(sb->error, "was gone when vmhost restarted"));
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    struct itest_exec_result r;
    itest_sh(&itest_vh, id, "true", &r);
    assert_int_equal(r.status, GRPC_STATUS_FAILED_PRECONDITION);
    itest_exec_result_free(&r);
    delete_and_check_gone(id);
    free(id);
}

static void test_kill9_keeps_suspended_and_checkpoints(void **state)
{
    (void)state;
    struct counter before;
    char *id = create_with_workload(&before);
    free(sh_out(id, "echo one > /root/version; sync"));
    char *details = NULL;
    assert_int_equal(create_checkpoint(id, "cp1", KIND(FULL), &details), GRPC_STATUS_OK);
    free(details);
    free(sh_out(id, "echo two > /root/version; sync"));
    itest_assert_transition(&itest_vh, ITEST_METHOD("SuspendSandbox"), id, STATE(SUSPENDED));

    assert_int_equal(itest_vmhost_crash_and_restart(&itest_vh), 0);
    assert_int_equal(state_of(id), STATE(SUSPENDED));
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
    char entries[512];
    checkpoint_entries(id, entries, sizeof(entries));
    assert_string_equal(entries, "cp1 ");

    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, STATE(RUNNING));
    assert_workload_continues(id, &before);
    char *version = sh_out(id, "cat /root/version");
    assert_string_equal(version, "two\n");
    free(version);

    Airlock__Vmhost__V1__CheckpointRequest req = AIRLOCK__VMHOST__V1__CHECKPOINT_REQUEST__INIT;
    req.sandbox_id = id;
    req.name = "cp1";
    assert_int_equal(itest_call(&itest_vh, ITEST_METHOD("RestoreCheckpoint"), &req.base,
                                &airlock__vmhost__v1__sandbox__descriptor, NULL),
                     GRPC_STATUS_OK);
    version = sh_out(id, "cat /root/version");
    assert_string_equal(version, "one\n");
    free(version);
    delete_and_check_gone(id);
    free(id);
}

/* Waits for vmhost to end by itself and checks it was the hook (without
 * reaping: itest_vmhost_crash_and_restart does that). A vmhost that never
 * reached the point (the request failed before it) fails the test rather
 * than hanging it. */
static void assert_crashed_on_purpose(const char *point)
{
    siginfo_t si = { 0 };
    for (int waited_ms = 0; si.si_pid == 0; waited_ms += 100) {
        assert_int_equal(waitid(P_PID, (id_t)itest_vh.pid, &si, WEXITED | WNOWAIT | WNOHANG), 0);
        if (si.si_pid == 0 && waited_ms >= CRASH_WAIT_MS) {
            itest_vmhost_print_log_tail(&itest_vh);
            fail_msg("vmhost did not crash at %s within %d s", point, CRASH_WAIT_MS / 1000);
        }
        if (si.si_pid == 0)
            usleep(100 * 1000);
    }
    assert_int_equal(si.si_code, CLD_EXITED);
    assert_int_equal(si.si_status, CRASH_POINT_EXIT_STATUS);
}

static void test_crash_during_suspend_is_never_torn(void **state)
{
    (void)state;
    static const struct {
        const char *point;
        int outcome; /* what the next vmhost finds */
    } points[] = {
        { "suspend-stopped", STATE(RUNNING) },  /* VM stopped, nothing written */
        { "suspend-migrated", STATE(RUNNING) }, /* state in suspend.tmp */
        { "suspend-renamed", STATE(RUNNING) },  /* complete snapshot, record says running */
        { "suspend-recorded", STATE(SUSPENDED) }, /* record says suspended, QEMU still there */
    };
    struct counter before;
    char *id = create_with_workload(&before);
    for (size_t i = 0; i < sizeof(points) / sizeof(*points); i++) {
        pid_t qemu = qemu_of(id);
        assert_int_equal(setenv("AIRLOCK_CRASH_AT", points[i].point, 1), 0);
        int restarted = itest_vmhost_crash_and_restart(&itest_vh);
        unsetenv("AIRLOCK_CRASH_AT");
        assert_int_equal(restarted, 0);
        char *details = NULL;
        assert_int_not_equal(lifecycle(ITEST_METHOD("SuspendSandbox"), id, &details),
                             GRPC_STATUS_OK);
        free(details);
        assert_crashed_on_purpose(points[i].point);
        assert_int_equal(itest_vmhost_crash_and_restart(&itest_vh), 0);

        int want = points[i].outcome;
        if (state_of(id) != want)
            fail_msg("after a crash at %s: state %d, want %d", points[i].point, state_of(id),
                     want);
        assert_false(itest_sandbox_path_exists(&itest_vh, id, "suspend.tmp"));
        if (want == STATE(RUNNING)) {
            assert_int_equal(qemu_of(id), qemu);
            assert_false(itest_sandbox_path_exists(&itest_vh, id, "suspend"));
        } else {
            assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
            assert_true(itest_sandbox_path_exists(&itest_vh, id, "suspend/state"));
            assert_true(itest_sandbox_path_exists(&itest_vh, id, "suspend/disk.ext4"));
            itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, STATE(RUNNING));
        }
        assert_workload_continues(id, &before);
        counter_read(id, &before);
    }
    delete_and_check_gone(id);
    free(id);
}

/* A clean stop keeps sandboxes as files only; the next vmhost resumes each
 * on its first request, a paused one back to paused. */
static void test_clean_stop_keeps_sandboxes(void **state)
{
    (void)state;
    struct counter ran, paused_before;
    char *running = create_with_workload(&ran);
    char *paused = create_with_workload(&paused_before);
    char *asleep = itest_assert_create(&itest_vh);
    itest_assert_transition(&itest_vh, ITEST_METHOD("PauseSandbox"), paused, STATE(PAUSED));

    assert_int_equal(itest_vmhost_restart(&itest_vh), 0);
    /* The stop left no VM and no namespace (the restart checked the store
     * was unmounted); the new vmhost started none. */
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
    assert_false(itest_netns_exists(running));
    assert_false(itest_netns_exists(paused));
    assert_int_equal(state_of(running), STATE(SUSPENDED));
    assert_int_equal(state_of(paused), STATE(SUSPENDED));

    /* First use: running again, same processes, same files. */
    assert_workload_continues(running, &ran);
    assert_int_equal(state_of(running), STATE(RUNNING));
    assert_true(itest_netns_exists(running));
    /* Paused before the stop: paused again, as its users last saw it. */
    itest_assert_refused(&itest_vh, ITEST_METHOD("PauseSandbox"), paused, "paused");
    assert_int_equal(state_of(paused), STATE(PAUSED));
    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), paused, STATE(RUNNING));
    assert_workload_continues(paused, &paused_before);
    /* A suspend request makes it an ordinary suspended sandbox: no resume
     * on first use any more. */
    itest_assert_transition(&itest_vh, ITEST_METHOD("SuspendSandbox"), asleep, STATE(SUSPENDED));
    struct itest_exec_result r;
    itest_sh(&itest_vh, asleep, "true", &r);
    assert_int_equal(r.status, GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(r.details, "suspended"));
    itest_exec_result_free(&r);

    delete_and_check_gone(running);
    delete_and_check_gone(paused);
    delete_and_check_gone(asleep);
    free(running);
    free(paused);
    free(asleep);
}

/* A directory without a record is a create cut short: removed, its QEMU
 * stopped, its namespace deleted. */
static void test_directory_without_record_is_removed(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    char record[PATH_MAX];
    assert_int_equal(fs_path(record, sizeof(record), "%s/store/sandboxes/%s/sandbox.json",
                             itest_vh.data_dir, id),
                     0);
    assert_int_equal(unlink(record), 0);
    assert_int_equal(itest_vmhost_crash_and_restart(&itest_vh), 0);
    for (int i = 0; i < 100 && itest_count_qemus(itest_vh.data_dir) > 0; i++)
        usleep(20 * 1000);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
    assert_false(itest_sandbox_path_exists(&itest_vh, id, ""));
    assert_false(itest_netns_exists(id));
    grpc_status_code st;
    assert_null(itest_sandbox_call(&itest_vh, ITEST_METHOD("GetSandbox"), id, &st, NULL));
    assert_int_equal(st, GRPC_STATUS_NOT_FOUND);
    free(id);
}

/* Free bytes of the file system at path, after committing what is pending. */
static long long store_free(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    assert_int_equal(syncfs(fd), 0);
    close(fd);
    struct statvfs sv;
    assert_int_equal(statvfs(path, &sv), 0);
    return (long long)sv.f_bavail * (long long)sv.f_frsize;
}

static void assert_refused_for_space(grpc_status_code st, char **details, long long left)
{
    if (st != GRPC_STATUS_RESOURCE_EXHAUSTED)
        fail_msg("status %s with %lld MiB free, want RESOURCE_EXHAUSTED: %s", rpc_status_name(st),
                 left >> 20, *details ? *details : "");
    char store[PATH_MAX + 8];
    snprintf(store, sizeof(store), "%s/store", itest_vh.data_dir);
    assert_non_null(strstr(*details, store));
    assert_non_null(strstr(*details, "full"));
    free(*details);
    *details = NULL;
}

static void test_full_store_refuses_snapshots(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    char store[PATH_MAX], filler[PATH_MAX];
    assert_int_equal(fs_path(store, sizeof(store), "%s/store", itest_vh.data_dir), 0);
    assert_int_equal(fs_path(filler, sizeof(filler), "%s/filler", store), 0);
    /* btrfs counts space taken or freed when its transaction commits:
     * sync before measuring and after filling. */
    long long avail = store_free(store);
    assert_true(avail > DISK_FULL_LEFT_FREE);
    int fd = open(filler, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    int filled = posix_fallocate(fd, 0, avail - DISK_FULL_LEFT_FREE);
    if (filled == 0 && fsync(fd) < 0)
        filled = errno;
    close(fd);
    if (filled != 0) {
        unlink(filler);
        fail_msg("fallocate %s: %s", filler, strerror(filled));
    }
    long long left = store_free(store);

    char *details = NULL;
    grpc_status_code full_cp = create_checkpoint(id, "big", KIND(FULL), &details);
    grpc_status_code suspend = GRPC_STATUS_OK;
    char *suspend_details = NULL;
    if (full_cp == GRPC_STATUS_RESOURCE_EXHAUSTED)
        suspend = lifecycle(ITEST_METHOD("SuspendSandbox"), id, &suspend_details);
    unlink(filler);
    assert_refused_for_space(full_cp, &details, left);
    assert_refused_for_space(suspend, &suspend_details, left);

    /* Still running, nothing half-written, and with room it works. */
    assert_int_equal(state_of(id), STATE(RUNNING));
    free(sh_out(id, "true"));
    char entries[512];
    checkpoint_entries(id, entries, sizeof(entries));
    assert_string_equal(entries, "");
    assert_false(itest_sandbox_path_exists(&itest_vh, id, "suspend.tmp"));
    assert_false(itest_sandbox_path_exists(&itest_vh, id, "suspend"));
    assert_int_equal(create_checkpoint(id, "big", KIND(FULL), &details), GRPC_STATUS_OK);
    free(details);
    delete_and_check_gone(id);
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_adopts_running_sandbox),
        cmocka_unit_test(test_vm_gone_at_restart_is_error),
        cmocka_unit_test(test_kill9_keeps_suspended_and_checkpoints),
        cmocka_unit_test(test_crash_during_suspend_is_never_torn),
        cmocka_unit_test(test_clean_stop_keeps_sandboxes),
        cmocka_unit_test(test_directory_without_record_is_removed),
        cmocka_unit_test(test_full_store_refuses_snapshots),
    };
    return cmocka_run_group_tests(tests, group_setup, itest_group_teardown);
}
