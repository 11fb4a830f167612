/* nats-server's users on a running stack (cp_harness, cp_stack.h: a user
 * per identity with only its subjects, over TLS with the internal PKI's
 * certificates): with node cp-node's credentials, publishing cp-node-b's
 * heartbeat or subscribing to cp-node-b's work is refused (a permissions
 * violation) and nothing reaches a subscriber; a heartbeat on cp-node's own
 * subject that names cp-node-b is ignored by the scheduler; the gateway's
 * user can neither publish a heartbeat nor receive node work. A scheduler
 * with a missing credentials file or a wrong password refuses to start and
 * says why.
 *
 * TLS: nats-server refuses a client over plain TCP, over TLS without a
 * certificate, and with a certificate of another CA, even with the right
 * password; the stack's vmhost and scheduler meet over it (the scheduler
 * registers the node from its heartbeat). A scheduler without internal TLS,
 * or facing a server that is not `nats` of the internal CA, refuses to
 * start and says why. No VM is made. */
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
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "cp_nats.h"
#include "cp_pki.h"
#include "fsutil.h"
#include "nats_credentials.h"
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

/* The credentials file of NATS user user. */
static void creds_of(const char *user, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%s", env("AIRLOCK_TEST_NATS_CREDENTIALS_DIR"), user);
}

/* As user, with the certificate of identity (cp_pki.h) as that service has. */
static natsConnection *connect_as(const char *user, const char *identity)
{
    char creds[4200];
    creds_of(user, creds, sizeof(creds));
    struct cp_tls tls;
    assert_int_equal(cp_tls_of(env("AIRLOCK_TEST_PKI_DIR"), identity, &tls), 0);
    natsConnection *nc = NULL;
    natsStatus st =
        cp_nats_connect(env("AIRLOCK_TEST_NATS_URL"), creds, &tls.files, on_error, NULL, &nc);
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
    natsConnection *sched = connect_as("scheduler", "scheduler");
    natsConnection *node = connect_as("node-" CP_NODE_ID, "vmhost-" CP_NODE_ID);
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
    natsConnection *node = connect_as("node-" CP_NODE_ID, "vmhost-" CP_NODE_ID);
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
    natsConnection *sched = connect_as("scheduler", "scheduler");
    natsConnection *node = connect_as("node-" CP_NODE_ID, "vmhost-" CP_NODE_ID);
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
    natsConnection *gw = connect_as("gateway", "gateway");
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

/* A scheduler started with creds_file, on nats_url, with the scheduler's
 * internal TLS or (tls false) none: its exit status and log. */
static int scheduler_with(const char *nats_url, const char *creds_file, bool tls,
                          const char *log_name, char **log)
{
    char dir[4200], path[4400];
    snprintf(dir, sizeof(dir), "%s/sched-%s", env("AIRLOCK_TEST_STACK_DIR"), log_name);
    assert_int_equal(fs_mkdir_p(dir, 0700, NULL, 0), 0);
    snprintf(path, sizeof(path), "unix:%s/scheduler.sock", dir);
    struct cp_tls t;
    assert_int_equal(cp_tls_of(env("AIRLOCK_TEST_PKI_DIR"), "scheduler", &t), 0);
    const char *argv[] = { AIRLOCK_SCHEDULER_BIN, "--data-dir", dir, "--listen", path,
                           "--database", env("AIRLOCK_TEST_DATABASE_URL"),
                           "--nats", nats_url, "--nats-credentials-file", creds_file,
                           tls ? "--internal-ca" : NULL, t.ca, "--internal-cert", t.cert,
                           "--internal-key", t.key, NULL };
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
    assert_int_equal(scheduler_with(env("AIRLOCK_TEST_NATS_URL"), path, true,
                                    "sched-missing.log", &log), 1);
    if (!strstr(log, path) || !strstr(log, "No such file"))
        fail_msg("a missing credentials file, the scheduler said: %s", log);
    free(log);
    snprintf(path, sizeof(path), "%s/wrong-password", env("AIRLOCK_TEST_STACK_DIR"));
    const char *wrong = "scheduler:not-the-password-0123456789\n";
    assert_int_equal(fs_write_file_replace(path, wrong, strlen(wrong), 0400, NULL, 0), 0);
    assert_int_equal(scheduler_with(env("AIRLOCK_TEST_NATS_URL"), path, true, "sched-wrong.log",
                                    &log), 1);
    if (!strstr(log, "the server refused user scheduler") || !strstr(log, path))
        fail_msg("a wrong password, the scheduler said: %s", log);
    free(log);
}

/* How many TLS handshakes nats-server has refused so far. */
static int handshakes_refused(void)
{
    char path[4200], *text = NULL;
    snprintf(path, sizeof(path), "%s/nats.log", env("AIRLOCK_TEST_STACK_DIR"));
    assert_int_equal(fs_read_file(path, 64 << 20, &text, NULL, NULL, 0), 0);
    int n = 0;
    for (const char *p = text; (p = strstr(p, "TLS handshake error")); p++)
        n++;
    free(text);
    return n;
}

/* Waits until nats-server has logged n refused handshakes, no more. */
static void expect_handshakes_refused(int n)
{
    int64_t deadline = clock_monotonic_ms() + WAIT_MS;
    while (handshakes_refused() < n && clock_monotonic_ms() < deadline)
        usleep(50 * 1000);
    assert_int_equal(handshakes_refused(), n);
}

/* Reads what the server sends on fd until it closes or WAIT_MS pass. */
static void read_all(int fd, char *buf, size_t len)
{
    size_t n = 0;
    int64_t deadline = clock_monotonic_ms() + WAIT_MS;
    struct timeval tv = { .tv_sec = 0, .tv_usec = 200 * 1000 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    while (n + 1 < len && clock_monotonic_ms() < deadline) {
        ssize_t r = read(fd, buf + n, len - 1 - n);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
            break;
        if (r > 0)
            n += (size_t)r;
    }
    buf[n] = '\0';
}

/* The scheduler's user and password in a CONNECT over plain TCP (NATS.c
 * would start TLS by itself, so by hand): no PONG, the connection closes. */
static void test_plain_tcp_is_refused(void **state)
{
    (void)state;
    char creds[4200], err[512], line[1024], got[8192];
    creds_of("scheduler", creds, sizeof(creds));
    struct nats_credentials c;
    assert_int_equal(nats_credentials_load(creds, &c, err, sizeof(err)), 0);
    const char *port = strrchr(env("AIRLOCK_TEST_NATS_URL"), ':') + 1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    assert_true(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    int refused = handshakes_refused();
    int len = snprintf(line, sizeof(line), "CONNECT {\"verbose\":false,\"user\":\"%s\","
                       "\"pass\":\"%s\"}\r\nPING\r\n", c.user, c.password);
    assert_int_equal(write(fd, line, (size_t)len), len);
    read_all(fd, got, sizeof(got));
    close(fd);
    nats_credentials_free(&c);
    if (!strstr(got, "\"tls_required\":true") || strstr(got, "PONG"))
        fail_msg("nats-server answered plain TCP: %s", got);
    expect_handshakes_refused(refused + 1);
}

/* As the scheduler's user, trusting the internal CA and checking the
 * server is `nats`, presenting cert/key (NULL: no certificate): the
 * connect's status. */
static natsStatus connect_presenting(const char *cert, const char *key)
{
    char creds[4200], err[512];
    creds_of("scheduler", creds, sizeof(creds));
    struct nats_credentials c;
    assert_int_equal(nats_credentials_load(creds, &c, err, sizeof(err)), 0);
    struct cp_tls ours;
    assert_int_equal(cp_tls_of(env("AIRLOCK_TEST_PKI_DIR"), "scheduler", &ours), 0);
    natsOptions *opts = NULL;
    natsConnection *nc = NULL;
    natsStatus st = natsOptions_Create(&opts);
    if (st == NATS_OK)
        st = natsOptions_SetURL(opts, env("AIRLOCK_TEST_NATS_URL"));
    if (st == NATS_OK)
        st = nats_credentials_apply(opts, &c);
    if (st == NATS_OK)
        st = natsOptions_SetSecure(opts, true);
    if (st == NATS_OK)
        st = natsOptions_LoadCATrustedCertificates(opts, ours.ca);
    if (st == NATS_OK)
        st = natsOptions_SetExpectedHostname(opts, NATS_SERVER_DNS);
    if (st == NATS_OK && cert)
        st = natsOptions_LoadCertificatesChain(opts, cert, key);
    if (st == NATS_OK)
        st = natsConnection_Connect(&nc, opts);
    if (st == NATS_OK)
        st = natsConnection_FlushTimeout(nc, WAIT_MS);
    natsConnection_Destroy(nc);
    natsOptions_Destroy(opts);
    nats_credentials_free(&c);
    return st;
}

/* Runs scripts/internal-pki.sh DIR scheduler: a CA that is not the stack's. */
static void make_other_pki(const char *dir)
{
    const char *argv[] = { "/bin/sh", AIRLOCK_INTERNAL_PKI_SCRIPT, dir, "scheduler", NULL };
    pid_t pid = test_spawn(argv, env("AIRLOCK_TEST_STACK_DIR"), "other-pki.log");
    int status = 0;
    assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_a_certificate_of_the_internal_ca_is_required(void **state)
{
    (void)state;
    struct cp_tls ours, other;
    char other_dir[4200];
    snprintf(other_dir, sizeof(other_dir), "%s/other-pki", env("AIRLOCK_TEST_STACK_DIR"));
    make_other_pki(other_dir);
    assert_int_equal(cp_tls_of(env("AIRLOCK_TEST_PKI_DIR"), "scheduler", &ours), 0);
    assert_int_equal(cp_tls_of(other_dir, "scheduler", &other), 0);
    /* The same password and options with our certificate get in. */
    assert_int_equal(connect_presenting(ours.cert, ours.key), NATS_OK);
    int refused = handshakes_refused();
    assert_int_not_equal(connect_presenting(NULL, NULL), NATS_OK);
    assert_int_not_equal(connect_presenting(other.cert, other.key), NATS_OK);
    /* Both at the handshake, before any user is looked at. */
    expect_handshakes_refused(refused + 2);
}

/* The stack's vmhost and scheduler have only TLS to meet over: the
 * scheduler registered the node from a heartbeat, and heartbeats keep
 * coming to a subscriber with the scheduler's user and certificate. */
static void test_the_stack_meets_over_tls(void **state)
{
    (void)state;
    char log[4200], *text = NULL;
    snprintf(log, sizeof(log), "%s/scheduler.log", env("AIRLOCK_TEST_STACK_DIR"));
    assert_int_equal(fs_read_file(log, 64 << 20, &text, NULL, NULL, 0), 0);
    if (!strstr(text, "msg=\"node registered\" node=" CP_NODE_ID " "))
        fail_msg("the scheduler registered no node %s: %s", CP_NODE_ID, text);
    free(text);
    natsConnection *sched = connect_as("scheduler", "scheduler");
    natsSubscription *hb = NULL;
    assert_int_equal(natsConnection_SubscribeSync(&hb, sched, "airlock.node." CP_NODE_ID
                                                  ".heartbeat"), NATS_OK);
    /* vmhost sends one every 2 s (nats_agent.h). */
    natsMsg *m = NULL;
    assert_int_equal(natsSubscription_NextMsg(&m, hb, 3 * WAIT_MS), NATS_OK);
    natsMsg_Destroy(m);
    natsSubscription_Destroy(hb);
    natsConnection_Destroy(sched);
}

static void test_a_service_without_tls_says_why(void **state)
{
    (void)state;
    char creds[4200], *log = NULL;
    creds_of("scheduler", creds, sizeof(creds));
    assert_int_equal(scheduler_with(env("AIRLOCK_TEST_NATS_URL"), creds, false, "sched-plain.log",
                                    &log), 1);
    if (!strstr(log, "the server wants TLS") || !strstr(log, "--internal-cert"))
        fail_msg("without internal TLS, the scheduler said: %s", log);
    free(log);
}

/* A nats-server of our own whose certificate is of the internal CA but
 * names the scheduler: the URL (nats://) into url. */
static pid_t start_impostor(char *url, size_t urllen)
{
    const char *stack = env("AIRLOCK_TEST_STACK_DIR"), *pki = env("AIRLOCK_TEST_PKI_DIR");
    char dir[4200], conf_path[4400], conf[16384];
    snprintf(dir, sizeof(dir), "%s/impostor", stack);
    snprintf(conf_path, sizeof(conf_path), "%s/nats.conf", dir);
    snprintf(conf, sizeof(conf), "tls {\n  cert_file: \"%s/scheduler.crt\"\n"
             "  key_file: \"%s/scheduler.key\"\n  ca_file: \"%s/ca.crt\"\n  verify: true\n}\n",
             pki, pki, pki);
    assert_int_equal(fs_mkdir_p(dir, 0700, NULL, 0), 0);
    assert_int_equal(fs_write_file_replace(conf_path, conf, strlen(conf), 0600, NULL, 0), 0);
    const char *argv[] = { "/usr/sbin/nats-server", "-c", conf_path, "-a", "127.0.0.1",
                           "-p", "-1", "--ports_file_dir", dir, NULL };
    pid_t pid = test_spawn(argv, dir, "nats.log");
    assert_true(pid > 0);
    char ports[4400];
    snprintf(ports, sizeof(ports), "%s/nats-server_%d.ports", dir, (int)pid);
    int64_t deadline = clock_monotonic_ms() + 30000;
    while (clock_monotonic_ms() < deadline) {
        char *text = NULL;
        const char *at = NULL;
        if (fs_read_file(ports, 65536, &text, NULL, NULL, 0) == 0 && (at = strstr(text, "://"))) {
            snprintf(url, urllen, "nats://%.*s", (int)strcspn(at + 3, "\""), at + 3);
            free(text);
            return pid;
        }
        free(text);
        usleep(50 * 1000);
    }
    test_stop_pid(&pid, dir, "nats.log", false);
    fail_msg("the impostor nats-server did not start");
    return -1;
}

static void test_the_server_must_be_nats(void **state)
{
    (void)state;
    char url[128], creds[4200], *log = NULL;
    pid_t impostor = start_impostor(url, sizeof(url));
    creds_of("scheduler", creds, sizeof(creds));
    int rc = scheduler_with(url, creds, true, "sched-impostor.log", &log);
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s/impostor", env("AIRLOCK_TEST_STACK_DIR"));
    assert_int_equal(test_stop_pid(&impostor, dir, "nats.log", false), 0);
    assert_int_equal(rc, 1);
    if (!strstr(log, "the server must present " NATS_SERVER_DNS))
        fail_msg("facing a server that is not nats, the scheduler said: %s", log);
    free(log);
}

int main(void)
{
    /* This program's schedulers get internal TLS by their flags or not at
     * all, never the harness's node identity from the environment. */
    unsetenv(INTERNAL_CA_ENV);
    unsetenv(INTERNAL_CERT_ENV);
    unsetenv(INTERNAL_KEY_ENV);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_cannot_forge_another_heartbeat),
        cmocka_unit_test(test_heartbeat_naming_another_node_is_ignored),
        cmocka_unit_test(test_node_cannot_receive_another_nodes_work),
        cmocka_unit_test(test_gateway_cannot_act_as_a_node),
        cmocka_unit_test(test_bad_credentials_stop_the_service),
        cmocka_unit_test(test_plain_tcp_is_refused),
        cmocka_unit_test(test_a_certificate_of_the_internal_ca_is_required),
        cmocka_unit_test(test_the_stack_meets_over_tls),
        cmocka_unit_test(test_a_service_without_tls_says_why),
        cmocka_unit_test(test_the_server_must_be_nats),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    nats_Close();
    return rc;
}
