/* egress from inside a real guest: a real airlock-vmhost (with --egress)
 * runs a sandbox microVM whose virtio-net NIC sits on the TAP of vmhost's
 * sandbox namespace; a real airlock-egress process serves that namespace
 * and dials out of netlab's uplink namespace, whose only neighbours are
 * this test's servers (support/netlab.h). Every technique below runs as a
 * program in the guest (curl, getent, python3) and must fail, be logged by
 * egress, and never reach an upstream server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "egress.pb-c.h"
#include "fsutil.h"
#include "itest.h"
#include "netlab.h"
#include "netns.h"
#include "rpc_client.h"
#include "sandbox_net.h"

/* Unique per run: a namespace left by a crashed run, or another run on the
 * same machine, must not collide with this one. Set in group setup. */
static char sandbox_id[32];
#define SANDBOX_ID sandbox_id
#define EGRESS_METHOD(name) "/airlock.egress.v1.Egress/" name
#define CALL_TIMEOUT_MS 10000
#define EGRESS_START_TIMEOUT_MS 10000
/* curl's own bound: a denial is a reset or NXDOMAIN within milliseconds, so
 * this only keeps a wrong "allow" from hanging the test. */
#define CURL "curl -sS --http0.9 --max-time 20 "

#define assert_prefix(s, prefix) assert_int_equal(strncmp((s), (prefix), strlen(prefix)), 0)

static struct {
    struct itest_vmhost vh;
    bool vh_started;
    pid_t egress_pid;
    char dir[64];          /* egress socket and log */
    char egress_addr[128];
    struct rpc_channel *egress;
    bool sandbox_created;
} lab;

/* ---- egress: a process of its own ---- */

static int egress_start(void)
{
    snprintf(lab.dir, sizeof(lab.dir), "/tmp/airlock-guest-egress-XXXXXX");
    if (!mkdtemp(lab.dir))
        return -1;
    snprintf(lab.egress_addr, sizeof(lab.egress_addr), "unix:%s/egress.sock", lab.dir);
    char log_path[128], sock[128];
    snprintf(log_path, sizeof(log_path), "%s/egress.log", lab.dir);
    snprintf(sock, sizeof(sock), "%s/egress.sock", lab.dir);
    const char *argv[] = { AIRLOCK_EGRESS_BIN, "--listen", lab.egress_addr, "--upstream-dns",
                           NETLAB_DNS, "--uplink-netns", netlab_ns_path(NETLAB_UPLINK_NS), NULL };
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    lab.egress_pid = pid;
    lab.egress = rpc_channel_open(lab.egress_addr, NULL);
    int64_t deadline = clock_monotonic_ms() + EGRESS_START_TIMEOUT_MS;
    while (access(sock, F_OK) < 0 && clock_monotonic_ms() < deadline)
        usleep(20 * 1000);
    if (!lab.egress || rpc_channel_wait_ready(lab.egress, EGRESS_START_TIMEOUT_MS) < 0) {
        fprintf(stderr, "airlock-egress did not start; see %s\n", log_path);
        return -1;
    }
    return 0;
}

/* Returns -1 unless egress exits 0 on SIGTERM. */
static int egress_stop(void)
{
    if (lab.egress) {
        rpc_channel_close(lab.egress);
        lab.egress = NULL;
    }
    if (lab.egress_pid > 0) {
        int status = 0;
        kill(lab.egress_pid, SIGTERM);
        waitpid(lab.egress_pid, &status, 0);
        lab.egress_pid = 0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "airlock-egress did not stop cleanly (wait status %d); log in %s\n",
                    status, lab.dir);
            return -1;
        }
    }
    if (lab.dir[0]) {
        char err[256];
        fs_remove_tree(lab.dir, err, sizeof(err));
        lab.dir[0] = '\0';
    }
    return 0;
}

/* ---- the connection log ---- */

static Airlock__Egress__V1__ListConnectionsResponse *connections(uint64_t after_seq,
                                                                 grpc_status_code *st)
{
    Airlock__Egress__V1__ListConnectionsRequest req =
        AIRLOCK__EGRESS__V1__LIST_CONNECTIONS_REQUEST__INIT;
    req.sandbox_id = SANDBOX_ID;
    req.after_seq = after_seq;
    ProtobufCMessage *resp = NULL;
    *st = rpc_unary(lab.egress, EGRESS_METHOD("ListConnections"), &req.base,
                    &airlock__egress__v1__list_connections_response__descriptor, &resp, NULL,
                    CALL_TIMEOUT_MS);
    return (Airlock__Egress__V1__ListConnectionsResponse *)resp;
}

static uint64_t log_mark(void)
{
    grpc_status_code st;
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(0, &st);
    assert_int_equal(st, GRPC_STATUS_OK);
    uint64_t seq = r->n_connections ? r->connections[r->n_connections - 1]->seq : 0;
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return seq;
}

/* True when egress logged, after mark, a `protocol` entry with that
 * decision and reason (NULL: any) whose name or address is `what`. */
static bool logged(uint64_t mark, const char *protocol, const char *what, bool allowed,
                   const char *reason)
{
    grpc_status_code st;
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(mark, &st);
    assert_int_equal(st, GRPC_STATUS_OK);
    bool found = false;
    for (size_t i = 0; i < r->n_connections && !found; i++) {
        Airlock__Egress__V1__Connection *c = r->connections[i];
        found = strcmp(c->protocol, protocol) == 0 &&
                (strcmp(c->name, what) == 0 || strcmp(c->dest_ip, what) == 0) &&
                c->decision == (allowed ? AIRLOCK__EGRESS__V1__DECISION__DECISION_ALLOW
                                        : AIRLOCK__EGRESS__V1__DECISION__DECISION_DENY) &&
                (!reason || strcmp(c->reason, reason) == 0);
    }
    if (!found) {
        fprintf(stderr, "no %s entry for %s (%s, %s) after seq %llu; the log has:\n", protocol,
                what, allowed ? "allow" : "deny", reason ? reason : "any reason",
                (unsigned long long)mark);
        for (size_t i = 0; i < r->n_connections; i++)
            fprintf(stderr, "  %s %s:%u name=%s decision=%d reason=%s\n",
                    r->connections[i]->protocol, r->connections[i]->dest_ip,
                    r->connections[i]->dest_port, r->connections[i]->name,
                    r->connections[i]->decision, r->connections[i]->reason);
    }
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return found;
}

/* ---- the guest ---- */

/* Runs script with sh -c in the guest; returns its exit code and, when out
 * is not NULL, its stdout. */
static int guest_sh(const char *script, char *out, size_t outlen)
{
    struct itest_exec_result r;
    itest_sh(&lab.vh, SANDBOX_ID, script, &r);
    if (r.status != GRPC_STATUS_OK)
        fprintf(stderr, "exec %s: %s\n", script, r.details ? r.details : "");
    assert_int_equal(r.status, GRPC_STATUS_OK);
    assert_true(r.exited);
    if (out)
        snprintf(out, outlen, "%s", r.out ? (char *)r.out : "");
    int code = r.exit_code;
    itest_exec_result_free(&r);
    return code;
}

/* A connection the guest must not get: the command fails, egress logged
 * the denial (tcp, what, reason) and no upstream server saw a connection. */
static void expect_tcp_denied(const char *script, const char *what, const char *reason)
{
    uint64_t mark = log_mark();
    unsigned accepted = netlab_tcp_accepted();
    char out[512];
    int code = guest_sh(script, out, sizeof(out));
    if (code == 0)
        fprintf(stderr, "%s succeeded: %s\n", script, out);
    assert_int_not_equal(code, 0);
    assert_int_equal(netlab_tcp_accepted(), accepted);
    assert_true(logged(mark, "tcp", what, false, reason));
}

static struct sandbox_net_counters counters(void)
{
    struct sandbox_net_counters c;
    char err[512];
    if (sandbox_net_counters(SANDBOX_ID, &c, err, sizeof(err)) < 0)
        fprintf(stderr, "counters: %s\n", err);
    return c;
}

/* A DNS client that can ask any server, over UDP or TCP: prints
 * "rcode=N answers=M", or "no answer" / "reset". */
static const char dns_client_py[] =
    "import socket, struct, sys\n"
    "name, server, proto = sys.argv[1], sys.argv[2], sys.argv[3]\n"
    "q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0)\n"
    "q += b''.join(bytes([len(p)]) + p.encode() for p in name.split('.')) + b'\\0'\n"
    "q += struct.pack('>HH', 1, 1)\n"
    "try:\n"
    "    if proto == 'udp':\n"
    "        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "        s.settimeout(10)\n"
    "        s.sendto(q, (server, 53))\n"
    "        r = s.recv(512)\n"
    "    else:\n"
    "        s = socket.create_connection((server, 53), timeout=10)\n"
    "        s.sendall(struct.pack('>H', len(q)) + q)\n"
    "        r = s.recv(514)[2:]\n"
    "        if not r:\n"
    "            print('reset'); sys.exit(3)\n"
    "except ConnectionResetError:\n"
    "    print('reset'); sys.exit(3)\n"
    "except socket.timeout:\n"
    "    print('no answer'); sys.exit(4)\n"
    "print('rcode=%d answers=%d' % (r[3] & 15, struct.unpack('>H', r[6:8])[0]))\n"
    "sys.exit(0 if r[3] & 15 == 0 else 1)\n";

/* The sandbox's policy: these domains, port 80 only, deny the rest. */
static void policy_web_only(Airlock__Egress__V1__Policy *p, char **domains, size_t n)
{
    static uint32_t port_80[] = { 80 };
    *p = (Airlock__Egress__V1__Policy)AIRLOCK__EGRESS__V1__POLICY__INIT;
    p->n_allow_domains = n;
    p->allow_domains = domains;
    p->n_allow_ports = 1;
    p->allow_ports = port_80;
}

/* ---- tests ---- */

static void test_guest_nic_is_configured(void **state)
{
    (void)state;
    char out[2048];
    assert_int_equal(guest_sh("ip -4 -o addr show dev eth0", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "inet 100.96.0.2/30"));
    assert_int_equal(guest_sh("ip route show default", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "default via 100.96.0.1 dev eth0"));
    assert_int_equal(guest_sh("cat /etc/resolv.conf", out, sizeof(out)), 0);
    assert_string_equal(out, "nameserver 100.96.0.1\n");
    assert_int_equal(guest_sh("ip -o link show lo", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "UP"));
}

static void test_allowed_domain_is_reachable(void **state)
{
    (void)state;
    uint64_t mark = log_mark();
    unsigned accepted = netlab_tcp_accepted();
    char out[512];
    assert_int_equal(guest_sh(CURL "http://allowed.test/", out, sizeof(out)), 0);
    /* netlab's server answers with the address and port it was reached on */
    assert_prefix(out, "HELLO " NETLAB_WEB1 ":80 got=");
    assert_int_equal(netlab_tcp_accepted(), accepted + 1);
    assert_true(logged(mark, "dns", "allowed.test", true, NULL));
    assert_true(logged(mark, "tcp", "allowed.test", true, "allow_domains"));
}

static void test_denied_domain_fails_and_is_logged(void **state)
{
    (void)state;
    uint64_t mark = log_mark();
    unsigned accepted = netlab_tcp_accepted();
    char out[512];
    /* curl exit 6: could not resolve host */
    assert_int_equal(guest_sh(CURL "http://denied.test/", out, sizeof(out)), 6);
    assert_int_equal(netlab_tcp_accepted(), accepted);
    assert_true(logged(mark, "dns", "denied.test", false, NULL));
}

static void test_denied_name_is_nxdomain(void **state)
{
    (void)state;
    /* getent: 2 = not found */
    assert_int_equal(guest_sh("getent hosts denied.test", NULL, 0), 2);
    assert_int_equal(guest_sh("getent hosts allowed.test", NULL, 0), 0);
    char out[256];
    assert_int_equal(guest_sh("python3 /tmp/dnsq.py denied.test 100.96.0.1 udp", out,
                              sizeof(out)), 1);
    assert_string_equal(out, "rcode=3 answers=0\n");
}

static void test_ip_literals_are_refused(void **state)
{
    (void)state;
    /* The same address in every spelling curl (inet_aton) accepts. */
    uint32_t a = ntohl(inet_addr(NETLAB_WEB1));
    char script[256];
    const char *forms[] = { "http://" NETLAB_WEB1 "/", "decimal", "octal", "hex" };
    for (size_t i = 0; i < sizeof(forms) / sizeof(*forms); i++) {
        if (i == 0)
            snprintf(script, sizeof(script), CURL "%s", forms[0]);
        else if (i == 1)
            snprintf(script, sizeof(script), CURL "http://%u/", a);
        else if (i == 2)
            snprintf(script, sizeof(script), CURL "http://0%o.0%o.0%o.0%o/", a >> 24,
                     (a >> 16) & 255, (a >> 8) & 255, a & 255);
        else
            snprintf(script, sizeof(script), CURL "http://0x%x.0x%x.0x%x.0x%x/", a >> 24,
                     (a >> 16) & 255, (a >> 8) & 255, a & 255);
        expect_tcp_denied(script, NETLAB_WEB1, "name_not_resolved_to_destination");
    }
    /* No Host header at all: nothing names the destination. */
    expect_tcp_denied("printf 'GET / HTTP/1.0\\r\\n\\r\\n' | python3 -c 'import socket,sys; "
                      "s=socket.create_connection((\"" NETLAB_WEB1 "\", 80), timeout=10); "
                      "s.sendall(sys.stdin.buffer.read()); d=s.recv(100); "
                      "sys.exit(0 if d else 3)'",
                      NETLAB_WEB1, "ip_literal");
}

static void test_alternative_port_is_refused(void **state)
{
    (void)state;
    /* The port rule decides before the name is read: logged by address. */
    expect_tcp_denied(CURL "http://allowed.test:8080/", NETLAB_WEB1, "port_not_allowed");
}

static void test_other_dns_servers_get_egress_answers(void **state)
{
    (void)state;
    char out[256];
    /* Any resolver address is egress's DNS: same policy, same answers. */
    uint64_t mark = log_mark();
    assert_int_equal(guest_sh("python3 /tmp/dnsq.py denied.test " NETLAB_DNS " udp", out,
                              sizeof(out)), 1);
    assert_string_equal(out, "rcode=3 answers=0\n");
    assert_int_equal(guest_sh("python3 /tmp/dnsq.py denied.test 192.0.2.99 udp", out,
                              sizeof(out)), 1);
    assert_string_equal(out, "rcode=3 answers=0\n");
    assert_true(logged(mark, "dns", "denied.test", false, NULL));
    assert_int_equal(guest_sh("python3 /tmp/dnsq.py allowed.test 192.0.2.99 udp", out,
                              sizeof(out)), 0);
    assert_string_equal(out, "rcode=0 answers=1\n");
}

static void test_dns_over_tcp_is_refused(void **state)
{
    (void)state;
    /* TCP/53 is redirected to egress's TCP listener like any other port;
     * this policy allows only port 80, so the port rule refuses it first
     * (without port rules it is an IP literal: test_egress). */
    expect_tcp_denied("python3 /tmp/dnsq.py denied.test " NETLAB_DNS " tcp", NETLAB_DNS,
                      "port_not_allowed");
}

static void test_udp_and_icmp_are_dropped(void **state)
{
    (void)state;
    struct sandbox_net_counters before = counters();
    unsigned udp = netlab_udp_received();
    assert_int_equal(guest_sh("python3 -c 'import socket; s=socket.socket(socket.AF_INET, "
                              "socket.SOCK_DGRAM); s.sendto(b\"x\", (\"" NETLAB_WEB1 "\", 9999))'",
                              NULL, 0), 0);
    /* An ICMP echo request (type 8, id 1, seq 0, checksum 0xf7fe). */
    assert_int_equal(guest_sh("python3 -c 'import socket; s=socket.socket(socket.AF_INET, "
                              "socket.SOCK_RAW, socket.IPPROTO_ICMP); "
                              "s.sendto(bytes.fromhex(\"0800f7fe00010000\"), (\"" NETLAB_WEB1
                              "\", 0))'",
                              NULL, 0), 0);
    struct sandbox_net_counters after = counters();
    assert_true(after.dropped_udp > before.dropped_udp);
    assert_true(after.dropped_icmp > before.dropped_icmp);
    assert_int_equal(netlab_udp_received(), udp);
}

static void test_ipv6_is_dropped(void **state)
{
    (void)state;
    struct sandbox_net_counters before = counters();
    /* The gateway's link-local address (EUI-64 of its fixed MAC). */
    assert_int_not_equal(guest_sh(CURL "--max-time 5 -g 'http://[fe80::a1:ff:fe00:1%25eth0]/'",
                                  NULL, 0),
                         0);
    assert_true(counters().dropped_ipv6 > before.dropped_ipv6);
}

static void test_proxy_variables_do_not_help(void **state)
{
    (void)state;
    /* The proxy is an allowed name, the request names a denied one. */
    expect_tcp_denied("http_proxy=http://allowed.test:80 " CURL "http://denied.test/",
                      "denied.test", "name_not_resolved_to_destination");
    expect_tcp_denied("http_proxy=http://" NETLAB_WEB1 ":80 " CURL "http://denied.test/",
                      "denied.test", "name_not_resolved_to_destination");
}

static void test_http_connect_is_refused(void **state)
{
    (void)state;
    expect_tcp_denied(CURL "-p -x http://allowed.test:80 http://denied.test/", NETLAB_WEB1,
                      "malformed_first_bytes");
}

static void test_host_mismatch_is_refused(void **state)
{
    (void)state;
    expect_tcp_denied(CURL "-H 'Host: denied.test' http://allowed.test/", "denied.test",
                      "name_not_resolved_to_destination");
    /* A forged /etc/hosts entry (curl --resolve is the same thing). */
    expect_tcp_denied(CURL "--resolve denied.test:80:" NETLAB_WEB1 " http://denied.test/",
                      "denied.test", "name_not_resolved_to_destination");
}

static void test_internal_addresses_are_refused(void **state)
{
    (void)state;
    const struct {
        const char *url, *ip, *reason;
    } targets[] = {
        { "http://169.254.169.254/latest/meta-data/", "169.254.169.254", "reserved_range" },
        /* the gateway: the sandbox namespace itself */
        { "http://100.96.0.1/", "100.96.0.1", "reserved_range" },
        /* every sandbox is 100.96.0.2 in its own namespace; a neighbour's
         * would be in the same shared range */
        { "http://100.96.0.6/", "100.96.0.6", "reserved_range" },
        { "http://" NETLAB_PRIVATE "/", NETLAB_PRIVATE, "reserved_range" },
        /* egress's own address on the uplink side */
        { "http://" NETLAB_UPLINK_ADDR "/", NETLAB_UPLINK_ADDR, "host_address" },
    };
    char script[256];
    for (size_t i = 0; i < sizeof(targets) / sizeof(*targets); i++) {
        snprintf(script, sizeof(script), CURL "%s", targets[i].url);
        expect_tcp_denied(script, targets[i].ip, targets[i].reason);
    }
}

static void test_live_policy_change(void **state)
{
    (void)state;
    char out[512];
    assert_int_equal(guest_sh(CURL "http://other.test/", out, sizeof(out)), 6);
    char *allow[] = { "allowed.test", "other.test" };
    Airlock__Egress__V1__Policy p;
    policy_web_only(&p, allow, 2);
    Airlock__Vmhost__V1__SetSandboxPolicyRequest req =
        AIRLOCK__VMHOST__V1__SET_SANDBOX_POLICY_REQUEST__INIT;
    req.id = SANDBOX_ID;
    req.policy = &p;
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(lab.vh.ch, ITEST_METHOD("SetSandboxPolicy"), &req.base,
                               &airlock__vmhost__v1__empty__descriptor, &resp, NULL,
                               CALL_TIMEOUT_MS),
                     GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(resp, NULL);
    assert_int_equal(guest_sh(CURL "http://other.test/", out, sizeof(out)), 0);
    assert_prefix(out, "HELLO " NETLAB_WEB2 ":80 got=");
    /* A malformed policy is rejected with the field named. */
    char *bad[] = { "not a cidr" };
    p.n_allow_cidrs = 1;
    p.allow_cidrs = bad;
    char *details = NULL;
    resp = NULL;
    assert_int_equal(rpc_unary(lab.vh.ch, ITEST_METHOD("SetSandboxPolicy"), &req.base,
                               &airlock__vmhost__v1__empty__descriptor, &resp, &details,
                               CALL_TIMEOUT_MS),
                     GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(details);
    assert_non_null(strstr(details, "allow_cidrs[0]"));
    free(details);
}

/* Last: deleting the sandbox detaches it from egress and removes its
 * namespace. */
static void test_delete_removes_the_network(void **state)
{
    (void)state;
    char ns[256];
    assert_int_equal(sandbox_net_netns_path(SANDBOX_ID, ns, sizeof(ns)), 0);
    assert_int_equal(access(ns, F_OK), 0);
    assert_int_equal(itest_delete_sandbox(&lab.vh, SANDBOX_ID), GRPC_STATUS_OK);
    lab.sandbox_created = false;
    assert_int_equal(access(ns, F_OK), -1);
    grpc_status_code st;
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(0, &st);
    assert_null(r);
    assert_int_equal(st, GRPC_STATUS_NOT_FOUND);
}

/* ---- setup ---- */

static int create_sandbox(void)
{
    char *allow[] = { "allowed.test" };
    Airlock__Egress__V1__Policy p;
    policy_web_only(&p, allow, 1);
    Airlock__Vmhost__V1__CreateSandboxRequest req =
        AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = SANDBOX_ID;
    req.policy = &p;
    grpc_status_code st;
    char *details = NULL;
    char *id = itest_create_sandbox_with(&lab.vh, &req, &st, &details);
    if (!id) {
        fprintf(stderr, "CreateSandbox: %s\n", details ? details : "");
        itest_vmhost_print_log_tail(&lab.vh);
    }
    free(details);
    lab.sandbox_created = id != NULL;
    free(id);
    if (!lab.sandbox_created)
        return -1;
    char *err = NULL;
    st = itest_write_file(&lab.vh, SANDBOX_ID, (const uint8_t *)"/tmp/dnsq.py", 12,
                          (const uint8_t *)dns_client_py, strlen(dns_client_py), &err);
    free(err);
    return st == GRPC_STATUS_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    int rc = 0;
    if (lab.sandbox_created && itest_delete_sandbox(&lab.vh, SANDBOX_ID) != GRPC_STATUS_OK)
        rc = -1;
    lab.sandbox_created = false;
    /* vmhost first: its shutdown detaches sandboxes from egress. */
    if (lab.vh_started && itest_vmhost_stop(&lab.vh) < 0)
        rc = -1;
    lab.vh_started = false;
    if (egress_stop() < 0)
        rc = -1;
    netlab_down();
    return rc;
}

static void cleanup_at_exit(void)
{
    group_teardown(NULL);
}

static int group_setup(void **state)
{
    snprintf(sandbox_id, sizeof(sandbox_id), "guestnet-%d", (int)getpid());
    atexit(cleanup_at_exit);
    if (netlab_uplink_up() < 0 || egress_start() < 0)
        goto fail;
    const char *args[] = { "--egress", lab.egress_addr, NULL };
    if (itest_vmhost_start(&lab.vh, args) < 0)
        goto fail;
    lab.vh_started = true;
    if (create_sandbox() < 0)
        goto fail;
    return 0;
fail:
    group_teardown(state);
    return -1;
}

int main(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "test_guest_egress needs root (namespaces, QEMU); skipped\n");
        return 77;
    }
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guest_nic_is_configured),
        cmocka_unit_test(test_allowed_domain_is_reachable),
        cmocka_unit_test(test_denied_domain_fails_and_is_logged),
        cmocka_unit_test(test_denied_name_is_nxdomain),
        cmocka_unit_test(test_ip_literals_are_refused),
        cmocka_unit_test(test_alternative_port_is_refused),
        cmocka_unit_test(test_other_dns_servers_get_egress_answers),
        cmocka_unit_test(test_dns_over_tcp_is_refused),
        cmocka_unit_test(test_udp_and_icmp_are_dropped),
        cmocka_unit_test(test_ipv6_is_dropped),
        cmocka_unit_test(test_proxy_variables_do_not_help),
        cmocka_unit_test(test_http_connect_is_refused),
        cmocka_unit_test(test_host_mismatch_is_refused),
        cmocka_unit_test(test_internal_addresses_are_refused),
        cmocka_unit_test(test_live_policy_change),
        cmocka_unit_test(test_delete_removes_the_network),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
