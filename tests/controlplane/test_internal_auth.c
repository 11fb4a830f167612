/* The internal APIs of a running stack (cp_harness: every part started
 * with the internal token) refuse callers without it: vmhost's, vault's,
 * egress's and the scheduler's gRPC APIs answer UNAUTHENTICATED, vmhostctl
 * without --token-file gets that error. With the token each of them
 * answers. Each call is over mutual TLS as an identity the method admits
 * (cp_stack.h: the stack's internal PKI), so what is refused is the token:
 * a second factor beside the certificate. nats-server refuses a connection
 * without a user or with a wrong password (its users and TLS:
 * test_nats_permissions.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cp_nats.h"
#include "cp_pki.h"
#include "fsutil.h"
#include "internal_token.h"
#include "nats_credentials.h"
#include "rpc_client.h"
#include "test_proc.h"
#include "vmhost.pb-c.h"

#define CALL_TIMEOUT_MS 10000

static char token[INTERNAL_TOKEN_MAX_LEN + 1];
static char vmhost_addr[4200], egress_addr[4200];

static const char *env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        fail_msg("%s is not set: run this under cp_harness", name);
    return v;
}

/* Who calls whom: the server's identity, and the caller's certificate in
 * the stack's PKI (cp_pki.h) with its role. */
struct peers {
    const char *server;
    const char *caller;
    enum peer_role caller_role;
};

/* One unary call with an empty request (valid for every proto3 message);
 * auth_token NULL: no authorization metadata. */
static grpc_status_code call_as(const char *addr, const struct peers *p, const char *auth_token,
                                const char *method, char **details)
{
    struct cp_tls files;
    struct tls_credentials *tls = NULL;
    char err[1024];
    assert_int_equal(cp_tls_of(env("AIRLOCK_TEST_PKI_DIR"), p->caller, &files), 0);
    if (tls_credentials_configure(&files.files, p->caller_role, true, &tls, err, sizeof(err)) < 0)
        fail_msg("%s", err);
    struct rpc_channel *ch = rpc_channel_open(
        addr, &(struct rpc_channel_auth){ .bearer_token = auth_token, .tls = tls,
                                          .server = p->server });
    assert_non_null(ch);
    Airlock__Vmhost__V1__ListSandboxesRequest req = AIRLOCK__VMHOST__V1__LIST_SANDBOXES_REQUEST__INIT;
    ProtobufCMessage *resp = NULL;
    grpc_status_code code =
        rpc_unary(ch, method, &req.base, &airlock__vmhost__v1__list_sandboxes_response__descriptor,
                  &resp, details, CALL_TIMEOUT_MS);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    rpc_channel_close(ch);
    tls_credentials_free(tls);
    return code;
}

/* Without the token and with a wrong one: UNAUTHENTICATED; with it, the
 * method's own answer (whatever it is, not UNAUTHENTICATED). */
static void assert_needs_token(const char *addr, const struct peers *p, const char *method)
{
    char *details = NULL;
    assert_int_equal(call_as(addr, p, NULL, method, &details), GRPC_STATUS_UNAUTHENTICATED);
    assert_string_equal(details, "internal token required");
    free(details);
    details = NULL;
    assert_int_equal(call_as(addr, p, "not-the-internal-token-but-long-enough-anyway", method,
                             &details),
                     GRPC_STATUS_UNAUTHENTICATED);
    assert_string_equal(details, "wrong internal token");
    free(details);
    details = NULL;
    grpc_status_code with = call_as(addr, p, token, method, &details);
    if (with == GRPC_STATUS_UNAUTHENTICATED || with == GRPC_STATUS_UNAVAILABLE)
        fail_msg("%s%s with the token: %s %s", addr, method, rpc_status_name(with),
                 details ? details : "");
    free(details);
}

static void test_vmhost_needs_token(void **state)
{
    (void)state;
    static const struct peers p = { "vmhost:" CP_NODE_ID, "scheduler", PEER_SCHEDULER };
    assert_needs_token(vmhost_addr, &p, "/airlock.vmhost.v1.VmHost/ListSandboxes");
    char *details = NULL;
    assert_int_equal(call_as(vmhost_addr, &p, token, "/airlock.vmhost.v1.VmHost/ListSandboxes",
                             &details),
                     GRPC_STATUS_OK);
    free(details);
}

static void test_vault_needs_token(void **state)
{
    (void)state;
    static const struct peers p = { "vault", "gateway", PEER_GATEWAY };
    assert_needs_token(env("AIRLOCK_TEST_VAULT_ADDR"), &p, "/airlock.vault.v1.Vault/ListAudit");
}

static void test_egress_needs_token(void **state)
{
    (void)state;
    static const struct peers p = { "egress:" CP_NODE_ID, "vmhost-" CP_NODE_ID, PEER_VMHOST };
    assert_needs_token(egress_addr, &p, "/airlock.egress.v1.Egress/GetStatus");
}

static void test_scheduler_needs_token(void **state)
{
    (void)state;
    static const struct peers p = { "scheduler", "gateway", PEER_GATEWAY };
    assert_needs_token(env("AIRLOCK_TEST_SCHEDULER_ADDR"), &p,
                       "/airlock.scheduler.v1.Scheduler/ListSandboxes");
}

/* vmhostctl ls, its output in STACK_DIR/log_name; its exit status.
 * token_file NULL: neither the option nor the environment variable. */
static int vmhostctl_ls(const char *token_file, const char *log_name)
{
    char saved[4096];
    snprintf(saved, sizeof(saved), "%s", env(INTERNAL_TOKEN_ENV));
    unsetenv(INTERNAL_TOKEN_ENV);
    const char *argv[] = {AIRLOCK_VMHOSTCTL_BIN, "--addr", vmhost_addr, "ls", NULL, NULL, NULL};
    if (token_file) {
        argv[3] = "--token-file";
        argv[4] = token_file;
        argv[5] = "ls";
    }
    pid_t pid = test_spawn(argv, env("AIRLOCK_TEST_STACK_DIR"), log_name);
    setenv(INTERNAL_TOKEN_ENV, saved, 1);
    int status = 0;
    assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_vmhostctl_token_file(void **state)
{
    (void)state;
    char log[4200], *out = NULL;
    assert_int_equal(vmhostctl_ls(NULL, "vmhostctl-no-token.log"), 1);
    snprintf(log, sizeof(log), "%s/vmhostctl-no-token.log", env("AIRLOCK_TEST_STACK_DIR"));
    assert_int_equal(fs_read_file(log, 65536, &out, NULL, NULL, 0), 0);
    if (!strstr(out, "UNAUTHENTICATED: internal token required"))
        fail_msg("vmhostctl without a token said: %s", out);
    free(out);
    assert_int_equal(vmhostctl_ls(env(INTERNAL_TOKEN_ENV), "vmhostctl-token.log"), 0);
}

/* The gateway's certificate (nats-server refuses any client without one:
 * test_nats_permissions.c), so what is refused here is the user; user
 * NULL: no credentials at all. */
static natsStatus nats_connect_as(const char *user, const char *password)
{
    struct cp_tls tls;
    assert_int_equal(cp_tls_of(env("AIRLOCK_TEST_PKI_DIR"), "gateway", &tls), 0);
    struct nats_credentials c = { .user = (char *)user, .password = (char *)password,
                                  .tls = &tls.files };
    natsOptions *opts = NULL;
    natsConnection *nc = NULL;
    natsStatus st = natsOptions_Create(&opts);
    if (st == NATS_OK)
        st = natsOptions_SetURL(opts, env("AIRLOCK_TEST_NATS_URL"));
    if (st == NATS_OK)
        st = nats_credentials_apply(opts, &c);
    if (st == NATS_OK)
        st = natsConnection_Connect(&nc, opts);
    if (st == NATS_OK)
        st = natsConnection_FlushTimeout(nc, CALL_TIMEOUT_MS);
    natsConnection_Destroy(nc);
    natsOptions_Destroy(opts);
    return st;
}

static void test_nats_needs_a_user(void **state)
{
    (void)state;
    assert_int_equal(nats_connect_as(NULL, NULL), NATS_CONNECTION_AUTH_FAILED);
    /* Neither the internal token nor a wrong password is a way in. */
    assert_int_equal(nats_connect_as("gateway", token), NATS_CONNECTION_AUTH_FAILED);
    assert_int_equal(nats_connect_as(token, NULL), NATS_CONNECTION_AUTH_FAILED);
    char creds[4200];
    snprintf(creds, sizeof(creds), "%s/gateway", env("AIRLOCK_TEST_NATS_CREDENTIALS_DIR"));
    struct cp_tls tls;
    assert_int_equal(cp_tls_of(env("AIRLOCK_TEST_PKI_DIR"), "gateway", &tls), 0);
    natsConnection *nc = NULL;
    assert_int_equal(cp_nats_connect(env("AIRLOCK_TEST_NATS_URL"), creds, &tls.files, NULL, NULL,
                                     &nc), NATS_OK);
    natsConnection_Destroy(nc);
}

int main(void)
{
    char err[512];
    char *t = internal_token_load(env(INTERNAL_TOKEN_ENV), err, sizeof(err));
    if (!t) {
        fprintf(stderr, "test_internal_auth: %s\n", err);
        return 1;
    }
    snprintf(token, sizeof(token), "%s", t);
    free(t);
    snprintf(vmhost_addr, sizeof(vmhost_addr), "unix:%s/vmhost.sock",
             env("AIRLOCK_TEST_VMHOST_DIR"));
    snprintf(egress_addr, sizeof(egress_addr), "unix:%s/egress.sock",
             env("AIRLOCK_TEST_STACK_DIR"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmhost_needs_token),   cmocka_unit_test(test_vault_needs_token),
        cmocka_unit_test(test_egress_needs_token),   cmocka_unit_test(test_scheduler_needs_token),
        cmocka_unit_test(test_vmhostctl_token_file), cmocka_unit_test(test_nats_needs_a_user),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    nats_Close();
    return rc;
}
