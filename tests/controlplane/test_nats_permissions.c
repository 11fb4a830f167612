/* nats-server's users on a running stack (cp_harness, cp_stack.h: a user
 * per identity with only its subjects): with node cp-node's credentials,
 * publishing cp-node-b's heartbeat or subscribing to cp-node-b's work is
 * refused (a permissions violation) and nothing reaches a subscriber; a
 * heartbeat on cp-node's own subject that names cp-node-b is ignored by
 * the scheduler; the gateway's user can neither publish a heartbeat nor
 * receive node work. A scheduler with a missing credentials file or a
 * wrong password refuses to start and says why. No VM is made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <nats/nats.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "cp_nats.h"
#include "fsutil.h"
#include "node.pb-c.h"
#include "test_proc.h"

#define WAIT_MS 3000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char refused[1024]; /* the last error the server sent, any connection */

static const char *env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        fail_msg("%s is not set: run this under cp_harness", name);
    return v;
}

static void on_error(natsConnection *nc, natsSubscription *sub, natsStatus st, void *closure)
{
    (void)sub;
    (void)st;
    (void)closure;
    const char *text = NULL;
    natsConnection_GetLastError(nc, &text);
    pthread_mutex_lock(&lock);
    snprintf(refused, sizeof(refused), "%s", text ? text : "");
    pthread_mutex_unlock(&lock);
}

static natsConnection *connect_as(const char *user)
{
    char creds[4200];
    snprintf(creds, sizeof(creds), "%s/%s", env("AIRLOCK_TEST_NATS_CREDENTIALS_DIR"), user);
    natsConnection *nc = NULL;
    natsStatus st = cp_nats_connect(env("AIRLOCK_TEST_NATS_URL"), creds, on_error, NULL, &nc);
    if (st != NATS_OK)
        fail_msg("connect as %s: %s", user, natsStatus_GetText(st));
    return nc;
}

/* Waits until the server's last error contains fragment. */
static void expect_refused(const char *fragment)
{
    int64_t deadline = clock_monotonic_ms() + WAIT_MS;
    for (;;) {
        pthread_mutex_lock(&lock);
        bool hit = strstr(refused, fragment) != NULL;
        if (hit)
            refused[0] = '\0';
        pthread_mutex_unlock(&lock);
        if (hit)
            return;
        if (clock_monotonic_ms() > deadline)
            fail_msg("the server did not refuse: want \"%s\", last error \"%s\"", fragment, refused);
        usleep(20 * 1000);
    }
}

/* No message on subject reaches sub within WAIT_MS (others are skipped). */
static void expect_nothing_on(natsSubscription *sub, const char *subject)
{
    int64_t deadline = clock_monotonic_ms() + WAIT_MS;
    int64_t left;
    while ((left = deadline - clock_monotonic_ms()) > 0) {
        natsMsg *m = NULL;
        if (natsSubscription_NextMsg(&m, sub, left) != NATS_OK)
            return;
        bool hit = strcmp(natsMsg_GetSubject(m), subject) == 0;
        natsMsg_Destroy(m);
        if (hit)
            fail_msg("a message on %s got through", subject);
    }
}

static void publish_heartbeat(natsConnection *nc, const char *subject, const char *node_id)
{
    Airlock__Node__V1__Heartbeat hb = AIRLOCK__NODE__V1__HEARTBEAT__INIT;
    hb.node_id = (char *)node_id;
    hb.vmhost_addr = "unix:/forged.sock";
    uint8_t buf[256];
    size_t len = airlock__node__v1__heartbeat__pack(&hb, buf);
    assert_int_equal(natsConnection_Publish(nc, subject, buf, (int)len), NATS_OK);
    assert_int_equal(natsConnection_FlushTimeout(nc, WAIT_MS), NATS_OK);
}

static void test_node_cannot_forge_another_heartbeat(void **state)
{
    (void)state;
    natsConnection *sched = connect_as("scheduler"), *node = connect_as("node-" CP_NODE_ID);
    natsSubscription *hb = NULL;
    assert_int_equal(natsConnection_SubscribeSync(&hb, sched, "airlock.node.*.heartbeat"), NATS_OK);
    assert_int_equal(natsConnection_FlushTimeout(sched, WAIT_MS), NATS_OK);
    publish_heartbeat(node, "airlock.node." CP_OTHER_NODE_ID ".heartbeat", CP_OTHER_NODE_ID);
    expect_refused("Permissions Violation for Publish to \"airlock.node." CP_OTHER_NODE_ID
                   ".heartbeat\"");
    expect_nothing_on(hb, "airlock.node." CP_OTHER_NODE_ID ".heartbeat");
    natsSubscription_Destroy(hb);
    natsConnection_Destroy(node);
    natsConnection_Destroy(sched);
}

/* Its own subject is the node's, but the node id in it is not: the
 * scheduler must not record cp-node-b (at the forged address). */
static void test_heartbeat_naming_another_node_is_ignored(void **state)
{
    (void)state;
    natsConnection *node = connect_as("node-" CP_NODE_ID);
    publish_heartbeat(node, "airlock.node." CP_NODE_ID ".heartbeat", CP_OTHER_NODE_ID);
    char log[4200], *text = NULL;
    snprintf(log, sizeof(log), "%s/scheduler.log", env("AIRLOCK_TEST_STACK_DIR"));
    int64_t deadline = clock_monotonic_ms() + WAIT_MS;
    bool ignored = false;
    while (!ignored && clock_monotonic_ms() < deadline) {
        usleep(50 * 1000);
        free(text);
        text = NULL;
        assert_int_equal(fs_read_file(log, 64 << 20, &text, NULL, NULL, 0), 0);
        ignored = strstr(text, "ignoring heartbeat for another node") != NULL;
    }
    if (!ignored || strstr(text, "node=" CP_OTHER_NODE_ID " vmhost="))
        fail_msg("the scheduler took a heartbeat for %s from %s's subject", CP_OTHER_NODE_ID,
                 CP_NODE_ID);
    free(text);
    natsConnection_Destroy(node);
}

static void test_node_cannot_receive_another_nodes_work(void **state)
{
    (void)state;
    natsConnection *sched = connect_as("scheduler"), *node = connect_as("node-" CP_NODE_ID);
    natsSubscription *work = NULL;
    assert_int_equal(natsConnection_SubscribeSync(&work, node, "airlock.node." CP_OTHER_NODE_ID
                                                  ".>"), NATS_OK);
    assert_int_equal(natsConnection_FlushTimeout(node, WAIT_MS), NATS_OK);
    expect_refused("Permissions Violation for Subscription to \"airlock.node." CP_OTHER_NODE_ID
                   ".>\"");
    assert_int_equal(natsConnection_PublishString(sched, "airlock.node." CP_OTHER_NODE_ID
                                                  ".create", "x"), NATS_OK);
    assert_int_equal(natsConnection_FlushTimeout(sched, WAIT_MS), NATS_OK);
    expect_nothing_on(work, "airlock.node." CP_OTHER_NODE_ID ".create");
    /* Nor may it send work to a node, its own included. */
    assert_int_equal(natsConnection_PublishString(node, "airlock.node." CP_NODE_ID ".delete",
                                                  "x"), NATS_OK);
    natsConnection_FlushTimeout(node, WAIT_MS);
    expect_refused("Permissions Violation for Publish to \"airlock.node." CP_NODE_ID ".delete\"");
    natsSubscription_Destroy(work);
    natsConnection_Destroy(node);
    natsConnection_Destroy(sched);
}

static void test_gateway_cannot_act_as_a_node(void **state)
{
    (void)state;
    natsConnection *gw = connect_as("gateway");
    publish_heartbeat(gw, "airlock.node." CP_NODE_ID ".heartbeat", CP_NODE_ID);
    expect_refused("Permissions Violation for Publish to \"airlock.node." CP_NODE_ID
                   ".heartbeat\"");
    natsSubscription *work = NULL;
    assert_int_equal(natsConnection_SubscribeSync(&work, gw, "airlock.node." CP_NODE_ID ".>"),
                     NATS_OK);
    natsConnection_FlushTimeout(gw, WAIT_MS);
    expect_refused("Permissions Violation for Subscription to \"airlock.node." CP_NODE_ID ".>\"");
    natsSubscription_Destroy(work);
    natsConnection_Destroy(gw);
}

/* A scheduler started with creds_file: its exit status and log. */
static int scheduler_with(const char *creds_file, const char *log_name, char **log)
{
    char dir[4200], path[4400];
    snprintf(dir, sizeof(dir), "%s/sched-%s", env("AIRLOCK_TEST_STACK_DIR"), log_name);
    assert_int_equal(fs_mkdir_p(dir, 0700, NULL, 0), 0);
    snprintf(path, sizeof(path), "unix:%s/scheduler.sock", dir);
    char ca[4200], cert[4200], key[4200];
    snprintf(ca, sizeof(ca), "%s/ca.crt", env("AIRLOCK_TEST_PKI_DIR"));
    snprintf(cert, sizeof(cert), "%s/scheduler.crt", env("AIRLOCK_TEST_PKI_DIR"));
    snprintf(key, sizeof(key), "%s/scheduler.key", env("AIRLOCK_TEST_PKI_DIR"));
    const char *argv[] = { AIRLOCK_SCHEDULER_BIN, "--data-dir", dir, "--listen", path,
                           "--database", env("AIRLOCK_TEST_DATABASE_URL"),
                           "--nats", env("AIRLOCK_TEST_NATS_URL"),
                           "--nats-credentials-file", creds_file, "--internal-ca", ca,
                           "--internal-cert", cert, "--internal-key", key, NULL };
    pid_t pid = test_spawn(argv, env("AIRLOCK_TEST_STACK_DIR"), log_name);
    int status = 0;
    assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
    snprintf(path, sizeof(path), "%s/%s", env("AIRLOCK_TEST_STACK_DIR"), log_name);
    assert_int_equal(fs_read_file(path, 1 << 20, log, NULL, NULL, 0), 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_bad_credentials_stop_the_service(void **state)
{
    (void)state;
    char path[4200], *log = NULL;
    snprintf(path, sizeof(path), "%s/no-such-credentials", env("AIRLOCK_TEST_STACK_DIR"));
    assert_int_equal(scheduler_with(path, "sched-missing.log", &log), 1);
    if (!strstr(log, path) || !strstr(log, "No such file"))
        fail_msg("a missing credentials file, the scheduler said: %s", log);
    free(log);
    snprintf(path, sizeof(path), "%s/wrong-password", env("AIRLOCK_TEST_STACK_DIR"));
    const char *wrong = "scheduler:not-the-password-0123456789\n";
    assert_int_equal(fs_write_file_replace(path, wrong, strlen(wrong), 0400, NULL, 0), 0);
    assert_int_equal(scheduler_with(path, "sched-wrong.log", &log), 1);
    if (!strstr(log, "the server refused user scheduler") || !strstr(log, path))
        fail_msg("a wrong password, the scheduler said: %s", log);
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_cannot_forge_another_heartbeat),
        cmocka_unit_test(test_heartbeat_naming_another_node_is_ignored),
        cmocka_unit_test(test_node_cannot_receive_another_nodes_work),
        cmocka_unit_test(test_gateway_cannot_act_as_a_node),
        cmocka_unit_test(test_bad_credentials_stop_the_service),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    nats_Close();
    return rc;
}
