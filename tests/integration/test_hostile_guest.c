/* A guest that lies: real vmhost, real QEMU, and in every VM the hostile
 * agent (tests/integration/hostile_agent/) in place of guestd — which
 * serves like guestd until a request names a misbehaviour. Each hostile
 * sandbox floods, lies about lengths or stream ids, never finishes a
 * listing or stalls; the sandbox must end in error with the reason (or the
 * call get a bounded error), while a good sandbox on the same vmhost keeps
 * answering exec throughout, vmhost's RSS stays under RSS_GROWTH_MAX above
 * what it was with the good sandbox running, vmhost does not crash, and a
 * deleted hostile sandbox leaves no QEMU, directory or namespace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

/* What vmhost may grow by while hostile guests do their worst: each could
 * make a host that trusted it hold 64 MiB and more. Under AddressSanitizer
 * redzones and the quarantine of freed memory count too: twice that, with
 * the quarantine held to 16 MiB (group_setup). */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_GROWTH_MAX_KB (96u << 10)
#define VMHOST_ASAN_OPTIONS "quarantine_size_mb=16"
#else
#define RSS_GROWTH_MAX_KB (48u << 10)
#endif
#define RSS_SAMPLE_MS 100
#define PROBE_PAUSE_MS 200
/* Bounded waits for an outcome (TCG on shared cores is slow). */
#define OUTCOME_WAIT_MS 180000
#define WINDOW_REASON "payload bytes past the 262144-byte window"

static struct {
    pthread_t sampler, prober;
    bool watching;              /* the threads run (until joined) */
    volatile bool stop;
    pthread_mutex_t lock;
    long rss_baseline_kb, rss_max_kb;
    unsigned probes_ok, probes_failed;
    char first_failure[512];
} watch = { .lock = PTHREAD_MUTEX_INITIALIZER };

static char *good_id;
static char *hostile_id; /* the current test's, deleted by its teardown */

static long vmhost_rss_kb(void)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)itest_vh.pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long kb = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static void *sampler_main(void *arg)
{
    (void)arg;
    while (!watch.stop) {
        long kb = vmhost_rss_kb();
        pthread_mutex_lock(&watch.lock);
        if (kb > watch.rss_max_kb)
            watch.rss_max_kb = kb;
        pthread_mutex_unlock(&watch.lock);
        usleep(RSS_SAMPLE_MS * 1000);
    }
    return NULL;
}

/* Execs in the good sandbox, one after another, for the whole program. */
static void *prober_main(void *arg)
{
    (void)arg;
    const char *argv[] = { "echo", "alive", NULL };
    while (!watch.stop) {
        struct itest_exec_result r;
        itest_exec(&itest_vh, good_id, argv, NULL, &r);
        bool ok = r.status == GRPC_STATUS_OK && r.exited && r.exit_code == 0 &&
                  strcmp((char *)r.out, "alive\n") == 0;
        pthread_mutex_lock(&watch.lock);
        if (ok) {
            watch.probes_ok++;
        } else if (watch.probes_failed++ == 0) {
            snprintf(watch.first_failure, sizeof(watch.first_failure), "%s: %s",
                     rpc_status_name(r.status), r.details ? r.details : "");
        }
        pthread_mutex_unlock(&watch.lock);
        itest_exec_result_free(&r);
        usleep(PROBE_PAUSE_MS * 1000);
    }
    return NULL;
}

static int group_setup(void **state)
{
    (void)state;
    const char *args[] = { "--guestd", AIRLOCK_HOSTILE_AGENT_BIN, NULL };
#ifdef VMHOST_ASAN_OPTIONS
    char asan[512];
    const char *given = getenv("ASAN_OPTIONS");
    snprintf(asan, sizeof(asan), "%s%s%s", given ? given : "", given ? ":" : "",
             VMHOST_ASAN_OPTIONS);
    setenv("ASAN_OPTIONS", asan, 1); /* read by vmhost at its start */
#endif
    if (itest_vmhost_start(&itest_vh, args) < 0)
        return -1;
    grpc_status_code st;
    char *details = NULL;
    good_id = itest_create_sandbox(&itest_vh, &st, &details);
    if (!good_id) {
        fprintf(stderr, "CreateSandbox (good): %s: %s\n", rpc_status_name(st),
                details ? details : "");
        itest_vmhost_print_log_tail(&itest_vh);
    }
    free(details);
    if (!good_id)
        return -1;
    /* The agent relays to a real guestd: the good sandbox is a normal one. */
    struct itest_exec_result r;
    const char *argv[] = { "echo", "alive", NULL };
    itest_exec(&itest_vh, good_id, argv, NULL, &r);
    bool ok = r.status == GRPC_STATUS_OK && strcmp((char *)r.out, "alive\n") == 0;
    itest_exec_result_free(&r);
    if (!ok) {
        fprintf(stderr, "the good sandbox does not answer exec\n");
        return -1;
    }
    watch.rss_baseline_kb = watch.rss_max_kb = vmhost_rss_kb();
    pthread_create(&watch.sampler, NULL, sampler_main, NULL);
    pthread_create(&watch.prober, NULL, prober_main, NULL);
    watch.watching = true;
    return 0;
}

static void watch_stop(void)
{
    if (!watch.watching)
        return;
    watch.stop = true;
    pthread_join(watch.sampler, NULL);
    pthread_join(watch.prober, NULL);
    watch.watching = false;
}

static int group_teardown(void **state)
{
    (void)state;
    watch_stop();
    if (good_id)
        itest_delete_sandbox(&itest_vh, good_id);
    free(good_id);
    return itest_vmhost_stop(&itest_vh);
}

/* Creates the test's hostile sandbox, hostile-<name>. */
static void hostile_create(const char *name)
{
    char id[64];
    snprintf(id, sizeof(id), "hostile-%s", name);
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = id;
    grpc_status_code st;
    char *details = NULL;
    hostile_id = itest_create_sandbox_with(&itest_vh, &req, &st, &details);
    if (!hostile_id)
        fail_msg("CreateSandbox %s: %s: %s", id, rpc_status_name(st), details ? details : "");
    free(details);
}

/* Deletes the test's hostile sandbox; what it had must be gone. */
static int hostile_teardown(void **state)
{
    (void)state;
    if (!hostile_id)
        return 0;
    grpc_status_code st = itest_delete_sandbox(&itest_vh, hostile_id);
    bool dir = itest_sandbox_path_exists(&itest_vh, hostile_id, "");
    bool netns = itest_netns_exists(hostile_id);
    size_t qemus = itest_count_qemus(itest_vh.data_dir);
    bool gone = !dir && !netns && qemus == 1;
    if (st != GRPC_STATUS_OK || !gone) {
        fprintf(stderr, "delete %s: %s; directory %s, netns %s, %zu QEMUs (want 1)\n",
                hostile_id, rpc_status_name(st), dir ? "left" : "gone", netns ? "left" : "gone",
                qemus);
        itest_vmhost_print_log_tail(&itest_vh);
    }
    free(hostile_id);
    hostile_id = NULL;
    return st == GRPC_STATUS_OK && gone ? 0 : -1;
}

/* Waits (bounded) for the hostile sandbox to be cut off: in state error
 * naming reason (kept after its QEMU is gone), and its QEMU killed, the
 * good sandbox's alone left. */
static void assert_hostile_error(const char *reason)
{
    int64_t deadline = clock_monotonic_ms() + OUTCOME_WAIT_MS;
    for (;;) {
        Airlock__Vmhost__V1__Sandbox *sb = itest_assert_get(&itest_vh, hostile_id);
        bool error = sb->state == AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_ERROR;
        if (error && !strstr(sb->error, reason))
            fail_msg("sandbox %s error \"%s\" does not name \"%s\"", hostile_id, sb->error,
                     reason);
        protobuf_c_message_free_unpacked(&sb->base, NULL);
        size_t qemus = itest_count_qemus(itest_vh.data_dir);
        if (error && qemus == 1)
            return;
        if (clock_monotonic_ms() > deadline) {
            itest_vmhost_print_log_tail(&itest_vh);
            fail_msg("sandbox %s: %s, %zu QEMUs (want the good one alone) after %d s", hostile_id,
                     error ? "in error" : "not in error", qemus, OUTCOME_WAIT_MS / 1000);
        }
        usleep(200 * 1000);
    }
}

static void assert_hostile_running(void)
{
    Airlock__Vmhost__V1__Sandbox *sb = itest_assert_get(&itest_vh, hostile_id);
    assert_int_equal(sb->state, AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_RUNNING);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
}

/* Exec of `airlock-hostile what` in the hostile sandbox: its status, which
 * must name want (details checked, then freed). */
static void hostile_exec_expect(const char *what, grpc_status_code want, const char *named)
{
    struct itest_exec_result r;
    const char *argv[] = { "airlock-hostile", what, NULL };
    itest_exec(&itest_vh, hostile_id, argv, NULL, &r);
    itest_assert_status_naming(r.status, &r.details, want, named);
    itest_exec_result_free(&r);
}

static void hostile_list_expect(const char *what, grpc_status_code want, const char *named)
{
    char path[64];
    snprintf(path, sizeof(path), "/airlock-hostile/%s", what);
    Airlock__Guest__V1__ListRequest lr = AIRLOCK__GUEST__V1__LIST_REQUEST__INIT;
    lr.path = (ProtobufCBinaryData){ .len = strlen(path), .data = (uint8_t *)path };
    Airlock__Vmhost__V1__ListDirRequest req = AIRLOCK__VMHOST__V1__LIST_DIR_REQUEST__INIT;
    req.sandbox_id = hostile_id;
    req.request = &lr;
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(itest_vh.ch, ITEST_METHOD("ListDir"), &req.base,
                                    &airlock__vmhost__v1__list_dir_response__descriptor, &resp,
                                    &details, ITEST_CALL_TIMEOUT_MS);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    itest_assert_status_naming(st, &details, want, named);
}

/* Output past the window while the client reads nothing: vmhost's queue
 * may not grow; the guest is cut off. */
static void test_flood_past_window(void **state)
{
    (void)state;
    hostile_create("flood");
    Airlock__Vmhost__V1__ExecRequest req = AIRLOCK__VMHOST__V1__EXEC_REQUEST__INIT;
    ProtobufCBinaryData argv[2] = { { 15, (uint8_t *)"airlock-hostile" }, { 5, (uint8_t *)"flood" } };
    req.sandbox_id = hostile_id;
    req.n_argv = 2;
    req.argv = argv;
    struct rpc_stream *s = rpc_stream_open(itest_vh.ch, ITEST_METHOD("Exec"), ITEST_CALL_TIMEOUT_MS);
    assert_int_equal(rpc_stream_send(s, &req.base), 0);
    rpc_stream_close_send(s);
    assert_hostile_error(WINDOW_REASON);
    rpc_stream_cancel(s);
    rpc_stream_finish(s, NULL);
}

static void test_unknown_stream_id(void **state)
{
    (void)state;
    hostile_create("unknown-stream");
    const char *reason = "frame on stream 2147418112, which vmhost never opened";
    hostile_exec_expect("unknown-stream", GRPC_STATUS_UNAVAILABLE, reason);
    assert_hostile_error(reason);
}

static void test_oversize_length(void **state)
{
    (void)state;
    hostile_create("oversize");
    const char *reason = "frame larger than the protocol maximum";
    hostile_exec_expect("oversize", GRPC_STATUS_UNAVAILABLE, reason);
    assert_hostile_error(reason);
}

static void test_lying_inner_length(void **state)
{
    (void)state;
    hostile_create("lie-length");
    const char *reason = "malformed frame";
    hostile_exec_expect("lie-length", GRPC_STATUS_UNAVAILABLE, reason);
    assert_hostile_error(reason);
}

/* Never says done, and goes on after the host gave up on it. */
static void test_endless_listing(void **state)
{
    (void)state;
    hostile_create("endless");
    hostile_list_expect("endless", GRPC_STATUS_RESOURCE_EXHAUSTED, "larger than 8388608 bytes");
    assert_hostile_error("after it was closed");
}

/* Never says done, slowly: within every per-frame wait, past the whole. */
static void test_trickling_listing(void **state)
{
    (void)state;
    hostile_create("trickle");
    hostile_list_expect("trickle", GRPC_STATUS_DEADLINE_EXCEEDED,
                        "did not finish the listing within 60000 ms");
    assert_hostile_running(); /* slow is not a lie */
}

static void test_stall(void **state)
{
    (void)state;
    hostile_create("stall");
    hostile_exec_expect("stall", GRPC_STATUS_DEADLINE_EXCEEDED, "did not answer within");
    assert_hostile_running();
}

/* Last: what the whole program did to vmhost and to the good sandbox. */
static void test_vmhost_and_good_sandbox_unharmed(void **state)
{
    (void)state;
    assert_int_equal(kill(itest_vh.pid, 0), 0);
    watch_stop();
    long final = vmhost_rss_kb();
    fprintf(stderr,
            "vmhost RSS: %ld kB with the good sandbox, at most %ld kB during the hostile "
            "guests (growth %ld kB, bound %u kB), %ld kB now; good sandbox: %u execs "
            "answered, %u failed\n",
            watch.rss_baseline_kb, watch.rss_max_kb,
            watch.rss_max_kb - watch.rss_baseline_kb, RSS_GROWTH_MAX_KB, final,
            watch.probes_ok, watch.probes_failed);
    if (watch.probes_failed)
        itest_vmhost_print_log_tail(&itest_vh);
    if (watch.probes_failed)
        fail_msg("the good sandbox failed %u execs; first: %s", watch.probes_failed,
                 watch.first_failure);
    assert_true(watch.probes_ok > 0);
    assert_true(watch.rss_max_kb - watch.rss_baseline_kb <= (long)RSS_GROWTH_MAX_KB);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_flood_past_window, hostile_teardown),
        cmocka_unit_test_teardown(test_unknown_stream_id, hostile_teardown),
        cmocka_unit_test_teardown(test_oversize_length, hostile_teardown),
        cmocka_unit_test_teardown(test_lying_inner_length, hostile_teardown),
        cmocka_unit_test_teardown(test_endless_listing, hostile_teardown),
        cmocka_unit_test_teardown(test_trickling_listing, hostile_teardown),
        cmocka_unit_test_teardown(test_stall, hostile_teardown),
        cmocka_unit_test(test_vmhost_and_good_sandbox_unharmed),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
