/* Live migration of a running sandbox between two real vmhosts (A, B) on
 * one machine and one shared store directory (docs/snapshot-store.md
 * "Live migration"), through vmhost's steps as the scheduler's drain
 * takes them: the guest keeps its processes, memory and files (a counting
 * loop, a python process's value, 4 MiB of random bytes), and a file it
 * writes and syncs all through the migration is whole on B after the
 * guest's caches are dropped (the disk's changes after the first pass
 * arrived at the switchover); A keeps nothing once its copy is deleted.
 * Failures leave the guest running where it was: a wrong token (the
 * target drops the connection), an address nobody serves, and a source
 * aborted after its switchover (the target then never finished). B has
 * a namespace prefix of its own, as two nodes on one machine must. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"
#include "itest_shared_store.h"

#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s
#define MIGRATE_CALL_MS 300000

static struct itest_vmhost node_b;
static char store_dir[64] = "/tmp/airlock-migrate-store-XXXXXX";

static int group_setup(void **state)
{
    (void)state;
    const char *const b_args[] = { "--netns-prefix", "airlock-b-", NULL };
    return itest_store_pair_start(store_dir, &node_b, b_args);
}

static int group_teardown(void **state)
{
    return itest_store_pair_stop(store_dir, &node_b, state);
}

/* One step: its status; *out its answer when OK (else NULL). */
static grpc_status_code step(struct itest_vmhost *vh, const char *method,
                             const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp,
                             ProtobufCMessage **out, char **details)
{
    *out = NULL;
    return rpc_unary(vh->ch, method, req, resp, out, details, MIGRATE_CALL_MS);
}

static void must(grpc_status_code st, struct itest_vmhost *vh, const char *what, char *details)
{
    if (st != GRPC_STATUS_OK) {
        itest_vmhost_print_log_tail(vh);
        fail_msg("%s: %s", what, details ? details : "?");
    }
    free(details);
}

static Airlock__Vmhost__V1__Migration *begin(const char *id)
{
    Airlock__Vmhost__V1__SandboxRef ref = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    ref.id = (char *)id;
    ProtobufCMessage *out;
    char *details = NULL;
    must(step(&itest_vh, ITEST_METHOD("MigrateBegin"), &ref.base,
              &airlock__vmhost__v1__migration__descriptor, &out, &details),
         &itest_vh, "MigrateBegin", details);
    Airlock__Vmhost__V1__Migration *m = (void *)out;
    assert_true(strncmp(m->store_object, "migrations/", 11) == 0);
    return m;
}

static Airlock__Vmhost__V1__Migration *prepare(const char *id, const char *object)
{
    Airlock__Vmhost__V1__Migration req = AIRLOCK__VMHOST__V1__MIGRATION__INIT;
    req.id = (char *)id;
    req.store_object = (char *)object;
    req.peer_node = "node-a";
    ProtobufCMessage *out;
    char *details = NULL;
    must(step(&node_b, ITEST_METHOD("MigratePrepare"), &req.base,
              &airlock__vmhost__v1__migration__descriptor, &out, &details),
         &node_b, "MigratePrepare", details);
    Airlock__Vmhost__V1__Migration *m = (void *)out;
    assert_non_null(strstr(m->address, "127.0.0.1:"));
    assert_int_equal(strlen(m->token), 64);
    return m;
}

/* MigrateSend to address with token: its status, details malloc'd. */
static grpc_status_code send_to(const char *id, const char *address, const char *token,
                                int64_t *stopped_ms, char **details)
{
    Airlock__Vmhost__V1__Migration req = AIRLOCK__VMHOST__V1__MIGRATION__INIT;
    req.id = (char *)id;
    req.address = (char *)address;
    req.token = (char *)token;
    req.peer_node = "node-b";
    ProtobufCMessage *out;
    grpc_status_code st = step(&itest_vh, ITEST_METHOD("MigrateSend"), &req.base,
                               &airlock__vmhost__v1__migration__descriptor, &out, details);
    if (out) {
        *stopped_ms = ((Airlock__Vmhost__V1__Migration *)out)->stopped_ms;
        protobuf_c_message_free_unpacked(out, NULL);
    }
    return st;
}

static grpc_status_code ref_call(struct itest_vmhost *vh, const char *method, const char *id,
                                 const ProtobufCMessageDescriptor *resp)
{
    Airlock__Vmhost__V1__SandboxRef ref = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    ref.id = (char *)id;
    ProtobufCMessage *out;
    char *details = NULL;
    grpc_status_code st = step(vh, method, &ref.base, resp, &out, &details);
    if (st != GRPC_STATUS_OK)
        print_message("%s %s: %s\n", method, id, details ? details : "?");
    free(details);
    if (out)
        protobuf_c_message_free_unpacked(out, NULL);
    return st;
}

/* A file written and synced every 50 ms, each line one more than the
 * last: a line lost or torn on the disk shows. */
static void start_synced_writer(struct itest_vmhost *vh, const char *id)
{
    free(itest_assert_sh(vh, id,
                         "setsid sh -c 'i=0; while true; do i=$((i+1)); echo $i >> /root/synced;"
                         " sync; sleep 0.05; done' </dev/null >/dev/null 2>&1 &"
                         " sleep 0.5"));
}

/* After the guest drops its caches (what it reads comes from the disk):
 * the lines are 1..n without a gap, n at least min_lines. */
static void assert_synced_file_whole(struct itest_vmhost *vh, const char *id, long min_lines)
{
    char *out = itest_assert_sh(vh, id,
                                "sync; echo 3 > /proc/sys/vm/drop_caches;"
                                " awk 'NR != $1 { bad = 1 } END { print NR, bad + 0 }'"
                                " /root/synced");
    long lines = 0, bad = 1;
    assert_int_equal(sscanf(out, "%ld %ld", &lines, &bad), 2);
    print_message("synced file: %ld lines, gaps %ld\n", lines, bad);
    assert_int_equal(bad, 0);
    assert_true(lines >= min_lines);
    free(out);
}

static long synced_lines(struct itest_vmhost *vh, const char *id)
{
    char *out = itest_assert_sh(vh, id, "wc -l < /root/synced");
    long n = atol(out);
    free(out);
    return n;
}

static void test_a_running_sandbox_moves_live(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    itest_workload_start(&itest_vh, id);
    start_synced_writer(&itest_vh, id);
    struct itest_workload before;
    itest_workload_read(&itest_vh, id, &before);
    long lines_before = synced_lines(&itest_vh, id);

    Airlock__Vmhost__V1__Migration *m = begin(id);
    /* A keeps running it, migrating, while the first pass is stored. */
    Airlock__Vmhost__V1__Sandbox *on_a = itest_assert_get(&itest_vh, id);
    assert_int_equal(on_a->state, STATE(MIGRATING));
    protobuf_c_message_free_unpacked(&on_a->base, NULL);
    free(itest_assert_sh(&itest_vh, id, "sleep 1")); /* it runs, and writes past the first pass */

    Airlock__Vmhost__V1__Migration *p = prepare(id, m->store_object);
    int64_t stopped_ms = -1;
    char *details = NULL;
    must(send_to(id, p->address, p->token, &stopped_ms, &details), &itest_vh, "MigrateSend",
         details);
    print_message("stopped on A for %lld ms\n", (long long)stopped_ms);
    assert_true(stopped_ms >= 0);
    assert_int_equal(ref_call(&node_b, ITEST_METHOD("MigrateFinish"), id,
                              &airlock__vmhost__v1__sandbox__descriptor),
                     GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);

    Airlock__Vmhost__V1__Sandbox *on_b = itest_assert_get(&node_b, id);
    assert_int_equal(on_b->state, STATE(RUNNING));
    protobuf_c_message_free_unpacked(&on_b->base, NULL);
    itest_assert_workload_carried_on(&node_b, id, &before);
    assert_synced_file_whole(&node_b, id, lines_before + 10);
    /* A holds nothing of it; the first pass left the store. */
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), 0);
    assert_false(itest_netns_exists(id));
    char set[PATH_MAX];
    snprintf(set, sizeof(set), "%s/%s/manifest.json", store_dir, m->store_object);
    assert_int_equal(access(set, F_OK), -1);
    assert_int_equal(itest_delete_sandbox(&node_b, id), GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&m->base, NULL);
    protobuf_c_message_free_unpacked(&p->base, NULL);
    free(id);
}

/* A send that fails: A's guest runs on (running, its processes counting),
 * B's copy goes at its abort. */
static void assert_runs_on_a(const char *id, const struct itest_workload *before)
{
    Airlock__Vmhost__V1__Sandbox *on_a = itest_assert_get(&itest_vh, id);
    assert_int_equal(on_a->state, STATE(RUNNING));
    protobuf_c_message_free_unpacked(&on_a->base, NULL);
    itest_assert_workload_carried_on(&itest_vh, id, before);
}

static void test_failures_leave_it_where_it_was(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    itest_workload_start(&itest_vh, id);
    struct itest_workload before;
    itest_workload_read(&itest_vh, id, &before);

    /* A token that is not the target's: the target drops the connection. */
    Airlock__Vmhost__V1__Migration *m = begin(id);
    Airlock__Vmhost__V1__Migration *p = prepare(id, m->store_object);
    char wrong[65];
    memset(wrong, '0', 64);
    wrong[64] = '\0';
    int64_t stopped_ms;
    char *details = NULL;
    assert_int_not_equal(send_to(id, p->address, wrong, &stopped_ms, &details), GRPC_STATUS_OK);
    print_message("wrong token: %s\n", details ? details : "?");
    assert_non_null(details);
    assert_non_null(strstr(details, "node-b"));
    free(details);
    assert_runs_on_a(id, &before);
    assert_int_equal(ref_call(&node_b, ITEST_METHOD("MigrateAbort"), id,
                              &airlock__vmhost__v1__empty__descriptor),
                     GRPC_STATUS_OK);
    assert_int_equal(itest_count_qemus(node_b.data_dir), 0);
    protobuf_c_message_free_unpacked(&m->base, NULL);
    protobuf_c_message_free_unpacked(&p->base, NULL);

    /* An address nobody serves. */
    m = begin(id);
    details = NULL;
    assert_int_equal(send_to(id, "127.0.0.1:1", wrong, &stopped_ms, &details),
                     GRPC_STATUS_UNAVAILABLE);
    assert_non_null(strstr(details, "127.0.0.1:1"));
    free(details);
    assert_runs_on_a(id, &before);
    protobuf_c_message_free_unpacked(&m->base, NULL);

    /* Sent, then given up before the target finished (the scheduler's
     * answer to a target that failed): A runs it again from its stopped
     * copy, B's goes. */
    itest_workload_read(&itest_vh, id, &before);
    m = begin(id);
    p = prepare(id, m->store_object);
    details = NULL;
    must(send_to(id, p->address, p->token, &stopped_ms, &details), &itest_vh, "MigrateSend",
         details);
    assert_int_equal(ref_call(&itest_vh, ITEST_METHOD("MigrateAbort"), id,
                              &airlock__vmhost__v1__empty__descriptor),
                     GRPC_STATUS_OK);
    assert_int_equal(ref_call(&node_b, ITEST_METHOD("MigrateAbort"), id,
                              &airlock__vmhost__v1__empty__descriptor),
                     GRPC_STATUS_OK);
    assert_runs_on_a(id, &before);
    assert_int_equal(itest_count_qemus(node_b.data_dir), 0);
    protobuf_c_message_free_unpacked(&m->base, NULL);
    protobuf_c_message_free_unpacked(&p->base, NULL);

    /* Only a running sandbox migrates; a second begin is refused. */
    m = begin(id);
    Airlock__Vmhost__V1__SandboxRef ref = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    ref.id = id;
    ProtobufCMessage *out;
    details = NULL;
    assert_int_equal(step(&itest_vh, ITEST_METHOD("MigrateBegin"), &ref.base,
                          &airlock__vmhost__v1__migration__descriptor, &out, &details),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(details, "migrating"));
    free(details);
    assert_int_equal(ref_call(&itest_vh, ITEST_METHOD("MigrateAbort"), id,
                              &airlock__vmhost__v1__empty__descriptor),
                     GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&m->base, NULL);
    assert_runs_on_a(id, &before);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_running_sandbox_moves_live),
        cmocka_unit_test(test_failures_leave_it_where_it_was),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
