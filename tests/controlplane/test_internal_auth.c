/* The internal APIs of a running stack (cp_harness: every part started
 * with the internal token, beside mutual TLS) refuse callers without it,
 * even with a certificate of a role the method lets in: vmhost's, vault's,
 * egress's and the scheduler's gRPC APIs answer UNAUTHENTICATED, vmhostctl
 * without --token-file gets that error. With the token each of them
 * answers (test_internal_tls.py has the certificates' refusals). nats-server refuses a connection without a user or with a wrong
 * password (its users: test_nats_permissions.c). */
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
#include "fsutil.h"
#include "internal_token.h"
#include "rpc_client.h"
#include "test_proc.h"
#include "tls_credentials.h"
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

/* Who calls which server: a role the server's method lets in, and the
 * identity the server has. */
struct peer {
    const char *files; /* its files in the stack's PKI ("gateway") */
    const char *server;
};

/* One unary call with an empty request (valid for every proto3 message) as
 * p; auth_token NULL: no authorization metadata. */
static grpc_status_code call_as(const char *addr, const struct peer *p, const char *auth_token,
                                const char *method, char **details)
{
    char ca[4200], cert[4200], key[4200], err[1024];
    const char *pki = env("AIRLOCK_TEST_PKI_DIR");
    snprintf(ca, sizeof(ca), "%s/ca.crt", pki);
    snprintf(cert, sizeof(cert), "%s/%s.crt", pki, p->files);
    snprintf(key, sizeof(key), "%s/%s.key", pki, p->files);
    struct tls_credentials *tls = NULL;
    if (tls_credentials_configure(&(struct tls_files){ ca, cert, key }, 0, true, &tls, err,
                                  sizeof(err)) < 0)
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
static void assert_needs_token(const char *addr, const struct peer *p, const char *method)
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
    static const struct peer scheduler = { "scheduler", "vmhost:cp-node" };
    assert_needs_token(vmhost_addr, &scheduler, "/airlock.vmhost.v1.VmHost/ListSandboxes");
    char *details = NULL;
    assert_int_equal(call_as(vmhost_addr, &scheduler, token,
                             "/airlock.vmhost.v1.VmHost/ListSandboxes", &details),
                     GRPC_STATUS_OK);
    free(details);
}

static void test_vault_needs_token(void **state)
{
    (void)state;
    static const struct peer gateway = { "gateway", "vault" };
    assert_needs_token(env("AIRLOCK_TEST_VAULT_ADDR"), &gateway,
                       "/airlock.vault.v1.Vault/ListAudit");
}

static void test_egress_needs_token(void **state)
{
    (void)state;
    static const struct peer vmhost = { "vmhost-cp-node", "egress:cp-node" };
    assert_needs_token(egress_addr, &vmhost, "/airlock.egress.v1.Egress/GetStatus");
}

static void test_scheduler_needs_token(void **state)
{
    (void)state;
    static const struct peer gateway = { "gateway", "scheduler" };
    assert_needs_token(env("AIRLOCK_TEST_SCHEDULER_ADDR"), &gateway,
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

/* user NULL: no credentials at all. */
static natsStatus nats_connect_as(const char *user, const char *password)
{
    natsOptions *opts = NULL;
    natsConnection *nc = NULL;
    natsStatus st = natsOptions_Create(&opts);
    if (st == NATS_OK)
        st = natsOptions_SetURL(opts, env("AIRLOCK_TEST_NATS_URL"));
    if (st == NATS_OK && user)
        st = natsOptions_SetUserInfo(opts, user, password);
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
    assert_int_not_equal(nats_connect_as(NULL, NULL), NATS_OK);
    /* Neither the internal token nor a wrong password is a way in. */
    assert_int_not_equal(nats_connect_as("gateway", token), NATS_OK);
    assert_int_not_equal(nats_connect_as(token, NULL), NATS_OK);
    char creds[4200];
    snprintf(creds, sizeof(creds), "%s/gateway", env("AIRLOCK_TEST_NATS_CREDENTIALS_DIR"));
    natsConnection *nc = NULL;
    assert_int_equal(cp_nats_connect(env("AIRLOCK_TEST_NATS_URL"), creds, NULL, NULL, &nc),
                     NATS_OK);
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
