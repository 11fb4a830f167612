/* Credential injection end to end: a real airlock-vault (on a throwaway
 * PostgreSQL) holds the secrets, a real airlock-egress (--vault) intercepts
 * a real sandbox microVM's connections to bound hosts, and the "internet"
 * is netlab's inet namespace with an HTTPS and an HTTP server of this test
 * (python3, certificate from a CA the test makes) that record every
 * request they get. The guest runs curl and python3 and trusts the sandbox
 * CA through its system store only.
 *
 * What must hold: the upstream sees the secret, over HTTPS and HTTP, on
 * every request of a connection; the guest gets the answers but never the
 * secret — not in its environment, its disk or its memory (a full
 * snapshot); over the rate limit egress answers 429 and the upstream sees
 * nothing; a BYOK project's secret goes out only while the project is
 * unlocked (UnlockProject), locked its requests get a 503 saying so and
 * nothing goes out; vault audits every injection; neither service
 * logs a secret. A policy with inspect_tls has egress terminate TLS to an
 * allowed host without a binding too: the Host inside must be the host
 * the connection was allowed for, and nothing is added. Only addresses in
 * the test's own namespaces are used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "egress.pb-c.h"
#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "netlab.h"
#include "rpc_client.h"
#include "test_proc.h"
#include "upstream.h"
#include "vault.pb-c.h"
#include "vault_fixture.h"

#define VAULT(name) "/airlock.vault.v1.Vault/" name
#define CALL_TIMEOUT_MS 20000
#define START_TIMEOUT_MS 20000
#define PROJECT "proj-inject"
#define BYOK_PROJECT "proj-byok"
#define INSPECT_PROJECT "proj-inspect" /* no secrets */
/* other.test and www.wild.test both resolve to NETLAB_WEB2 (netlab's DNS);
 * the test's servers listen there on ports netlab leaves free. */
#define BOUND_HOST "other.test"
#define LIMITED_HOST "www.wild.test"
#define HTTPS_PORT "8443"
#define HTTP_PORT "8081"
#define LIMIT_PER_MINUTE 2
#define CURL "curl -sS --max-time 30 "
#define IDLE_TIMEOUT_S "5"

static struct {
    struct vault_fixture vault;
    bool vault_started;
    char dir[128];               /* egress state, certificates, logs */
    char egress_addr[320];
    pid_t egress_pid;
    struct upstream upstream;
    struct itest_vmhost vh;
    bool vh_started;
    char sandbox[32], byok_sandbox[32], inspect_sandbox[32];
    bool sandbox_created, byok_created, inspect_created;
    /* Never sent into a guest: each is grepped for at the end. */
    char secret[64], limited_secret[64], byok_secret[64];
    char placeholder[160];
    uint8_t byok_key[32];        /* the BYOK project's customer key */
} lab;

/* ---- helpers ---- */

static void random_secret(char *out, size_t len, const char *prefix)
{
    uint8_t raw[24];
    assert_int_equal(getrandom(raw, sizeof(raw), 0), (ssize_t)sizeof(raw));
    size_t o = (size_t)snprintf(out, len, "%s", prefix);
    for (size_t i = 0; i < sizeof(raw) && o + 2 < len; i++, o += 2)
        snprintf(out + o, len - o, "%02x", raw[i]);
}

static char *path_in(const char *name)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", lab.dir, name);
    return path;
}

/* sh -c script in sandbox id: its exit code, and its stdout in out. */
static int guest_sh_in(const char *id, const char *script, char *out, size_t outlen)
{
    return itest_assert_sh_code(&lab.vh, id, script, out, outlen);
}

static int guest_sh(const char *script, char *out, size_t outlen)
{
    return guest_sh_in(lab.sandbox, script, out, outlen);
}

/* CURL args in the lab's sandbox must exit 0; its stdout in out. */
static void guest_curl(const char *args, char *out, size_t outlen)
{
    char script[1024];
    snprintf(script, sizeof(script), CURL "%s", args);
    assert_int_equal(guest_sh(script, out, outlen), 0);
}

/* Nothing that reached the guest may carry a secret. */
static void assert_no_secret(const char *text)
{
    assert_null(strstr(text, lab.secret));
    assert_null(strstr(text, lab.limited_secret));
    assert_null(strstr(text, lab.byok_secret));
}

/* The recorded request for path (the last one), malloc'd. */
static char *upstream_request_for(const char *path)
{
    char *found = upstream_request(&lab.upstream, path);
    if (!found)
        fail_msg("the upstream got no request for %s", path);
    return found;
}

static size_t count_in(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* ---- vault ---- */

/* plaintext: also into plain HTTP requests (else TLS only). */
static void create_secret(const char *project, const char *name, const char *value,
                          const char *host, uint32_t per_minute, bool plaintext,
                          const uint8_t *customer_key, char *placeholder, size_t placeholder_len)
{
    Airlock__Vault__V1__CreateSecretRequest req = AIRLOCK__VAULT__V1__CREATE_SECRET_REQUEST__INIT;
    char *patterns[] = { (char *)host };
    req.project_id = (char *)project;
    req.name = (char *)name;
    req.value.data = (uint8_t *)value;
    req.value.len = strlen(value);
    req.n_host_patterns = 1;
    req.host_patterns = patterns;
    req.injection_rule = "Authorization: Bearer {secret}";
    req.rate_limit_per_minute = per_minute;
    req.allow_plaintext = plaintext;
    if (customer_key) {
        req.customer_key.data = (uint8_t *)customer_key;
        req.customer_key.len = 32;
    }
    req.actor = "test";
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(lab.vault.ch, VAULT("CreateSecret"), &req.base,
                                    &airlock__vault__v1__secret_metadata__descriptor, &resp,
                                    &details, CALL_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        fail_msg("CreateSecret: %s", details ? details : "");
    Airlock__Vault__V1__SecretMetadata *m = (void *)resp;
    if (placeholder)
        snprintf(placeholder, placeholder_len, "%s", m->placeholder);
    free(details);
    protobuf_c_message_free_unpacked(resp, NULL);
}

static int register_byok_project(void)
{
    uint8_t *key = lab.byok_key;
    if (getrandom(key, sizeof(lab.byok_key), 0) != (ssize_t)sizeof(lab.byok_key))
        return -1;
    Airlock__Vault__V1__RegisterProjectRequest req =
        AIRLOCK__VAULT__V1__REGISTER_PROJECT_REQUEST__INIT;
    req.project_id = BYOK_PROJECT;
    req.customer_key.data = key;
    req.customer_key.len = sizeof(lab.byok_key);
    req.actor = "test";
    ProtobufCMessage *resp = NULL;
    if (rpc_unary(lab.vault.ch, VAULT("RegisterProject"), &req.base,
                  &airlock__vault__v1__register_project_response__descriptor, &resp, NULL,
                  CALL_TIMEOUT_MS) != GRPC_STATUS_OK)
        return -1;
    protobuf_c_message_free_unpacked(resp, NULL);
    /* The secret goes in with the key; egress will not have it. */
    create_secret(BYOK_PROJECT, "byok", lab.byok_secret, BOUND_HOST, 0, false, key, NULL, 0);
    return 0;
}

static Airlock__Vault__V1__ListAuditResponse *audit(const char *project)
{
    Airlock__Vault__V1__ListAuditRequest req = AIRLOCK__VAULT__V1__LIST_AUDIT_REQUEST__INIT;
    req.project_id = (char *)project;
    req.limit = 1000;
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(lab.vault.ch, VAULT("ListAudit"), &req.base,
                               &airlock__vault__v1__list_audit_response__descriptor, &resp, NULL,
                               CALL_TIMEOUT_MS),
                     GRPC_STATUS_OK);
    return (Airlock__Vault__V1__ListAuditResponse *)resp;
}

static size_t audit_count(const Airlock__Vault__V1__ListAuditResponse *a, const char *status,
                          const char *host)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_entries; i++)
        n += strcmp(a->entries[i]->action, "inject") == 0 &&
             strcmp(a->entries[i]->status, status) == 0 &&
             (!host || strcmp(a->entries[i]->host, host) == 0);
    return n;
}

/* ---- the upstream servers ---- */

/* Waits for the process *pid to make path; 0 in *pid once it died. */
static int wait_for_file(const char *path, pid_t *pid, const char *log)
{
    int64_t deadline = clock_monotonic_ms() + START_TIMEOUT_MS;
    while (access(path, F_OK) != 0) {
        bool died = waitpid(*pid, NULL, WNOHANG) == *pid;
        if (died || clock_monotonic_ms() > deadline) {
            fprintf(stderr, "%s did not appear%s\n", path, died ? ": the process died" : "");
            test_print_log_tail(lab.dir, log);
            if (died)
                *pid = 0;
            return -1;
        }
        usleep(20 * 1000);
    }
    return 0;
}

static int upstream_start_lab(void)
{
    return upstream_start(&lab.upstream, lab.dir, NETLAB_INET_NS, NETLAB_WEB2, BOUND_HOST,
                          atoi(HTTP_PORT), atoi(HTTPS_PORT));
}

/* ---- egress ---- */

static int egress_start(void)
{
    char sock[256], state[256];
    snprintf(sock, sizeof(sock), "%s", path_in("egress.sock"));
    snprintf(state, sizeof(state), "%s", path_in("egress-state"));
    snprintf(lab.egress_addr, sizeof(lab.egress_addr), "unix:%s", sock);
    const char *argv[] = { AIRLOCK_EGRESS_BIN, "--listen", lab.egress_addr, "--upstream-dns",
                           NETLAB_DNS, "--uplink-netns", netlab_ns_path(NETLAB_UPLINK_NS),
                           "--vault", lab.vault.addr, "--upstream-ca", lab.upstream.ca_path,
                           "--state-dir", state,
                           /* Short, for upstream_silence_ends_at_idle_timeout;
                            * no other case leaves a connection silent so long. */
                           "--idle-timeout-s", IDLE_TIMEOUT_S,
                           NULL };
    lab.egress_pid = test_spawn(argv, lab.dir, "egress.log");
    if (lab.egress_pid <= 0 || wait_for_file(sock, &lab.egress_pid, "egress.log") < 0)
        return -1;
    struct rpc_channel *ch = rpc_channel_open(lab.egress_addr, NULL);
    int rc = ch && rpc_channel_wait_ready(ch, START_TIMEOUT_MS) == 0 ? 0 : -1;
    if (ch)
        rpc_channel_close(ch);
    return rc;
}

/* ---- the sandboxes ---- */

/* Reaches the bound hosts on the test's ports and allowed.test (netlab's
 * plain server, no binding) on 80. */
static Airlock__Egress__V1__Policy *policy(void)
{
    static char *domains[] = { BOUND_HOST, LIMITED_HOST, "allowed.test" };
    static uint32_t ports[] = { 80, 8081, 8443 };
    static Airlock__Egress__V1__Policy p = AIRLOCK__EGRESS__V1__POLICY__INIT;
    p.n_allow_domains = 3;
    p.allow_domains = domains;
    p.n_allow_ports = 3;
    p.allow_ports = ports;
    return &p;
}

static int create_sandbox_with(const char *id, const char *project,
                               Airlock__Egress__V1__Policy *p)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req =
        AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = (char *)id;
    req.policy = p;
    req.project_id = (char *)project;
    grpc_status_code st;
    char *details = NULL;
    char *got = itest_create_sandbox_with(&lab.vh, &req, &st, &details);
    if (!got) {
        fprintf(stderr, "CreateSandbox %s: %s\n", id, details ? details : "");
        itest_vmhost_print_log_tail(&lab.vh);
        test_print_log_tail(lab.dir, "egress.log");
    }
    free(details);
    free(got);
    return got ? 0 : -1;
}

static int create_sandbox(const char *id, const char *project)
{
    return create_sandbox_with(id, project, policy());
}

static void set_sandbox_policy(const char *id, Airlock__Egress__V1__Policy *p)
{
    Airlock__Vmhost__V1__SetSandboxPolicyRequest req =
        AIRLOCK__VMHOST__V1__SET_SANDBOX_POLICY_REQUEST__INIT;
    req.id = (char *)id;
    req.policy = p;
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(lab.vh.ch, ITEST_METHOD("SetSandboxPolicy"), &req.base,
                                    &airlock__vmhost__v1__sandbox__descriptor, &resp, &details,
                                    CALL_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        fail_msg("SetSandboxPolicy: %s", details ? details : "");
    free(details);
    protobuf_c_message_free_unpacked(resp, NULL);
}

/* The sandbox's directory in vmhost's store (the data dir itself is btrfs,
 * or a loop-mounted image under store/). */
static void sandbox_dir(const char *id, char *out, size_t len)
{
    if (fs_path(out, len, "%s/sandboxes/%s", lab.vh.data_dir, id) < 0 || access(out, F_OK) != 0)
        assert_int_equal(fs_path(out, len, "%s/store/sandboxes/%s", lab.vh.data_dir, id), 0);
}

/* ---- tests ---- */

static void test_guest_trusts_the_sandbox_ca(void **state)
{
    (void)state;
    char out[4096];
    assert_int_equal(guest_sh("grep -c 'airlock sandbox CA' /etc/ssl/certs/ca-certificates.crt",
                              out, sizeof(out)),
                     0);
    assert_string_equal(out, "1\n");
    /* The slot's copy, for update-ca-certificates' hook. */
    assert_int_equal(guest_sh("openssl x509 -noout -subject -in /run/airlock/trust-slot", out,
                              sizeof(out)),
                     0);
    char subject[128];
    snprintf(subject, sizeof(subject), "airlock sandbox %s CA", lab.sandbox);
    assert_non_null(strstr(out, subject));
    /* egress saved it for a restart of its own, readable by it only. */
    char saved[PATH_MAX + 128];
    snprintf(saved, sizeof(saved), "%s/sandbox-ca/%s.pem", path_in("egress-state"), lab.sandbox);
    struct stat st;
    assert_int_equal(stat(saved, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
}

/* Runs script in the guest, which must print answer; the upstream got the
 * request for path on port with the bound header. The recorded request,
 * malloc'd. */
static char *expect_injected(const char *script, const char *answer, const char *path,
                             const char *port)
{
    char out[4096], want[160];
    assert_int_equal(guest_sh(script, out, sizeof(out)), 0);
    assert_string_equal(out, answer);
    char *req = upstream_request_for(path);
    snprintf(want, sizeof(want), "[\"Authorization\", \"Bearer %s\"]", lab.secret);
    assert_non_null(strstr(req, want));
    snprintf(want, sizeof(want), "\"port\": %s", port);
    assert_non_null(strstr(req, want));
    return req;
}

static void test_https_request_gets_the_secret(void **state)
{
    (void)state;
    free(expect_injected(CURL "https://" BOUND_HOST ":" HTTPS_PORT "/v1/models",
                         "upstream-ok GET /v1/models\n", "/v1/models", HTTPS_PORT));
    char out[4096];
    /* The certificate the guest saw is the sandbox CA's, for the host. */
    guest_curl("-v -o /dev/null https://" BOUND_HOST ":" HTTPS_PORT
               "/cert 2>&1 | grep -i 'issuer:'",
               out, sizeof(out));
    assert_non_null(strstr(out, "airlock sandbox"));
    assert_no_secret(out);
}

/* update-ca-certificates rebuilds the bundle from the system's CAs; its
 * hook (guest/trust_store.h) puts the sandbox CA back. */
static void test_ca_survives_update_ca_certificates(void **state)
{
    (void)state;
    char out[4096];
    assert_int_equal(guest_sh("update-ca-certificates --fresh >/dev/null 2>&1 && "
                              "grep -c 'airlock sandbox CA' /etc/ssl/certs/ca-certificates.crt",
                              out, sizeof(out)),
                     0);
    assert_string_equal(out, "1\n");
    free(expect_injected(CURL "https://" BOUND_HOST ":" HTTPS_PORT "/v1/rebuilt",
                         "upstream-ok GET /v1/rebuilt\n", "/v1/rebuilt", HTTPS_PORT));
}

/* A secret bound for TLS only (the default) never crosses the network in
 * clear: plain HTTP to its host is refused with a reason, nothing goes
 * upstream, and vault audits the refusal. The plaintext-allowed secret's
 * plain HTTP requests are injected (test_rate_limit_answers_429). */
static void test_plain_http_is_refused_for_a_tls_only_secret(void **state)
{
    (void)state;
    char out[4096];
    guest_curl("-D - -d 'q=1' http://" BOUND_HOST ":" HTTP_PORT "/v1/plain", out, sizeof(out));
    assert_non_null(strstr(out, "HTTP/1.1 403"));
    assert_non_null(strstr(out, "X-Airlock-Egress-Error: plaintext_refused"));
    assert_non_null(strstr(out, "TLS connections only"));
    assert_no_secret(out);
    assert_int_equal(upstream_requests(&lab.upstream, "/v1/plain", NULL), 0);
    Airlock__Vault__V1__ListAuditResponse *a = audit(PROJECT);
    assert_true(audit_count(a, "PERMISSION_DENIED", BOUND_HOST) >= 1);
    protobuf_c_message_free_unpacked(&a->base, NULL);
}

static void test_guest_header_is_replaced(void **state)
{
    (void)state;
    char out[4096];
    guest_curl("-H 'Authorization: Bearer guest-made-up' https://" BOUND_HOST ":" HTTPS_PORT
               "/replaced",
               out, sizeof(out));
    char *req = upstream_request_for("/replaced");
    assert_null(strstr(req, "guest-made-up"));
    assert_int_equal(count_in(req, "\"Authorization\""), 1);
    assert_non_null(strstr(req, lab.secret));
    free(req);
}

static void test_placeholder_is_replaced(void **state)
{
    (void)state;
    char script[1024], out[4096], want[256];
    /* The agent put its placeholder where its SDK puts keys, in the bound
     * header: egress puts the secret there, in the agent's own format. */
    snprintf(script, sizeof(script),
             CURL "-H 'Authorization: Token %s' https://" BOUND_HOST ":" HTTPS_PORT "/placeholder",
             lab.placeholder);
    assert_int_equal(guest_sh(script, out, sizeof(out)), 0);
    char *req = upstream_request_for("/placeholder");
    snprintf(want, sizeof(want), "[\"Authorization\", \"Token %s\"]", lab.secret);
    assert_non_null(strstr(req, want));
    assert_int_equal(count_in(req, "\"Authorization\""), 1);
    assert_null(strstr(req, lab.placeholder));
    free(req);
    /* In any other header (echoed and logged by upstreams) it stays the
     * placeholder, and the bound header is added as without one. */
    snprintf(script, sizeof(script),
             CURL "-H 'X-Api-Key: %s' -H 'User-Agent: ua-%s' -H 'Cookie: k=%s' https://" BOUND_HOST
                  ":" HTTPS_PORT "/placeholder-elsewhere",
             lab.placeholder, lab.placeholder, lab.placeholder);
    assert_int_equal(guest_sh(script, out, sizeof(out)), 0);
    req = upstream_request_for("/placeholder-elsewhere");
    snprintf(want, sizeof(want), "[\"X-Api-Key\", \"%s\"]", lab.placeholder);
    assert_non_null(strstr(req, want));
    snprintf(want, sizeof(want), "[\"User-Agent\", \"ua-%s\"]", lab.placeholder);
    assert_non_null(strstr(req, want));
    snprintf(want, sizeof(want), "[\"Cookie\", \"k=%s\"]", lab.placeholder);
    assert_non_null(strstr(req, want));
    snprintf(want, sizeof(want), "[\"Authorization\", \"Bearer %s\"]", lab.secret);
    assert_non_null(strstr(req, want));
    assert_int_equal(count_in(req, lab.secret), 1);
    free(req);
}

static void test_every_request_on_a_connection(void **state)
{
    (void)state;
    char out[4096];
    /* curl sends both over one kept-alive connection. */
    guest_curl("https://" BOUND_HOST ":" HTTPS_PORT "/keep/1 https://" BOUND_HOST ":" HTTPS_PORT
               "/keep/2",
               out, sizeof(out));
    assert_string_equal(out, "upstream-ok GET /keep/1\nupstream-ok GET /keep/2\n");
    char *first = upstream_request_for("/keep/1"), *second = upstream_request_for("/keep/2");
    assert_non_null(strstr(first, lab.secret));
    assert_non_null(strstr(second, lab.secret));
    /* One upstream connection too: the same client port. */
    const char *p1 = strstr(first, "\"peer\": "), *p2 = strstr(second, "\"peer\": ");
    assert_non_null(p1);
    assert_non_null(p2);
    assert_int_equal(atoi(p1 + 8), atoi(p2 + 8));
    free(first);
    free(second);
}

/* Sends two requests on one TLS connection: the first names the bound
 * host, the second another one. Prints all that came back. */
static const char host_switch_py[] =
    "import socket, ssl\n"
    "c = ssl.create_default_context()\n"
    "s = c.wrap_socket(socket.create_connection(('" BOUND_HOST "', " HTTPS_PORT "), timeout=20),\n"
    "                  server_hostname='" BOUND_HOST "')\n"
    "s.sendall(b'GET /switch/1 HTTP/1.1\\r\\nHost: " BOUND_HOST "\\r\\n\\r\\n')\n"
    "got = b''\n"
    "while b'upstream-ok' not in got:\n"
    "    got += s.recv(4096)\n"
    "s.sendall(b'GET /switch/2 HTTP/1.1\\r\\nHost: " LIMITED_HOST "\\r\\n\\r\\n')\n"
    "while True:\n"
    "    d = s.recv(4096)\n"
    "    if not d:\n"
    "        break\n"
    "    got += d\n"
    "print(got.decode('latin-1'))\n";

/* An upstream that echoes the request (here every header, three times, in
 * the body, and the Authorization in a response header) must not hand the
 * guest the secret egress added: each copy arrives masked, the body keeps
 * its length, and the guest's wishes for a compressed or partial answer,
 * where a masked copy could hide, never reach the upstream. */
static void test_echoed_secret_is_masked(void **state)
{
    (void)state;
    char mask[sizeof(lab.secret)], script[512], out[4096];
    memset(mask, '*', strlen(lab.secret));
    mask[strlen(lab.secret)] = '\0';
    static const char *const paths[] = { "/echo", "/echo-chunked" };
    for (size_t i = 0; i < 2; i++) {
        /* Copies of the secret counted in the guest: the masked ones (by
         * their line) and the length the body kept. */
        snprintf(script, sizeof(script),
                 CURL "--compressed -H 'Range: bytes=0-99' -D /tmp/echo.head -o /tmp/echo "
                      "https://" BOUND_HOST ":" HTTPS_PORT "%s && "
                 "grep -c '^Authorization: Bearer \\*\\*\\*\\*' /tmp/echo; wc -c < /tmp/echo; "
                 "grep -i '^x-echo-authorization' /tmp/echo.head; tail -c 600 /tmp/echo",
                 paths[i]);
        assert_int_equal(guest_sh(script, out, sizeof(out)), 0);
        assert_no_secret(out);
        unsigned copies = 0;
        size_t body_len = 0;
        assert_int_equal(sscanf(out, "%u %zu", &copies, &body_len), 2);
        assert_int_equal(copies, 3);
        assert_true(body_len > 3 * 16000);
        char want[200];
        snprintf(want, sizeof(want), "Bearer %s", mask);
        assert_non_null(strstr(out, want));
        char *req = upstream_request_for(paths[i]);
        assert_non_null(strstr(req, lab.secret)); /* it was injected */
        assert_null(strstr(req, "Accept-Encoding"));
        assert_null(strstr(req, "\"Range\""));
        free(req);
    }
}

static void test_host_switch_is_refused(void **state)
{
    (void)state;
    char *err = NULL, out[4096];
    assert_int_equal(itest_write_file(&lab.vh, lab.sandbox, (const uint8_t *)"/tmp/switch.py", 14,
                                      (const uint8_t *)host_switch_py, strlen(host_switch_py),
                                      &err),
                     GRPC_STATUS_OK);
    free(err);
    assert_int_equal(guest_sh("python3 /tmp/switch.py", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "upstream-ok GET /switch/1"));
    assert_non_null(strstr(out, "HTTP/1.1 421 Misdirected Request"));
    assert_int_equal(upstream_requests(&lab.upstream, "/switch/2", NULL), 0);
}

static void test_unbound_host_is_spliced(void **state)
{
    (void)state;
    char out[512];
    /* netlab's own server answers with the address it was reached on: the
     * connection went through untouched. */
    guest_curl("--http0.9 http://allowed.test/", out, sizeof(out));
    assert_non_null(strstr(out, "HELLO " NETLAB_WEB1 ":80 got="));
}

static void test_upstream_certificate_is_verified(void **state)
{
    (void)state;
    char out[4096];
    /* LIMITED_HOST's server presents BOUND_HOST's certificate: egress
     * refuses to send the secret there. */
    guest_curl("-w '\\n%{http_code}' https://" LIMITED_HOST ":" HTTPS_PORT "/wrong-cert", out,
               sizeof(out));
    assert_non_null(strstr(out, "did not verify"));
    assert_non_null(strstr(out, "\n502"));
    assert_int_equal(upstream_requests(&lab.upstream, "/wrong-cert", NULL), 0);
}

/* A bound host's server that takes the request and never answers: egress
 * gives up after the idle timeout — 504 upstream_timeout to the guest,
 * the upstream connection closed — instead of holding the connection (and
 * its thread) for good. */
static void test_upstream_silence_ends_at_idle_timeout(void **state)
{
    (void)state;
    char out[4096];
    guest_curl("-D - -w '\\n%{http_code}' https://" BOUND_HOST ":" HTTPS_PORT "/hang/silent", out,
               sizeof(out));
    assert_non_null(strstr(out, "X-Airlock-Egress-Error: upstream_timeout"));
    assert_non_null(strstr(out, "\n504"));
    assert_int_equal(upstream_requests(&lab.upstream, "/hang/silent", lab.secret), 1);
    int64_t deadline = clock_monotonic_ms() + 10000;
    while (upstream_requests(&lab.upstream, "\"event\": \"hang-closed\"", "/hang/silent") == 0 &&
           clock_monotonic_ms() < deadline)
        usleep(50 * 1000);
    assert_int_equal(upstream_requests(&lab.upstream, "\"event\": \"hang-closed\"", "/hang/silent"),
                     1);
    assert_no_secret(out);
}

static void test_rate_limit_answers_429(void **state)
{
    (void)state;
    char out[4096];
    for (int i = 0; i < LIMIT_PER_MINUTE; i++) {
        guest_curl("-w '\\n%{http_code}' http://" LIMITED_HOST ":" HTTP_PORT "/limited", out,
                   sizeof(out));
        assert_string_equal(out, "upstream-ok GET /limited\n\n200");
    }
    assert_int_equal(upstream_requests(&lab.upstream, "\"/limited\"", lab.limited_secret),
                     LIMIT_PER_MINUTE);
    guest_curl("-w '\\n%{http_code}' http://" LIMITED_HOST ":" HTTP_PORT "/limited", out,
               sizeof(out));
    assert_non_null(strstr(out, "rate limit"));
    assert_non_null(strstr(out, "\n429"));
    /* Not forwarded: the upstream still has only the allowed ones. */
    assert_int_equal(upstream_requests(&lab.upstream, "\"/limited\"", NULL), LIMIT_PER_MINUTE);
}

/* UnlockProject with key (NULL: LockProject); the call's status. */
static grpc_status_code set_byok_unlocked(const uint8_t *key)
{
    ProtobufCMessage *resp = NULL;
    grpc_status_code st;
    if (key) {
        Airlock__Vault__V1__UnlockProjectRequest req =
            AIRLOCK__VAULT__V1__UNLOCK_PROJECT_REQUEST__INIT;
        req.project_id = BYOK_PROJECT;
        req.customer_key.data = (uint8_t *)key;
        req.customer_key.len = sizeof(lab.byok_key);
        req.ttl_s = 600;
        req.actor = "test";
        st = rpc_unary(lab.vault.ch, VAULT("UnlockProject"), &req.base,
                       &airlock__vault__v1__unlock_project_response__descriptor, &resp, NULL,
                       CALL_TIMEOUT_MS);
    } else {
        Airlock__Vault__V1__LockProjectRequest req =
            AIRLOCK__VAULT__V1__LOCK_PROJECT_REQUEST__INIT;
        req.project_id = BYOK_PROJECT;
        req.actor = "test";
        st = rpc_unary(lab.vault.ch, VAULT("LockProject"), &req.base,
                       &airlock__vault__v1__lock_project_response__descriptor, &resp, NULL,
                       CALL_TIMEOUT_MS);
    }
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st;
}

/* A request of the BYOK sandbox for path that egress refuses because the
 * project is locked: the guest is told so, nothing goes out. */
static void assert_byok_locked(const char *path)
{
    char cmd[512], out[4096];
    snprintf(cmd, sizeof(cmd), CURL "-w '\\n%%{http_code}' https://" BOUND_HOST ":" HTTPS_PORT "%s",
             path);
    assert_int_equal(guest_sh_in(lab.byok_sandbox, cmd, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "is locked"));
    assert_non_null(strstr(out, "unlock"));
    assert_non_null(strstr(out, "not sent"));
    assert_non_null(strstr(out, "\n503"));
    assert_no_secret(out);
    assert_int_equal(upstream_requests(&lab.upstream, path, NULL), 0);
}

/* A BYOK project's secret is injected only while the project is unlocked
 * (vault holds its data key); locked, the guest gets a 503 that says so. */
static void test_byok_project_locked_and_unlocked(void **state)
{
    (void)state;
    snprintf(lab.byok_sandbox, sizeof(lab.byok_sandbox), "credbyok-%d", (int)getpid());
    assert_int_equal(create_sandbox(lab.byok_sandbox, BYOK_PROJECT), 0);
    lab.byok_created = true;
    assert_byok_locked("/byok-locked");

    uint8_t wrong[32];
    memcpy(wrong, lab.byok_key, sizeof(wrong));
    wrong[0] ^= 0xff;
    assert_int_equal(set_byok_unlocked(wrong), GRPC_STATUS_FAILED_PRECONDITION);
    assert_byok_locked("/byok-wrong-key");

    assert_int_equal(set_byok_unlocked(lab.byok_key), GRPC_STATUS_OK);
    char out[4096];
    assert_int_equal(guest_sh_in(lab.byok_sandbox,
                                 CURL "-w '\\n%{http_code}' https://" BOUND_HOST ":" HTTPS_PORT
                                      "/byok-unlocked",
                                 out, sizeof(out)),
                     0);
    assert_string_equal(out, "upstream-ok GET /byok-unlocked\n\n200");
    assert_int_equal(upstream_requests(&lab.upstream, "/byok-unlocked", lab.byok_secret), 1);

    assert_int_equal(set_byok_unlocked(NULL), GRPC_STATUS_OK);
    assert_byok_locked("/byok-relocked");

    Airlock__Vault__V1__ListAuditResponse *a = audit(BYOK_PROJECT);
    assert_int_equal(audit_count(a, "FAILED_PRECONDITION", BOUND_HOST), 3);
    assert_int_equal(audit_count(a, "OK", BOUND_HOST), 1);
    protobuf_c_message_free_unpacked(&a->base, NULL);
    assert_int_equal(itest_delete_sandbox(&lab.vh, lab.byok_sandbox), GRPC_STATUS_OK);
    lab.byok_created = false;
}

/* A project without secrets, inspect_tls on: egress terminates the TLS
 * anyway, so a request inside naming another host than the SNI (domain
 * fronting within one server) is refused; a proper one goes as it is.
 * Off again, the same mismatch is spliced past egress unseen — the
 * default mode's residual risk (docs/security.md). */
static void test_inspect_tls_checks_host_inside_tls(void **state)
{
    (void)state;
    Airlock__Egress__V1__Policy p = *policy();
    p.inspect_tls = true;
    snprintf(lab.inspect_sandbox, sizeof(lab.inspect_sandbox), "credinsp-%d", (int)getpid());
    assert_int_equal(create_sandbox_with(lab.inspect_sandbox, INSPECT_PROJECT, &p), 0);
    lab.inspect_created = true;
    char out[4096];
    assert_int_equal(guest_sh_in(lab.inspect_sandbox,
                                 CURL "-w '\\n%{http_code}' https://" BOUND_HOST ":" HTTPS_PORT
                                      "/inspected",
                                 out, sizeof(out)),
                     0);
    assert_string_equal(out, "upstream-ok GET /inspected\n\n200");
    char *req = upstream_request_for("/inspected");
    assert_null(strstr(req, "Authorization"));
    free(req);
    /* The certificate the guest saw is its sandbox CA's: terminated. */
    assert_int_equal(guest_sh_in(lab.inspect_sandbox,
                                 CURL "-v -o /dev/null https://" BOUND_HOST ":" HTTPS_PORT
                                      "/inspected-cert 2>&1 | grep -i 'issuer:'",
                                 out, sizeof(out)),
                     0);
    assert_non_null(strstr(out, "airlock sandbox"));
    assert_int_equal(guest_sh_in(lab.inspect_sandbox,
                                 CURL "-w '\\n%{http_code}' -H 'Host: " LIMITED_HOST "' https://"
                                      BOUND_HOST ":" HTTPS_PORT "/inspect-mismatch",
                                 out, sizeof(out)),
                     0);
    assert_non_null(strstr(out, "\n421"));
    assert_int_equal(upstream_requests(&lab.upstream, "/inspect-mismatch", NULL), 0);

    p.inspect_tls = false;
    set_sandbox_policy(lab.inspect_sandbox, &p);
    /* Spliced: the guest speaks TLS with the upstream itself (whose CA
     * only egress trusts, hence -k), and egress never sees the Host. */
    assert_int_equal(guest_sh_in(lab.inspect_sandbox,
                                 CURL "-k -H 'Host: " LIMITED_HOST "' https://" BOUND_HOST
                                      ":" HTTPS_PORT "/inspect-off",
                                 out, sizeof(out)),
                     0);
    assert_string_equal(out, "upstream-ok GET /inspect-off\n");
    assert_int_equal(upstream_requests(&lab.upstream, "/inspect-off", LIMITED_HOST), 1);
    assert_int_equal(itest_delete_sandbox(&lab.vh, lab.inspect_sandbox), GRPC_STATUS_OK);
    lab.inspect_created = false;
}

static void test_audit_has_every_injection(void **state)
{
    (void)state;
    /* Every request the upstream got with a secret is an OK inject row,
     * and no row is without its request. */
    size_t injected = upstream_requests(&lab.upstream, lab.secret, NULL) +
                      upstream_requests(&lab.upstream, lab.limited_secret, NULL);
    assert_true(injected >= 10);
    Airlock__Vault__V1__ListAuditResponse *a = audit(PROJECT);
    assert_int_equal(audit_count(a, "OK", NULL), injected);
    assert_int_equal(audit_count(a, "RESOURCE_EXHAUSTED", LIMITED_HOST), 1);
    for (size_t i = 0; i < a->n_entries; i++) {
        Airlock__Vault__V1__AuditEntry *e = a->entries[i];
        if (strcmp(e->action, "inject") != 0)
            continue;
        assert_string_equal(e->sandbox_id, lab.sandbox);
        assert_non_null(strstr(e->actor, "egress/"));
        assert_true(e->method[0] && e->path[0] == '/' && e->at_unix_ms > 0);
        assert_true(strcmp(e->host, BOUND_HOST) == 0 || strcmp(e->host, LIMITED_HOST) == 0);
    }
    protobuf_c_message_free_unpacked(&a->base, NULL);
}

/* How often needle occurs in the file (mapped whole). */
static size_t file_hits(const char *path, const char *needle)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    const uint8_t *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    assert_true(p != MAP_FAILED);
    size_t n = 0, len = strlen(needle);
    for (const uint8_t *q = p; (q = memmem(q, (size_t)st.st_size - (size_t)(q - p), needle, len));
         q += len)
        n++;
    munmap((void *)p, (size_t)st.st_size);
    return n;
}

/* Hits of needle in every regular file under dir. */
static size_t tree_hits(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode))
            n += tree_hits(path, needle);
        else if (S_ISREG(st.st_mode))
            n += file_hits(path, needle);
    }
    closedir(d);
    return n;
}

static void test_secret_never_reaches_the_guest(void **state)
{
    (void)state;
    /* Controls: a string the guest does hold, in a process's environment,
     * in memory and on disk, so the searches below can find what is
     * there. */
    char canary[64], script[512], *env_text = malloc(1 << 20);
    assert_non_null(env_text);
    random_secret(canary, sizeof(canary), "canary-");
    snprintf(script, sizeof(script),
             "CANARY=%s setsid sleep 100000 </dev/null >/dev/null 2>&1 & "
             "echo %s > /root/canary.txt && sync",
             canary, canary);
    assert_int_equal(guest_sh(script, NULL, 0), 0);
    /* The guest's environment: every process's. */
    assert_int_equal(guest_sh("cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; true",
                              env_text, 1 << 20),
                     0);
    assert_non_null(strstr(env_text, canary));
    assert_no_secret(env_text);
    free(env_text);

    /* A full snapshot: the whole guest RAM and the disk. */
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&lab.vh, ITEST_METHOD("SuspendSandbox"), lab.sandbox, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    char dir[PATH_MAX], state_file[PATH_MAX + 32];
    sandbox_dir(lab.sandbox, dir, sizeof(dir));
    snprintf(state_file, sizeof(state_file), "%s/suspend/state", dir);
    struct stat ss;
    assert_int_equal(stat(state_file, &ss), 0);
    /* Guest RAM is in it (zero pages take no room): the canary shows it. */
    assert_true(ss.st_size > 16ll << 20);
    assert_true(file_hits(state_file, canary) > 0);
    char disk[PATH_MAX + 32];
    snprintf(disk, sizeof(disk), "%s/disk.ext4", dir);
    assert_true(file_hits(disk, canary) > 0);
    assert_int_equal(tree_hits(dir, lab.secret), 0);
    assert_int_equal(tree_hits(dir, lab.limited_secret), 0);
    assert_int_equal(tree_hits(dir, lab.byok_secret), 0);

    /* Nor in any log: egress's, vault's, the upstream server's output. */
    assert_int_equal(file_hits(path_in("egress.log"), lab.secret), 0);
    assert_int_equal(file_hits(path_in("egress.log"), lab.limited_secret), 0);
    char vault_log[PATH_MAX + 32];
    snprintf(vault_log, sizeof(vault_log), "%s/vault.log", lab.vault.dir);
    assert_int_equal(file_hits(vault_log, lab.secret), 0);
    assert_int_equal(file_hits(vault_log, lab.byok_secret), 0);
    /* The upstream did get it (the control for the searches above). */
    assert_true(file_hits(path_in("upstream.log"), lab.secret) > 0);
}

static void test_delete_forgets_the_ca(void **state)
{
    (void)state;
    char saved[PATH_MAX + 128];
    snprintf(saved, sizeof(saved), "%s/sandbox-ca/%s.pem", path_in("egress-state"), lab.sandbox);
    assert_int_equal(access(saved, F_OK), 0);
    assert_int_equal(itest_delete_sandbox(&lab.vh, lab.sandbox), GRPC_STATUS_OK);
    lab.sandbox_created = false;
    assert_int_equal(access(saved, F_OK), -1);
}

/* ---- setup ---- */

static int group_teardown(void **state)
{
    (void)state;
    int rc = 0;
    if (lab.byok_created && itest_delete_sandbox(&lab.vh, lab.byok_sandbox) != GRPC_STATUS_OK)
        rc = -1;
    if (lab.inspect_created &&
        itest_delete_sandbox(&lab.vh, lab.inspect_sandbox) != GRPC_STATUS_OK)
        rc = -1;
    lab.inspect_created = false;
    if (lab.sandbox_created && itest_delete_sandbox(&lab.vh, lab.sandbox) != GRPC_STATUS_OK)
        rc = -1;
    lab.byok_created = lab.sandbox_created = false;
    /* vmhost first: its shutdown detaches sandboxes from egress. */
    if (lab.vh_started && itest_vmhost_stop(&lab.vh) < 0)
        rc = -1;
    lab.vh_started = false;
    if (lab.egress_pid > 0 && test_stop_pid(&lab.egress_pid, lab.dir, "egress.log", true) < 0)
        rc = -1;
    if (upstream_stop(&lab.upstream) < 0)
        rc = -1;
    if (lab.vault_started)
        vault_fixture_stop(&lab.vault);
    lab.vault_started = false;
    netlab_down();
    if (lab.dir[0] && !getenv("AIRLOCK_TEST_KEEP"))
        fs_remove_tree(lab.dir, NULL, 0);
    lab.dir[0] = '\0';
    return rc;
}

static void cleanup(void)
{
    group_teardown(NULL);
}

static int group_setup(void **state)
{
    snprintf(lab.sandbox, sizeof(lab.sandbox), "credinj-%d", (int)getpid());
    random_secret(lab.secret, sizeof(lab.secret), "sk-main-");
    random_secret(lab.limited_secret, sizeof(lab.limited_secret), "sk-limited-");
    random_secret(lab.byok_secret, sizeof(lab.byok_secret), "sk-byok-");
    int rc = vault_fixture_start(&lab.vault);
    if (rc != 0)
        return rc == 77 ? -1 : rc; /* no PostgreSQL: main() skipped already */
    lab.vault_started = true;
    test_cleanup_install(cleanup);
    if (test_temp_dir(lab.dir, sizeof(lab.dir), "airlock-credinj") < 0 || netlab_uplink_up() < 0 ||
        upstream_start_lab() < 0 || egress_start() < 0)
        goto fail;
    create_secret(PROJECT, "main", lab.secret, BOUND_HOST, 0, false, NULL, lab.placeholder,
                  sizeof(lab.placeholder));
    /* Asked for over plain HTTP (test_rate_limit_answers_429): allowed. */
    create_secret(PROJECT, "limited", lab.limited_secret, LIMITED_HOST, LIMIT_PER_MINUTE, true,
                  NULL, NULL, 0);
    if (register_byok_project() < 0)
        goto fail;
    const char *args[] = { "--egress", lab.egress_addr, NULL };
    if (itest_vmhost_start(&lab.vh, args) < 0)
        goto fail;
    lab.vh_started = true;
    test_cleanup_install(cleanup);
    if (create_sandbox(lab.sandbox, PROJECT) < 0)
        goto fail;
    lab.sandbox_created = true;
    return 0;
fail:
    group_teardown(state);
    return -1;
}

int main(void)
{
    if (!test_have_root("test_credential_injection", "namespaces, QEMU"))
        return TEST_SKIPPED;
    if (access("/usr/bin/python3", X_OK) != 0 || access("/bin/ip", X_OK) != 0 ||
        access("/usr/lib/postgresql", F_OK) != 0) {
        fprintf(stderr, "test_credential_injection needs python3 and PostgreSQL; skipped\n");
        return TEST_SKIPPED;
    }
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guest_trusts_the_sandbox_ca),
        cmocka_unit_test(test_https_request_gets_the_secret),
        cmocka_unit_test(test_ca_survives_update_ca_certificates),
        cmocka_unit_test(test_plain_http_is_refused_for_a_tls_only_secret),
        cmocka_unit_test(test_guest_header_is_replaced),
        cmocka_unit_test(test_placeholder_is_replaced),
        cmocka_unit_test(test_every_request_on_a_connection),
        cmocka_unit_test(test_echoed_secret_is_masked),
        cmocka_unit_test(test_host_switch_is_refused),
        cmocka_unit_test(test_unbound_host_is_spliced),
        cmocka_unit_test(test_upstream_certificate_is_verified),
        cmocka_unit_test(test_upstream_silence_ends_at_idle_timeout),
        cmocka_unit_test(test_rate_limit_answers_429),
        cmocka_unit_test(test_byok_project_locked_and_unlocked),
        cmocka_unit_test(test_inspect_tls_checks_host_inside_tls),
        cmocka_unit_test(test_audit_has_every_injection),
        cmocka_unit_test(test_secret_never_reaches_the_guest),
        cmocka_unit_test(test_delete_forgets_the_ca),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
