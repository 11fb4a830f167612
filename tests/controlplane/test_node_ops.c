/* vmhost's node operations over NATS (protos/node.proto), as the
 * scheduler calls them, on a running stack (cp_harness), for what the
 * scheduler never sends: a subject naming no operation answers
 * UNIMPLEMENTED naming it, a request without its id or that is not the
 * message the operation takes answers INVALID_ARGUMENT naming the
 * operation and what is missing, an unknown id NOT_FOUND — every one a
 * NodeReply, nothing left hanging. No VM is made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <grpc/status.h>
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_nats.h"
#include "cp_pki.h"
#include "node.pb-c.h"
#include "vmhost.pb-c.h"

#define CALL_TIMEOUT_MS 20000
#define NODE CP_NODE_ID /* cp_harness's vmhost --node-id */

static natsConnection *nc;

static const char *env(const char *name)
{
    const char *v = getenv(name);
    if (!v)
        fail_msg("%s is not set (run under cp_harness)", name);
    return v;
}

/* The NodeReply to data on airlock.node.NODE.op. Caller frees. */
static Airlock__Node__V1__NodeReply *ask(const char *op, const void *data, size_t len)
{
    char subject[256];
    snprintf(subject, sizeof(subject), "airlock.node.%s.%s", NODE, op);
    natsMsg *reply = NULL;
    natsStatus st = natsConnection_Request(&reply, nc, subject, data, (int)len, CALL_TIMEOUT_MS);
    if (st != NATS_OK)
        fail_msg("request %s: %s", subject, natsStatus_GetText(st));
    Airlock__Node__V1__NodeReply *r = airlock__node__v1__node_reply__unpack(
        NULL, (size_t)natsMsg_GetDataLength(reply), (const uint8_t *)natsMsg_GetData(reply));
    natsMsg_Destroy(reply);
    assert_non_null(r);
    return r;
}

static void expect(const char *op, const void *data, size_t len, grpc_status_code status,
                   const char *fragment)
{
    Airlock__Node__V1__NodeReply *r = ask(op, data, len);
    if (r->status != (int)status || !strstr(r->message, fragment))
        fail_msg("%s: want status %d with \"%s\", got %d \"%s\"", op, status, fragment, r->status,
                 r->message);
    airlock__node__v1__node_reply__free_unpacked(r, NULL);
}

static void test_unknown_operation(void **state)
{
    (void)state;
    expect("frobnicate", "", 0, GRPC_STATUS_UNIMPLEMENTED, "has no operation frobnicate");
}

static void test_requests_without_their_id(void **state)
{
    (void)state;
    /* An empty message is every request with nothing set. */
    const char *ops[] = { "get", "delete", "pause", "resume", "suspend" };
    for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++) {
        char want[64];
        snprintf(want, sizeof(want), "%s: id: required", ops[i]);
        expect(ops[i], "", 0, GRPC_STATUS_INVALID_ARGUMENT, want);
    }
    expect("create", "", 0, GRPC_STATUS_INVALID_ARGUMENT, "create: id: required");
    expect("set_policy", "", 0, GRPC_STATUS_INVALID_ARGUMENT, "set_policy: id: required");
    /* Bytes that are no protobuf message at all. */
    expect("get", "\xff\xff\xff", 3, GRPC_STATUS_INVALID_ARGUMENT, "get: not a SandboxRef");
}

static void test_unknown_sandbox(void **state)
{
    (void)state;
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = "sb_no_such_sandbox";
    uint8_t buf[128];
    size_t len = airlock__vmhost__v1__sandbox_ref__pack(&req, buf);
    const char *ops[] = { "get", "delete", "pause", "resume", "suspend" };
    for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
        expect(ops[i], buf, len, GRPC_STATUS_NOT_FOUND, "sandbox sb_no_such_sandbox not found");
}

int main(void)
{
    /* The scheduler's user: the one that may send node operations. */
    char creds[4200];
    snprintf(creds, sizeof(creds), "%s/scheduler", env("AIRLOCK_TEST_NATS_CREDENTIALS_DIR"));
    struct cp_tls tls;
    cp_tls_of(env("AIRLOCK_TEST_PKI_DIR"), "scheduler", &tls);
    natsStatus st =
        cp_nats_connect(env("AIRLOCK_TEST_NATS_URL"), creds, &tls.files, NULL, NULL, &nc);
    if (st != NATS_OK) {
        fprintf(stderr, "test_node_ops: NATS: %s\n", natsStatus_GetText(st));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_operation),
        cmocka_unit_test(test_requests_without_their_id),
        cmocka_unit_test(test_unknown_sandbox),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    natsConnection_Destroy(nc);
    nats_Close();
    return rc;
}
