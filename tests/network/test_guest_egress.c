/* egress from inside a real guest, part 1: HTTP and addresses. The lab
 * (support/guest_lab.h): a real vmhost --egress, a real airlock-egress
 * process, netlab's test internet, and a sandbox whose policy allows a few
 * names on ports 80 and 443. Every technique runs as a program in the
 * guest and must fail, be logged by egress, and reach no upstream server.
 * docs/security.md lists each one with its result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest_lab.h"
#include "netlab.h"

#define assert_prefix(s, prefix) assert_int_equal(strncmp((s), (prefix), strlen(prefix)), 0)

#define KEEP_ALIVE_ALLOWED "GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: keep-alive\r\n\r\n"
#define KEEP_ALIVE_DENIED "GET / HTTP/1.1\r\nHost: denied.test\r\nConnection: keep-alive\r\n\r\n"
#define LAST_ALLOWED "GET /last HTTP/1.1\r\nHost: allowed.test\r\n\r\n"

/* python3 /tmp/tcpsend.py to host:80 with these segments. */
static void tcpsend_script(const char *host, const char *const *segments, size_t n, char *script,
                           size_t len)
{
    int off = snprintf(script, len, "python3 /tmp/tcpsend.py %s 80 ", host);
    for (size_t i = 0; i < n; i++) {
        if (i)
            script[off++] = ',';
        guest_hex(segments[i], strlen(segments[i]), script + off);
        off += (int)(2 * strlen(segments[i]));
    }
}

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
    uint64_t mark = guest_log_mark();
    unsigned accepted = netlab_tcp_accepted();
    char out[512];
    assert_int_equal(guest_sh(GUEST_CURL "http://allowed.test/", out, sizeof(out)), 0);
    /* netlab's server answers with the address and port it was reached on */
    assert_prefix(out, "HELLO " NETLAB_WEB1 ":80 got=");
    assert_int_equal(netlab_tcp_accepted(), accepted + 1);
    assert_true(guest_logged(mark, "dns", "allowed.test", true, NULL));
    assert_true(guest_logged(mark, "tcp", "allowed.test", true, "allow_domains"));
}

static void test_denied_domain_fails_and_is_logged(void **state)
{
    (void)state;
    uint64_t mark = guest_log_mark();
    unsigned accepted = netlab_tcp_accepted();
    char out[512];
    /* curl exit 6: could not resolve host */
    assert_int_equal(guest_sh(GUEST_CURL "http://denied.test/", out, sizeof(out)), 6);
    assert_int_equal(netlab_tcp_accepted(), accepted);
    assert_true(guest_logged(mark, "dns", "denied.test", false, NULL));
}

static void test_ip_literals_are_refused(void **state)
{
    (void)state;
    /* The same address in every spelling curl (inet_aton) accepts. */
    uint32_t a = ntohl(inet_addr(NETLAB_WEB1));
    char script[256];
    for (int form = 0; form < 4; form++) {
        if (form == 0)
            snprintf(script, sizeof(script), GUEST_CURL "http://" NETLAB_WEB1 "/");
        else if (form == 1)
            snprintf(script, sizeof(script), GUEST_CURL "http://%u/", a);
        else if (form == 2)
            snprintf(script, sizeof(script), GUEST_CURL "http://0%o.0%o.0%o.0%o/", a >> 24,
                     (a >> 16) & 255, (a >> 8) & 255, a & 255);
        else
            snprintf(script, sizeof(script), GUEST_CURL "http://0x%x.0x%x.0x%x.0x%x/", a >> 24,
                     (a >> 16) & 255, (a >> 8) & 255, a & 255);
        expect_tcp_denied(script, NETLAB_WEB1, "name_not_resolved_to_destination");
    }
    /* No Host header at all: nothing names the destination. */
    const char *no_host[] = { "GET / HTTP/1.0\r\n\r\n" };
    tcpsend_script(NETLAB_WEB1, no_host, 1, script, sizeof(script));
    expect_tcp_denied(script, NETLAB_WEB1, "ip_literal");
}

static void test_ipv4_mapped_ipv6_literal_is_refused(void **state)
{
    (void)state;
    /* An AF_INET6 socket to ::ffff:a.b.c.d sends plain IPv4; the Host
     * names an IPv6 literal, which egress never resolves. */
    expect_tcp_denied(GUEST_CURL "-g 'http://[::ffff:" NETLAB_WEB1 "]/'", NETLAB_WEB1,
                      "malformed_first_bytes");
}

static void test_guest_local_addresses_stay_in_the_guest(void **state)
{
    (void)state;
    /* 0.0.0.0 and all of 127/8 are the guest itself: nothing leaves it. */
    const char *urls[] = { "http://0.0.0.0/", "http://127.0.0.2/", "http://127.1/",
                           "http://0177.0.0.1/" };
    for (size_t i = 0; i < sizeof(urls) / sizeof(*urls); i++) {
        char script[128];
        snprintf(script, sizeof(script), GUEST_CURL "%s", urls[i]);
        uint64_t mark = guest_log_mark();
        unsigned accepted = netlab_tcp_accepted();
        /* curl exit 7: connection refused (by the guest's own kernel) */
        assert_int_equal(guest_sh(script, NULL, 0), 7);
        assert_int_equal(netlab_tcp_accepted(), accepted);
        assert_int_equal(guest_log_count(mark, "tcp"), 0);
    }
}

static void test_alternative_port_is_refused(void **state)
{
    (void)state;
    /* The port rule decides before the name is read: logged by address. */
    expect_tcp_denied(GUEST_CURL "http://allowed.test:8080/", NETLAB_WEB1, "port_not_allowed");
}

static void test_internal_addresses_are_refused(void **state)
{
    (void)state;
    const struct {
        const char *url, *ip, *reason;
    } targets[] = {
        { "http://169.254.169.254/latest/meta-data/", "169.254.169.254", "protected_range" },
        /* the gateway: the sandbox namespace itself */
        { "http://100.96.0.1/", "100.96.0.1", "reserved_range" },
        /* every sandbox is 100.96.0.2 in its own namespace; a neighbour's
         * would be in the same shared range */
        { "http://100.96.0.6/", "100.96.0.6", "reserved_range" },
        { "http://" NETLAB_PRIVATE "/", NETLAB_PRIVATE, "reserved_range" },
        /* egress's own address on the uplink side */
        { "http://" NETLAB_UPLINK_ADDR "/", NETLAB_UPLINK_ADDR, "host_address" },
        { "https://" NETLAB_UPLINK_ADDR "/", NETLAB_UPLINK_ADDR, "host_address" },
    };
    char script[256];
    for (size_t i = 0; i < sizeof(targets) / sizeof(*targets); i++) {
        snprintf(script, sizeof(script), GUEST_CURL "-k %s", targets[i].url);
        expect_tcp_denied(script, targets[i].ip, targets[i].reason);
    }
}

static void test_gateway_port_scan_is_refused(void **state)
{
    (void)state;
    /* Every port of the gateway: the policy's port rule first, the shared
     * range for 80 and 443. egress's own TCP listener port is not even
     * redirected: a SYN dialled to it directly is dropped in the namespace
     * (reason NULL here) and the connect times out. */
    const struct {
        unsigned port;
        const char *reason;
    } ports[] = { { 22, "port_not_allowed" },   { 53, "port_not_allowed" },
                  { 80, "reserved_range" },     { 443, "reserved_range" },
                  { 8080, "port_not_allowed" }, { 15053, "port_not_allowed" },
                  { 15001, NULL } };
    for (size_t i = 0; i < sizeof(ports) / sizeof(*ports); i++) {
        char script[256];
        snprintf(script, sizeof(script),
                 "python3 -c 'import socket; s=socket.create_connection((\"100.96.0.1\", %u), "
                 "timeout=%d); s.sendall(b\"GET / HTTP/1.0\\r\\n\\r\\n\"); "
                 "exit(0 if s.recv(100) else 3)'",
                 ports[i].port, ports[i].reason ? 10 : 3);
        if (ports[i].reason) {
            expect_tcp_denied(script, "100.96.0.1", ports[i].reason);
            continue;
        }
        struct sandbox_net_counters before = guest_counters();
        uint64_t mark = guest_log_mark();
        unsigned accepted = netlab_tcp_accepted();
        assert_int_not_equal(guest_sh(script, NULL, 0), 0);
        assert_true(guest_counters().dropped_other > before.dropped_other);
        assert_int_equal(guest_log_count(mark, "tcp"), 0);
        assert_int_equal(netlab_tcp_accepted(), accepted);
    }
}

static void test_proxy_variables_do_not_help(void **state)
{
    (void)state;
    /* The proxy is an allowed name, the request names a denied one. */
    expect_tcp_denied("http_proxy=http://allowed.test:80 " GUEST_CURL "http://denied.test/",
                      "denied.test", "name_not_resolved_to_destination");
    expect_tcp_denied("http_proxy=http://" NETLAB_WEB1 ":80 " GUEST_CURL "http://denied.test/",
                      "denied.test", "name_not_resolved_to_destination");
    /* HTTPS through a proxy is CONNECT. */
    expect_tcp_denied("https_proxy=http://allowed.test:80 " GUEST_CURL "-k https://denied.test/",
                      NETLAB_WEB1, "malformed_first_bytes");
}

static void test_socks_proxy_is_refused(void **state)
{
    (void)state;
    /* A SOCKS5 greeting names nothing: an unnamed connection to an IP. */
    expect_tcp_denied("ALL_PROXY=socks5h://allowed.test:80 " GUEST_CURL "http://denied.test/",
                      NETLAB_WEB1, "ip_literal");
    expect_tcp_denied("ALL_PROXY=socks4a://allowed.test:80 " GUEST_CURL "http://denied.test/",
                      NETLAB_WEB1, "ip_literal");
}

static void test_http_connect_is_refused(void **state)
{
    (void)state;
    expect_tcp_denied(GUEST_CURL "-p -x http://allowed.test:80 http://denied.test/", NETLAB_WEB1,
                      "malformed_first_bytes");
}

static void test_host_mismatch_is_refused(void **state)
{
    (void)state;
    expect_tcp_denied(GUEST_CURL "-H 'Host: denied.test' http://allowed.test/", "denied.test",
                      "name_not_resolved_to_destination");
    /* A forged /etc/hosts entry (curl --resolve is the same thing). */
    expect_tcp_denied(GUEST_CURL "--resolve denied.test:80:" NETLAB_WEB1 " http://denied.test/",
                      "denied.test", "name_not_resolved_to_destination");
}

static void test_absolute_target_naming_another_host_is_refused(void **state)
{
    (void)state;
    /* "GET http://denied.test/ HTTP/1.1" with Host: allowed.test */
    expect_tcp_denied(GUEST_CURL "--request-target http://denied.test/ http://allowed.test/",
                      NETLAB_WEB1, "malformed_first_bytes");
}

static void test_header_tricks_are_refused(void **state)
{
    (void)state;
    const char *tricks[] = {
        /* a bare LF ends a line for some servers: a second Host */
        "GET / HTTP/1.1\r\nHost: allowed.test\r\nX-A: 1\nHost: denied.test\r\n\r\n",
        /* "Host :" is a Host for some servers */
        "GET / HTTP/1.1\r\nHost : denied.test\r\nHost: allowed.test\r\n\r\n",
        /* a folded line continuing the Host */
        "GET / HTTP/1.1\r\nHost: allowed.test\r\n denied.test\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: allowed.test\r\nHost: denied.test\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: allowed.test:80@denied.test\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(tricks) / sizeof(*tricks); i++) {
        char script[1024];
        tcpsend_script("allowed.test", &tricks[i], 1, script, sizeof(script));
        expect_tcp_denied(script, NETLAB_WEB1, "malformed_first_bytes");
    }
}

static void test_keep_alive_host_switch_is_refused(void **state)
{
    (void)state;
    /* The first request is allowed and answered; the second, on the same
     * connection, names a denied host: egress resets the connection and
     * the server never gets a byte of it. */
    const char *requests[] = { KEEP_ALIVE_ALLOWED, KEEP_ALIVE_DENIED };
    char script[1024], out[512];
    tcpsend_script("allowed.test", requests, 2, script, sizeof(script));
    uint64_t mark = guest_log_mark();
    unsigned accepted = netlab_tcp_accepted(), bytes = netlab_tcp_bytes();
    assert_int_equal(guest_sh(script, out, sizeof(out)), 3);
    assert_string_equal(out, "reset\n");
    assert_int_equal(netlab_tcp_accepted(), accepted + 1);
    assert_int_equal(netlab_tcp_bytes(), bytes + strlen(KEEP_ALIVE_ALLOWED));
    uint64_t sent = 0;
    assert_true(guest_log_entry(mark, "tcp", "allowed.test", &sent));
    assert_int_equal(sent, strlen(KEEP_ALIVE_ALLOWED));
    assert_true(guest_logged(mark, "tcp", "allowed.test", true, "allow_domains"));
    assert_true(guest_logged(mark, "tcp", "denied.test", false, "name_not_resolved_to_destination"));
    /* The control: two allowed requests on one connection both go (the
     * second without keep-alive, so the server closes after it). */
    const char *both[] = { KEEP_ALIVE_ALLOWED, LAST_ALLOWED };
    tcpsend_script("allowed.test", both, 2, script, sizeof(script));
    bytes = netlab_tcp_bytes();
    assert_int_equal(guest_sh(script, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
    assert_non_null(strstr(out, "got=" ));
    assert_int_equal(netlab_tcp_bytes(), bytes + strlen(KEEP_ALIVE_ALLOWED) + strlen(LAST_ALLOWED));
}

static void test_pipelined_request_is_refused(void **state)
{
    (void)state;
    /* Both requests in one write: refused before anything is dialled. */
    const char *pipelined[] = { "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"
                                "GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n" };
    char script[1024];
    tcpsend_script("allowed.test", pipelined, 1, script, sizeof(script));
    expect_tcp_denied(script, "denied.test", "name_not_resolved_to_destination");
}

static void test_request_smuggling_is_refused(void **state)
{
    (void)state;
    /* Content-Length and chunked at once: a server taking either length
     * could see the denied request egress would not. */
    const char *smuggled[] = {
        "POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 44\r\n"
        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: denied.test\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked, identity\r\n\r\n"
        "0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(smuggled) / sizeof(*smuggled); i++) {
        char script[1024];
        tcpsend_script("allowed.test", &smuggled[i], 1, script, sizeof(script));
        expect_tcp_denied(script, "allowed.test", "malformed_request");
    }
}

/* A first request whose line the follower cannot parse strictly, then a
 * kept-alive request naming a denied host: egress cannot follow such a
 * connection, so it refuses it before dialling, whatever the line's flaw
 * (a sniffer that names the host and a follower that gives up would pass
 * the second request unchecked). */
static void test_unparsable_request_line_is_refused(void **state)
{
    (void)state;
    const struct {
        const char *first, *what, *reason;
    } cases[] = {
        { "GET / HTTP/1.1 \r\nHost: allowed.test\r\nConnection: keep-alive\r\n\r\n",
          "allowed.test", "malformed_request" }, /* a trailing space */
        { "GET / HTTP/1.7\r\nHost: allowed.test\r\nConnection: keep-alive\r\n\r\n",
          "allowed.test", "malformed_request" }, /* an unknown version */
        { "GET / HTTP/1.10\r\nHost: allowed.test\r\nConnection: keep-alive\r\n\r\n",
          "allowed.test", "malformed_request" },
        { "GET /\xc3\xa9 HTTP/1.1\r\nHost: allowed.test\r\nConnection: keep-alive\r\n\r\n",
          NETLAB_WEB1, "malformed_first_bytes" }, /* a target that is not ASCII */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        const char *requests[] = { cases[i].first, KEEP_ALIVE_DENIED };
        char script[1024];
        tcpsend_script("allowed.test", requests, 2, script, sizeof(script));
        expect_tcp_denied(script, cases[i].what, cases[i].reason);
    }
}

static void test_absolute_target_of_any_scheme_is_refused(void **state)
{
    (void)state;
    /* Some servers take the authority of any absolute target over Host. */
    const char *targets[] = { "https://denied.test/", "HTTPS://denied.test/", "ws://denied.test/",
                              "wss://denied.test/x", "denied.test:80" };
    for (size_t i = 0; i < sizeof(targets) / sizeof(*targets); i++) {
        char request[256], script[1024];
        snprintf(request, sizeof(request), "GET %s HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                 targets[i]);
        const char *segments[] = { request };
        tcpsend_script("allowed.test", segments, 1, script, sizeof(script));
        expect_tcp_denied(script, NETLAB_WEB1, "malformed_first_bytes");
    }
}

static void test_body_on_a_bodiless_method_is_refused(void **state)
{
    (void)state;
    /* An upstream that ignores a GET's body reads the hidden request from
     * where the body starts. */
    const char *requests[] = {
        "GET / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 37\r\n\r\n"
        "GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n",
        "HEAD / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 37\r\n\r\n"
        "GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n",
        "DELETE / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n"
        "0\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 1\r\n\r\nx",
    };
    for (size_t i = 0; i < sizeof(requests) / sizeof(*requests); i++) {
        char script[1024];
        tcpsend_script("allowed.test", &requests[i], 1, script, sizeof(script));
        expect_tcp_denied(script, "allowed.test", "malformed_request");
    }
    /* The control: Content-Length: 0 on a GET frames nothing and goes. */
    const char *empty[] = { "GET / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 0\r\n"
                            "Connection: close\r\n\r\n" };
    char script[1024], out[512];
    tcpsend_script("allowed.test", empty, 1, script, sizeof(script));
    unsigned accepted = netlab_tcp_accepted();
    assert_int_equal(guest_sh(script, out, sizeof(out)), 0);
    assert_int_equal(netlab_tcp_accepted(), accepted + 1);
}

static void test_live_policy_change(void **state)
{
    (void)state;
    char out[512];
    assert_int_equal(guest_sh(GUEST_CURL "http://other.test/", out, sizeof(out)), 6);
    Airlock__Egress__V1__Policy p;
    guest_lab_policy(&p, "other.test");
    assert_int_equal(guest_lab_set_policy(lab.sandbox_id, &p, NULL), GRPC_STATUS_OK);
    assert_int_equal(guest_sh(GUEST_CURL "http://other.test/", out, sizeof(out)), 0);
    assert_prefix(out, "HELLO " NETLAB_WEB2 ":80 got=");
    /* A malformed policy is rejected with the field named. */
    char *bad[] = { "not a cidr" };
    p.n_allow_cidrs = 1;
    p.allow_cidrs = bad;
    char *details = NULL;
    assert_int_equal(guest_lab_set_policy(lab.sandbox_id, &p, &details),
                     GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(details);
    assert_non_null(strstr(details, "allow_cidrs[0]"));
    free(details);
}

/* Last: deleting the sandbox detaches it from egress and removes its
 * namespace. */
/* A kept-alive connection to other.test (allowed), then a wait for
 * /tmp/go, then a second request on it: prints "first 200", then
 * "second answered|closed|reset". */
#define KEPT_ALIVE_PY                                                                              \
    "import os, socket, time\n"                                                                   \
    "s = socket.create_connection(('other.test', 80), timeout=20)\n"                              \
    "s.sendall(b'GET /first HTTP/1.1\\r\\nHost: other.test\\r\\nConnection: keep-alive\\r\\n\\r\\n')\n" \
    "print('first', s.recv(4096).split(b' ')[1].decode(), flush=True)\n"                           \
    "while not os.path.exists('/tmp/go'):\n"                                                      \
    "    time.sleep(0.05)\n"                                                                     \
    "try:\n"                                                                                     \
    "    s.sendall(b'GET /second HTTP/1.1\\r\\nHost: other.test\\r\\n\\r\\n')\n"              \
    "    print('second', 'answered' if s.recv(4096) else 'closed', flush=True)\n"                  \
    "except OSError:\n"                                                                          \
    "    print('second reset', flush=True)\n"

static void test_policy_change_closes_denied_connections(void **state)
{
    (void)state;
    Airlock__Egress__V1__Policy p;
    guest_lab_policy(&p, "other.test");
    assert_int_equal(guest_lab_set_policy(lab.sandbox_id, &p, NULL), GRPC_STATUS_OK);
    char out[512];
    uint64_t mark = guest_log_mark();
    assert_int_equal(guest_sh("rm -f /tmp/go /tmp/ka.out && cat > /tmp/ka.py <<'EOF'\n" KEPT_ALIVE_PY
                              "EOF\n"
                              "setsid python3 /tmp/ka.py >/tmp/ka.out 2>&1 </dev/null &\n"
                              "for i in $(seq 200); do grep -q first /tmp/ka.out && break; "
                              "sleep 0.1; done; cat /tmp/ka.out",
                              out, sizeof(out)),
                     0);
    assert_string_equal(out, "first 200\n");
    unsigned bytes = netlab_tcp_bytes();
    /* other.test is denied from now on: the open connection ends too. */
    guest_lab_policy(&p, NULL);
    assert_int_equal(guest_lab_set_policy(lab.sandbox_id, &p, NULL), GRPC_STATUS_OK);
    assert_int_equal(guest_sh("touch /tmp/go; for i in $(seq 200); do grep -q second /tmp/ka.out "
                              "&& break; sleep 0.1; done; tail -n 1 /tmp/ka.out",
                              out, sizeof(out)),
                     0);
    if (strcmp(out, "second closed\n") != 0)
        assert_string_equal(out, "second reset\n");
    assert_int_equal(netlab_tcp_bytes(), bytes);
    /* Its log entry says why it ended. */
    assert_true(guest_logged(mark, "tcp", "other.test", true, "policy_changed"));
}

static void test_delete_removes_the_network(void **state)
{
    (void)state;
    char ns[256];
    assert_int_equal(sandbox_net_netns_path(lab.sandbox_id, ns, sizeof(ns)), 0);
    assert_int_equal(access(ns, F_OK), 0);
    assert_int_equal(itest_delete_sandbox(&lab.vh, lab.sandbox_id), GRPC_STATUS_OK);
    lab.sandbox_created = false;
    assert_int_equal(access(ns, F_OK), -1);
    Airlock__Egress__V1__ListConnectionsRequest req =
        AIRLOCK__EGRESS__V1__LIST_CONNECTIONS_REQUEST__INIT;
    req.sandbox_id = lab.sandbox_id;
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(lab.egress, "/airlock.egress.v1.Egress/ListConnections", &req.base,
                               &airlock__egress__v1__list_connections_response__descriptor, &resp,
                               NULL, GUEST_LAB_CALL_TIMEOUT_MS),
                     GRPC_STATUS_NOT_FOUND);
    assert_null(resp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guest_nic_is_configured),
        cmocka_unit_test(test_allowed_domain_is_reachable),
        cmocka_unit_test(test_denied_domain_fails_and_is_logged),
        cmocka_unit_test(test_ip_literals_are_refused),
        cmocka_unit_test(test_ipv4_mapped_ipv6_literal_is_refused),
        cmocka_unit_test(test_guest_local_addresses_stay_in_the_guest),
        cmocka_unit_test(test_alternative_port_is_refused),
        cmocka_unit_test(test_internal_addresses_are_refused),
        cmocka_unit_test(test_gateway_port_scan_is_refused),
        cmocka_unit_test(test_proxy_variables_do_not_help),
        cmocka_unit_test(test_socks_proxy_is_refused),
        cmocka_unit_test(test_http_connect_is_refused),
        cmocka_unit_test(test_host_mismatch_is_refused),
        cmocka_unit_test(test_absolute_target_naming_another_host_is_refused),
        cmocka_unit_test(test_header_tricks_are_refused),
        cmocka_unit_test(test_keep_alive_host_switch_is_refused),
        cmocka_unit_test(test_pipelined_request_is_refused),
        cmocka_unit_test(test_unparsable_request_line_is_refused),
        cmocka_unit_test(test_absolute_target_of_any_scheme_is_refused),
        cmocka_unit_test(test_body_on_a_bodiless_method_is_refused),
        cmocka_unit_test(test_request_smuggling_is_refused),
        cmocka_unit_test(test_live_policy_change),
        cmocka_unit_test(test_policy_change_closes_denied_connections),
        cmocka_unit_test(test_delete_removes_the_network),
    };
    return GUEST_LAB_RUN(tests);
}
