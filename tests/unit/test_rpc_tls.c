/* Mutual TLS in common/rpc: identities, loading and checking the files,
 * a server's per-method roles, the client's check of the server, and a
 * reload. Certificates come from scripts/internal-pki.sh (openssl), as
 * make up makes them; a second PKI is "another CA". */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fsutil.h"
#include "peer_cache.h"
#include "peer_identity.h"
#include "rpc_client.h"
#include "rpc_server.h"
#include "tls_credentials.h"
#include "vmhost.pb-c.h"

#define METHOD_GATEWAY "/test.Tls/GatewayOnly"
#define METHOD_OWN_NODE "/test.Tls/OwnNodeVmhost"
#define CALL_TIMEOUT_MS 20000

static char dir[64], pki[128], other_pki[128];
static struct peer_identity last_peer;
static int last_peer_set;

static void handle(struct rpc_call *call, void *ctx)
{
    (void)ctx;
    ProtobufCMessage *req =
        rpc_call_recv_request(call, &airlock__vmhost__v1__list_sandboxes_request__descriptor);
    if (!req)
        return;
    protobuf_c_message_free_unpacked(req, NULL);
    const struct peer_identity *p = rpc_call_peer(call);
    last_peer_set = p != NULL;
    if (p)
        last_peer = *p;
    Airlock__Vmhost__V1__ListSandboxesResponse resp =
        AIRLOCK__VMHOST__V1__LIST_SANDBOXES_RESPONSE__INIT;
    rpc_call_reply(call, &resp.base);
}

static const struct rpc_method methods[] = {
    { METHOD_GATEWAY, handle, PEER_GATEWAY },
    { METHOD_OWN_NODE, handle, PEER_VMHOST | RPC_CALLER_SAME_NODE },
};

static int run_pki(const char *where, const char *ids)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "sh %s %s %s >/dev/null", AIRLOCK_INTERNAL_PKI_SCRIPT, where, ids);
    return system(cmd);
}

static struct tls_credentials *load(const char *where, const char *name, enum peer_role want,
                                    char *err, size_t errlen)
{
    char ca[256], cert[256], key[256];
    snprintf(ca, sizeof(ca), "%s/ca.crt", where);
    snprintf(cert, sizeof(cert), "%s/%s.crt", where, name);
    snprintf(key, sizeof(key), "%s/%s.key", where, name);
    struct tls_files f = { ca, cert, key };
    struct tls_credentials *t = NULL;
    if (tls_credentials_configure(&f, want, true, &t, err, errlen) < 0)
        return NULL;
    return t;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/airlock-test-rpc-tls-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(pki, sizeof(pki), "%s/pki", dir);
    snprintf(other_pki, sizeof(other_pki), "%s/other", dir);
    return run_pki(pki, "gateway vault egress:node-a vmhost:node-a vmhost:node-b") == 0 &&
                   run_pki(other_pki, "gateway") == 0
               ? 0
               : -1;
}

static int teardown(void **state)
{
    (void)state;
    return fs_remove_tree(dir, NULL, 0);
}

static void test_identities(void **state)
{
    (void)state;
    struct peer_identity id;
    char buf[PEER_IDENTITY_DNS_MAX];
    assert_int_equal(peer_identity_parse("vmhost:node-a", &id), 0);
    assert_int_equal(id.role, PEER_VMHOST);
    assert_string_equal(id.node, "node-a");
    assert_string_equal(peer_identity_dns(&id, buf, sizeof(buf)), "node-a.vmhost.airlock.internal");
    assert_int_equal(peer_identity_from_dns("gateway.airlock.internal", &id), 0);
    assert_int_equal(id.role, PEER_GATEWAY);
    assert_string_equal(peer_identity_text(&id, buf, sizeof(buf)), "gateway");
    assert_int_equal(peer_identity_from_dns("node_B.egress.airlock.internal", &id), 0);
    assert_string_equal(peer_identity_text(&id, buf, sizeof(buf)), "egress:node_B");
    /* A role without its node, a node where none belongs, strangers. */
    static const char *const bad_text[] = { "vmhost", "vmhost:", "gateway:x", "root",
                                            "egress:a.b", "vmhost:a b" };
    for (size_t i = 0; i < sizeof(bad_text) / sizeof(*bad_text); i++)
        assert_int_equal(peer_identity_parse(bad_text[i], &id), -1);
    static const char *const bad_dns[] = { "vault.example.com", "airlock.internal",
                                           "a.b.vmhost.airlock.internal", "x.gateway.airlock.internal",
                                           "vmhost.airlock.internal" };
    for (size_t i = 0; i < sizeof(bad_dns) / sizeof(*bad_dns); i++)
        assert_int_equal(peer_identity_from_dns(bad_dns[i], &id), -1);
}

/* A verified certificate is reused only for the same PEM, the same
 * credentials generation and before its notAfter. */
static void test_peer_cache(void **state)
{
    (void)state;
    struct peer_cache *c = peer_cache_new();
    assert_non_null(c);
    struct peer_identity gw = { .role = PEER_GATEWAY }, got;
    peer_cache_put(c, "PEM-A", 3, 1000, &gw);
    assert_true(peer_cache_get(c, "PEM-A", 3, 999, &got));
    assert_int_equal(got.role, PEER_GATEWAY);
    assert_false(peer_cache_get(c, "PEM-A", 3, 1000, &got)); /* expired */
    assert_false(peer_cache_get(c, "PEM-A", 4, 999, &got));  /* reloaded since */
    assert_false(peer_cache_get(c, "PEM-B", 3, 999, &got));  /* another certificate */
    assert_false(peer_cache_get(c, "PEM-", 3, 999, &got));
    peer_cache_free(c);
}

static void test_bad_files_are_named(void **state)
{
    (void)state;
    char err[1024], path[256];
    struct tls_credentials *t = NULL;
    struct tls_files none = { 0 };
    unsetenv(INTERNAL_CA_ENV);
    unsetenv(INTERNAL_CERT_ENV);
    unsetenv(INTERNAL_KEY_ENV);
    assert_int_equal(tls_credentials_configure(&none, PEER_GATEWAY, true, &t, err, sizeof(err)), 0);
    assert_null(t);
    struct tls_files partial = { .cert = "/x.crt" };
    assert_int_equal(tls_credentials_configure(&partial, PEER_GATEWAY, true, &t, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "go together"));

    assert_null(load(pki, "nope", PEER_GATEWAY, err, sizeof(err)));
    snprintf(path, sizeof(path), "%s/nope.crt", pki);
    assert_non_null(strstr(err, path));
    assert_null(load(pki, "vault", PEER_GATEWAY, err, sizeof(err)));
    assert_non_null(strstr(err, "is for a vault, not a gateway"));

    /* The other PKI's gateway certificate against our CA. */
    char ca[256], cert[256], key[256];
    snprintf(ca, sizeof(ca), "%s/ca.crt", pki);
    snprintf(cert, sizeof(cert), "%s/gateway.crt", other_pki);
    snprintf(key, sizeof(key), "%s/gateway.key", other_pki);
    struct tls_files foreign = { ca, cert, key };
    assert_int_equal(tls_credentials_configure(&foreign, PEER_GATEWAY, true, &t, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "does not verify"));
    /* Our gateway certificate with the vault's key. */
    snprintf(cert, sizeof(cert), "%s/gateway.crt", pki);
    snprintf(key, sizeof(key), "%s/vault.key", pki);
    struct tls_files mismatched = { ca, cert, key };
    assert_int_equal(
        tls_credentials_configure(&mismatched, PEER_GATEWAY, true, &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "does not match"));
    /* A key others may read is not taken. */
    snprintf(key, sizeof(key), "%s/gateway.key", pki);
    chmod(key, 0644);
    struct tls_files readable = { ca, cert, key };
    assert_int_equal(tls_credentials_configure(&readable, PEER_GATEWAY, true, &t, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, key));
    chmod(key, 0400);
}

/* Our clients wait for a ready connection within the deadline, so one
 * that never gets through (a handshake refused) ends at the deadline. */
#define REFUSED_TIMEOUT_MS 1500

static grpc_status_code call_within(struct rpc_channel *ch, const char *method, char **details,
                                    int timeout_ms)
{
    Airlock__Vmhost__V1__ListSandboxesRequest req =
        AIRLOCK__VMHOST__V1__LIST_SANDBOXES_REQUEST__INIT;
    ProtobufCMessage *resp = NULL;
    grpc_status_code code =
        rpc_unary(ch, method, &req.base, &airlock__vmhost__v1__list_sandboxes_response__descriptor,
                  &resp, details, timeout_ms);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return code;
}

static grpc_status_code call(struct rpc_channel *ch, const char *method, char **details)
{
    return call_within(ch, method, details, CALL_TIMEOUT_MS);
}

static bool never_through(grpc_status_code code)
{
    return code == GRPC_STATUS_UNAVAILABLE || code == GRPC_STATUS_DEADLINE_EXCEEDED;
}

/* A call to the server at addr as identity file name of dir where,
 * expecting the server to be server. */
static grpc_status_code call_as_within(const char *addr, const char *where, const char *name,
                                       const char *server, const char *method, char **details,
                                       int timeout_ms)
{
    char err[1024];
    struct tls_credentials *t = load(where, name, 0, err, sizeof(err));
    assert_non_null(t);
    struct rpc_channel_auth auth = { .tls = t, .server = server };
    struct rpc_channel *ch = rpc_channel_open(addr, &auth);
    assert_non_null(ch);
    grpc_status_code code = call_within(ch, method, details, timeout_ms);
    rpc_channel_close(ch);
    tls_credentials_free(t);
    return code;
}

static grpc_status_code call_as(const char *addr, const char *where, const char *name,
                                const char *server, const char *method, char **details)
{
    return call_as_within(addr, where, name, server, method, details, CALL_TIMEOUT_MS);
}

static void test_roles_per_method(void **state)
{
    (void)state;
    char err[1024], addr[128];
    snprintf(addr, sizeof(addr), "unix:%s/egress.sock", dir);
    struct tls_credentials *server = load(pki, "egress-node-a", PEER_EGRESS, err, sizeof(err));
    assert_non_null(server);
    struct rpc_security sec = { .tls = server };
    struct rpc_server *srv = rpc_server_start(addr, methods, sizeof(methods) / sizeof(*methods),
                                              NULL, &sec, err, sizeof(err));
    assert_non_null(srv);

    char *details = NULL;
    assert_int_equal(call_as(addr, pki, "gateway", "egress:node-a", METHOD_GATEWAY, NULL),
                     GRPC_STATUS_OK);
    assert_true(last_peer_set);
    assert_int_equal(last_peer.role, PEER_GATEWAY);
    assert_int_equal(call_as(addr, pki, "gateway", "egress:node-a", METHOD_OWN_NODE, &details),
                     GRPC_STATUS_PERMISSION_DENIED);
    assert_string_equal(details, "gateway may not call " METHOD_OWN_NODE);
    free(details);
    assert_int_equal(call_as(addr, pki, "vmhost-node-a", "egress:node-a", METHOD_OWN_NODE, NULL),
                     GRPC_STATUS_OK);
    assert_string_equal(last_peer.node, "node-a");
    assert_int_equal(call_as(addr, pki, "vmhost-node-b", "egress:node-a", METHOD_OWN_NODE, NULL),
                     GRPC_STATUS_PERMISSION_DENIED);
    /* A valid caller of a method nobody serves; another CA's gateway. */
    assert_int_equal(call_as(addr, pki, "gateway", "egress:node-a", "/test.Tls/Nope", NULL),
                     GRPC_STATUS_UNIMPLEMENTED);
    /* Plaintext gets nowhere; the client checks the server (egress:node-a
     * is not vault); a client of the other PKI does not trust our server. */
    struct rpc_channel *plain = rpc_channel_open(addr, NULL);
    assert_true(never_through(call_within(plain, METHOD_GATEWAY, NULL, REFUSED_TIMEOUT_MS)));
    rpc_channel_close(plain);
    assert_true(never_through(call_as_within(addr, pki, "gateway", "vault", METHOD_GATEWAY, NULL,
                                             REFUSED_TIMEOUT_MS)));
    assert_true(never_through(call_as_within(addr, other_pki, "gateway", "egress:node-a",
                                             METHOD_GATEWAY, NULL, REFUSED_TIMEOUT_MS)));
    assert_int_equal(last_peer.role, PEER_VMHOST); /* none of them reached the handler */
    rpc_server_stop(srv);
    tls_credentials_free(server);
}

static void test_reload(void **state)
{
    (void)state;
    char err[1024], addr[128], path[256];
    snprintf(addr, sizeof(addr), "unix:%s/reload.sock", dir);
    struct tls_credentials *server = load(pki, "egress-node-a", PEER_EGRESS, err, sizeof(err));
    struct tls_credentials *client = load(pki, "gateway", PEER_GATEWAY, err, sizeof(err));
    assert_non_null(server);
    assert_non_null(client);
    struct rpc_security sec = { .tls = server };
    struct rpc_server *srv = rpc_server_start(addr, methods, sizeof(methods) / sizeof(*methods),
                                              NULL, &sec, err, sizeof(err));
    assert_non_null(srv);
    struct rpc_channel_auth auth = { .tls = client, .server = "egress:node-a" };
    struct rpc_channel *ch = rpc_channel_open(addr, &auth);
    assert_int_equal(call(ch, METHOD_GATEWAY, NULL), GRPC_STATUS_OK);

    /* New certificates for both (the script makes missing ones again). */
    for (const char *const *n = (const char *const[]){ "gateway", "egress-node-a", NULL }; *n;
         n++) {
        snprintf(path, sizeof(path), "%s/%s.crt", pki, *n);
        unlink(path);
    }
    assert_int_equal(run_pki(pki, "gateway egress:node-a"), 0);
    assert_int_equal(tls_credentials_reload(server, err, sizeof(err)), 0);
    assert_int_equal(tls_credentials_refresh(client), 1); /* its files changed */
    assert_int_equal(tls_credentials_refresh(client), 0); /* and now they are in use */
    assert_int_equal(tls_credentials_generation(client), 1);
    assert_int_equal(call(ch, METHOD_GATEWAY, NULL), GRPC_STATUS_OK);
    struct rpc_channel *fresh = rpc_channel_open(addr, &auth);
    assert_int_equal(call(fresh, METHOD_GATEWAY, NULL), GRPC_STATUS_OK);
    rpc_channel_close(fresh);

    /* A reload to another node's certificate is refused; the old stays. */
    char ca[256], cert[256], key[256];
    snprintf(ca, sizeof(ca), "%s/ca.crt", pki);
    snprintf(cert, sizeof(cert), "%s/vmhost-node-a.crt", pki);
    snprintf(key, sizeof(key), "%s/vmhost-node-a.key", pki);
    struct tls_files node_a = { ca, cert, key };
    struct tls_credentials *vmhost = NULL;
    assert_int_equal(tls_credentials_configure(&node_a, PEER_VMHOST, true, &vmhost, err,
                                               sizeof(err)),
                     0);
    snprintf(path, sizeof(path), "%s/vmhost-node-b.crt", pki);
    assert_int_equal(rename(path, cert), 0);
    snprintf(path, sizeof(path), "%s/vmhost-node-b.key", pki);
    assert_int_equal(rename(path, key), 0);
    assert_int_equal(tls_credentials_reload(vmhost, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "names node node-b, not node-a"));
    assert_string_equal(tls_credentials_identity(vmhost)->node, "node-a");
    assert_int_equal(tls_credentials_generation(vmhost), 0);
    tls_credentials_free(vmhost);

    rpc_channel_close(ch);
    rpc_server_stop(srv);
    tls_credentials_free(client);
    tls_credentials_free(server);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identities),
        cmocka_unit_test(test_peer_cache),
        cmocka_unit_test(test_bad_files_are_named),
        cmocka_unit_test(test_roles_per_method),
        cmocka_unit_test(test_reload),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
