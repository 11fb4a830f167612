/* Suspend to disk and resume on a real vmhost: a counting shell loop, a
 * file being appended and a python process holding a value in memory all
 * carry on after suspend -> resume (same pids), QEMU is gone while
 * suspended, the snapshot is a complete directory (never suspend.tmp),
 * illegal transitions answer FAILED_PRECONDITION naming the state, a paused
 * sandbox can be suspended too, and a suspended one can be deleted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s

static char *sh_out(const char *id, const char *script)
{
    return itest_assert_sh(&itest_vh, id, script);
}

/* "pids counter lines secret" as the guest sees them now. */
struct workload {
    char pids[128];
    long counter;
    long lines;
    char secret[64];
    double py_time;
};

static void workload_read(const char *id, struct workload *w)
{
    char *out = sh_out(id, "cat /root/pids | tr '\\n' ,; echo;"
                           "cat /root/counter; wc -l < /root/append.log; cat /root/py.txt");
    assert_int_equal(sscanf(out, "%127s %ld %ld %63s %lf", w->pids, &w->counter, &w->lines,
                            w->secret, &w->py_time),
                     5);
    free(out);
}

static void test_suspend_resume_keeps_processes(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    /* Three detached workloads; their pids go to /root/pids. */
    free(sh_out(id,
                "setsid sh -c 'i=0; while true; do i=$((i+1)); echo $i > /root/counter.tmp;"
                " mv /root/counter.tmp /root/counter; sleep 0.2; done' </dev/null >/dev/null 2>&1 &"
                " echo $! > /root/pids;"
                "setsid sh -c 'while true; do date +%s%N >> /root/append.log; sleep 0.2; done'"
                " </dev/null >/dev/null 2>&1 & echo $! >> /root/pids;"
                "setsid python3 -c 'import os, time\n"
                "secret = os.urandom(8).hex()\n"
                "while True:\n"
                "    open(\"/root/py.tmp\", \"w\").write(secret + \" \" + str(time.time()))\n"
                "    os.rename(\"/root/py.tmp\", \"/root/py.txt\")\n"
                "    time.sleep(0.2)\n' </dev/null >/dev/null 2>&1 & echo $! >> /root/pids;"
                /* python takes a while to start under TCG: wait for all three */
                "for i in $(seq 600); do [ -s /root/py.txt ] && [ -s /root/counter ] &&"
                " [ -s /root/append.log ] && break; sleep 0.1; done; sleep 0.5"));
    struct workload before, after;
    workload_read(id, &before);
    assert_true(before.counter > 0);

    itest_assert_transition(&itest_vh, ITEST_METHOD("SuspendSandbox"), id, STATE(SUSPENDED));
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
    assert_true(itest_sandbox_path_exists(&itest_vh, id, "suspend/state"));
    assert_true(itest_sandbox_path_exists(&itest_vh, id, "suspend/disk.ext4"));
    assert_false(itest_sandbox_path_exists(&itest_vh, id, "suspend.tmp"));

    itest_assert_refused(&itest_vh, ITEST_METHOD("PauseSandbox"), id, "suspended");
    itest_assert_refused(&itest_vh, ITEST_METHOD("SuspendSandbox"), id, "suspended");
    struct itest_exec_result r;
    itest_sh(&itest_vh, id, "true", &r);
    assert_int_equal(r.status, GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(r.details, "suspended"));
    itest_exec_result_free(&r);

    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, STATE(RUNNING));
    assert_false(itest_sandbox_path_exists(&itest_vh, id, "suspend"));
    free(sh_out(id, "sleep 1"));
    workload_read(id, &after);
    /* Same processes, same in-memory value, and all of them moved on. */
    assert_string_equal(after.pids, before.pids);
    assert_string_equal(after.secret, before.secret);
    assert_true(after.counter > before.counter);
    assert_true(after.lines > before.lines);
    assert_true(after.py_time > before.py_time);
    char *alive = sh_out(id, "for p in $(cat /root/pids); do kill -0 $p && echo ok; done | wc -l");
    assert_int_equal(atoi(alive), 3);
    free(alive);
    /* The clock was set after the resume (the snapshot's is seconds old). */
    char *skew = sh_out(id, "echo $(( $(date +%s) ))");
    long guest_now = atol(skew);
    free(skew);
    long host_now = (long)time(NULL);
    assert_true(guest_now >= host_now - 2 && guest_now <= host_now + 2);

    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
}

static void test_suspend_paused_and_delete_suspended(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    free(sh_out(id, "echo kept > /root/kept"));
    itest_assert_transition(&itest_vh, ITEST_METHOD("PauseSandbox"), id, STATE(PAUSED));
    itest_assert_transition(&itest_vh, ITEST_METHOD("SuspendSandbox"), id, STATE(SUSPENDED));
    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, STATE(RUNNING));
    char *out = sh_out(id, "cat /root/kept");
    assert_string_equal(out, "kept\n");
    free(out);
    itest_assert_refused(&itest_vh, ITEST_METHOD("ResumeSandbox"), id, "running");

    itest_assert_transition(&itest_vh, ITEST_METHOD("SuspendSandbox"), id, STATE(SUSPENDED));
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    char dir[PATH_MAX];
    assert_int_equal(fs_path(dir, sizeof(dir), "%s/store/sandboxes/%s", itest_vh.data_dir, id), 0);
    assert_int_equal(access(dir, F_OK), -1);
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suspend_resume_keeps_processes),
        cmocka_unit_test(test_suspend_paused_and_delete_suspended),
    };
    return cmocka_run_group_tests(tests, itest_group_setup, itest_group_teardown);
}
