/* egress end to end: a guest namespace behind a sandbox namespace built by
 * vmhost's sandbox_net, egress attached to it over gRPC, dialling out of an
 * uplink namespace whose only neighbours are this test's servers (see
 * support/netlab.h). Every address used lives inside those namespaces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns_wire.h"
#include "egress.h"
#include "egress.pb-c.h"
#include "log.h"
#include "netlab.h"
#include "rpc_client.h"
#include "sandbox_net.h"
#include "egress_service.h"
#include "test_proc.h"

#define CALL_TIMEOUT_MS 10000
#define MAX_RULES 8
/* What the lab's egress protects (egress_config.protected_cidrs): no host
 * lives there; egress refuses before it would dial. */
#define PROTECTED_RANGE "10.9.8.0/24"
#define PROTECTED_ADDR "10.9.8.1"
/* Short, for silent_connection_ends_at_idle_timeout; no other case leaves
 * a connection silent so long. */
#define IDLE_TIMEOUT_MS 2000
#define SILENT_PORT 8183

static struct {
    struct egress *eg;
    struct rpc_server *srv;
    struct rpc_channel *ch;
    char sock[128];
} lab;

#define assert_prefix(s, prefix) assert_int_equal(strncmp((s), (prefix), strlen(prefix)), 0)

static uint32_t ip(const char *s)
{
    struct in_addr in;
    inet_pton(AF_INET, s, &in);
    return ntohl(in.s_addr);
}

/* ---- policy over gRPC ---- */

struct policy_spec {
    bool default_allow;
    const char *allow_domains[MAX_RULES];
    const char *deny_domains[MAX_RULES];
    const char *allow_cidrs[MAX_RULES];
    const char *deny_cidrs[MAX_RULES];
    uint32_t allow_ports[MAX_RULES];
    uint32_t deny_ports[MAX_RULES];
    bool inspect_tls;
};

static size_t count_strs(const char *const *v)
{
    size_t n = 0;
    while (n < MAX_RULES && v[n])
        n++;
    return n;
}

static size_t count_ports(const uint32_t *v)
{
    size_t n = 0;
    while (n < MAX_RULES && v[n])
        n++;
    return n;
}

static void policy_fill(Airlock__Egress__V1__Policy *p, const struct policy_spec *s)
{
    p->default_action = s->default_allow ? AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_ALLOW
                                         : AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_DENY;
    p->n_allow_domains = count_strs(s->allow_domains);
    p->allow_domains = (char **)s->allow_domains;
    p->n_deny_domains = count_strs(s->deny_domains);
    p->deny_domains = (char **)s->deny_domains;
    p->n_allow_cidrs = count_strs(s->allow_cidrs);
    p->allow_cidrs = (char **)s->allow_cidrs;
    p->n_deny_cidrs = count_strs(s->deny_cidrs);
    p->deny_cidrs = (char **)s->deny_cidrs;
    p->n_allow_ports = count_ports(s->allow_ports);
    p->allow_ports = (uint32_t *)s->allow_ports;
    p->n_deny_ports = count_ports(s->deny_ports);
    p->deny_ports = (uint32_t *)s->deny_ports;
    p->inspect_tls = s->inspect_tls;
}

static grpc_status_code set_policy(const struct policy_spec *s, char **details)
{
    Airlock__Egress__V1__Policy p = AIRLOCK__EGRESS__V1__POLICY__INIT;
    policy_fill(&p, s);
    Airlock__Egress__V1__SetPolicyRequest req = AIRLOCK__EGRESS__V1__SET_POLICY_REQUEST__INIT;
    req.sandbox_id = NETLAB_SANDBOX_ID;
    req.policy = &p;
    ProtobufCMessage *resp = NULL;
    grpc_status_code st = rpc_unary(lab.ch, EGRESS_METHOD("SetPolicy"), &req.base,
                                    &airlock__egress__v1__set_policy_response__descriptor, &resp,
                                    details, CALL_TIMEOUT_MS);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st;
}

static void must_set_policy(const struct policy_spec *s)
{
    char *details = NULL;
    grpc_status_code st = set_policy(s, &details);
    if (st != GRPC_STATUS_OK)
        fprintf(stderr, "SetPolicy: %s\n", details ? details : "");
    free(details);
    assert_int_equal(st, GRPC_STATUS_OK);
}

static const struct policy_spec base_policy = {
    .allow_domains = { "allowed.test", "*.wild.test", "rebind.test", "uplink.test", "loop.test",
                       "metadata.test" },
};

/* The newest log entries (after after_seq). Caller frees. */
static Airlock__Egress__V1__ListConnectionsResponse *connections(uint64_t after_seq)
{
    return netlab_connections(lab.ch, NETLAB_SANDBOX_ID, after_seq);
}

static uint64_t last_seq(void)
{
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(0);
    uint64_t seq = r->n_connections ? r->connections[r->n_connections - 1]->seq : 0;
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return seq;
}

/* The log entry egress wrote for the last TCP connection after seq. */
static void expect_last_tcp(uint64_t after_seq, bool allowed, const char *reason)
{
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(after_seq);
    Airlock__Egress__V1__Connection *last = NULL;
    for (size_t i = 0; i < r->n_connections; i++)
        if (strcmp(r->connections[i]->protocol, "tcp") == 0)
            last = r->connections[i];
    assert_non_null(last);
    assert_int_equal(last->decision, allowed ? AIRLOCK__EGRESS__V1__DECISION__DECISION_ALLOW
                                             : AIRLOCK__EGRESS__V1__DECISION__DECISION_DENY);
    assert_string_equal(last->reason, reason);
    protobuf_c_message_free_unpacked(&r->base, NULL);
}

/* ---- guest actions ---- */

static int resolve(const char *name, uint32_t *addr)
{
    uint32_t addrs[8];
    size_t n;
    int rcode = guest_dns_query(NETLAB_GUEST_GW, name, DNS_TYPE_A, addrs, 8, &n);
    *addr = n ? addrs[0] : 0;
    return rcode;
}

static enum guest_tcp_result http_get(const char *dst, uint16_t port, const char *host,
                                      char *reply, size_t replylen)
{
    char req[512];
    int len = host ? snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host)
                   : snprintf(req, sizeof(req), "GET / HTTP/1.0\r\n\r\n");
    return guest_tcp_exchange(dst, port, req, (size_t)len, reply, replylen);
}

static enum guest_tcp_result tls_hello(const char *dst, uint16_t port, const char *sni,
                                       int records, char *reply, size_t replylen)
{
    uint8_t hello[2048];
    size_t len = tls_client_hello(sni, records, hello, sizeof(hello));
    return guest_tcp_exchange(dst, port, hello, len, reply, replylen);
}

/* reply must be the HELLO of netlab's server at dst:port: egress spliced
 * the connection through. */
static void assert_hello_from(const char *reply, const char *dst, uint16_t port)
{
    char want[64];
    snprintf(want, sizeof(want), "HELLO %s:%u", dst, (unsigned)port);
    assert_prefix(reply, want);
}

/* An HTTP GET to dst:port (Host: host, NULL: none) that egress must
 * splice through. */
static void expect_http_spliced(const char *dst, uint16_t port, const char *host)
{
    char reply[256];
    assert_int_equal(http_get(dst, port, host, reply, sizeof(reply)), GUEST_TCP_REPLY);
    assert_hello_from(reply, dst, port);
}

/* The same for a ClientHello naming sni, split over records records, to
 * dst:443. */
static void expect_tls_spliced(const char *dst, const char *sni, int records)
{
    char reply[256];
    assert_int_equal(tls_hello(dst, 443, sni, records, reply, sizeof(reply)), GUEST_TCP_REPLY);
    assert_hello_from(reply, dst, 443);
}

/* A connection egress must refuse: reset, logged with reason, and the
 * upstream servers never saw it. */
static void expect_denied(enum guest_tcp_result (*attempt)(void *), void *arg, const char *reason)
{
    uint64_t seq = last_seq();
    unsigned accepted = netlab_tcp_accepted();
    assert_int_equal(attempt(arg), GUEST_TCP_RESET);
    assert_int_equal(netlab_tcp_accepted(), accepted);
    expect_last_tcp(seq, false, reason);
}

struct http_attempt {
    const char *dst;
    uint16_t port;
    const char *host;
};

static enum guest_tcp_result attempt_http(void *arg)
{
    struct http_attempt *a = arg;
    char reply[256];
    return http_get(a->dst, a->port, a->host, reply, sizeof(reply));
}

struct tls_attempt {
    const char *dst;
    const char *sni;
    int records;
};

static enum guest_tcp_result attempt_tls(void *arg)
{
    struct tls_attempt *a = arg;
    char reply[256];
    return tls_hello(a->dst, 443, a->sni, a->records, reply, sizeof(reply));
}

static enum guest_tcp_result attempt_raw(void *arg)
{
    const char *bytes = arg;
    char reply[256];
    return guest_tcp_exchange(NETLAB_WEB1, 80, bytes, strlen(bytes), reply, sizeof(reply));
}

#define DENY_HTTP(dst_, port_, host_, reason)                                                     \
    do {                                                                                          \
        struct http_attempt a_ = { dst_, port_, host_ };                                         \
        expect_denied(attempt_http, &a_, reason);                                                \
    } while (0)

/* ---- tests ---- */

static void test_dns_answers_only_allowed_names(void **state)
{
    (void)state;
    must_set_policy(&base_policy);
    uint32_t addr;
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    assert_int_equal(addr, ip(NETLAB_WEB1));
    assert_int_equal(resolve("ALLOWED.test", &addr), DNS_RCODE_NOERROR);
    assert_int_equal(addr, ip(NETLAB_WEB1));
    assert_int_equal(resolve("www.wild.test", &addr), DNS_RCODE_NOERROR);
    assert_int_equal(addr, ip(NETLAB_WEB2));
    /* "*.wild.test" does not cover wild.test itself. */
    assert_int_equal(resolve("wild.test", &addr), DNS_RCODE_NXDOMAIN);
    assert_int_equal(resolve("denied.test", &addr), DNS_RCODE_NXDOMAIN);
    assert_int_equal(addr, 0);
    /* A TXT question, even for an allowed name, is a channel: refused. */
    uint32_t addrs[4];
    size_t n;
    assert_int_equal(guest_dns_query(NETLAB_GUEST_GW, "allowed.test", 16, addrs, 4, &n),
                     DNS_RCODE_REFUSED);
    /* Any other resolver address reaches egress's DNS all the same. */
    assert_int_equal(guest_dns_query("192.0.2.99", "denied.test", DNS_TYPE_A, addrs, 4, &n),
                     DNS_RCODE_NXDOMAIN);
    assert_int_equal(guest_dns_query("192.0.2.99", "allowed.test", DNS_TYPE_A, addrs, 4, &n),
                     DNS_RCODE_NOERROR);
    /* DNS rebinding: an allowed name answering with a private address. */
    assert_int_equal(resolve("rebind.test", &addr), DNS_RCODE_REFUSED);
    /* An allowed name answering with the host's own address, loopback or
     * the metadata service. */
    assert_int_equal(resolve("uplink.test", &addr), DNS_RCODE_REFUSED);
    assert_int_equal(resolve("loop.test", &addr), DNS_RCODE_REFUSED);
    assert_int_equal(resolve("metadata.test", &addr), DNS_RCODE_REFUSED);
}

static void test_allowed_http_and_tls_are_spliced(void **state)
{
    (void)state;
    must_set_policy(&base_policy);
    uint32_t addr;
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    char reply[256];
    uint64_t seq = last_seq();
    assert_int_equal(http_get(NETLAB_WEB1, 80, "allowed.test", reply, sizeof(reply)),
                     GUEST_TCP_REPLY);
    assert_string_equal(reply, "HELLO " NETLAB_WEB1 ":80 got=38\n");
    expect_last_tcp(seq, true, "allow_domains");

    expect_tls_spliced(NETLAB_WEB1, "allowed.test", 1);
    /* A ClientHello split over three records is reassembled, not waved through. */
    expect_tls_spliced(NETLAB_WEB1, "allowed.test", 3);

    assert_int_equal(resolve("www.wild.test", &addr), DNS_RCODE_NOERROR);
    expect_tls_spliced(NETLAB_WEB2, "www.wild.test", 1);
}

static void test_claimed_name_must_match_dns_answer(void **state)
{
    (void)state;
    must_set_policy(&base_policy);
    uint32_t addr;
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    assert_int_equal(resolve("www.wild.test", &addr), DNS_RCODE_NOERROR);
    /* Allowed name, but egress never said it lives at WEB2 (fronting, /etc/hosts). */
    struct tls_attempt sni_elsewhere = { NETLAB_WEB2, "allowed.test", 1 };
    expect_denied(attempt_tls, &sni_elsewhere, "name_not_resolved_to_destination");
    DENY_HTTP(NETLAB_WEB3, 80, "allowed.test", "name_not_resolved_to_destination");
    /* A denied name never got a DNS answer, so it is pinned nowhere. */
    DENY_HTTP(NETLAB_WEB1, 80, "denied.test", "name_not_resolved_to_destination");
    struct tls_attempt sni_denied = { NETLAB_WEB1, "denied.test", 2 };
    expect_denied(attempt_tls, &sni_denied, "name_not_resolved_to_destination");
}

static void test_ip_literals_need_a_cidr_rule(void **state)
{
    (void)state;
    must_set_policy(&base_policy);
    DENY_HTTP(NETLAB_WEB2, 80, NULL, "ip_literal");
    DENY_HTTP(NETLAB_WEB2, 80, NETLAB_WEB2, "name_not_resolved_to_destination");
    struct tls_attempt no_sni = { NETLAB_WEB2, NULL, 1 };
    expect_denied(attempt_tls, &no_sni, "ip_literal");
    /* Not HTTP, not TLS: claims nothing. */
    expect_denied(attempt_raw, "SSH-2.0-OpenSSH_9.2\r\n", "ip_literal");

    struct policy_spec with_cidr = base_policy;
    with_cidr.allow_cidrs[0] = NETLAB_WEB2 "/32";
    must_set_policy(&with_cidr);
    uint64_t seq = last_seq();
    expect_http_spliced(NETLAB_WEB2, 80, NULL);
    expect_last_tcp(seq, true, "allow_cidrs");
    DENY_HTTP(NETLAB_WEB3, 80, NULL, "ip_literal");
}

static void test_reserved_and_host_addresses_denied(void **state)
{
    (void)state;
    struct policy_spec everything = { .default_allow = true };
    must_set_policy(&everything);
    uint32_t addr;
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    DENY_HTTP(NETLAB_PRIVATE, 80, "allowed.test", "reserved_range");
    DENY_HTTP("169.254.169.254", 80, NULL, "protected_range");
    DENY_HTTP("172.16.0.1", 80, NULL, "reserved_range");
    DENY_HTTP("192.168.1.1", 80, NULL, "reserved_range");
    DENY_HTTP(NETLAB_UPLINK_ADDR, 80, NULL, "host_address");
    /* Even default allow does not make an IP literal acceptable. */
    DENY_HTTP(NETLAB_WEB3, 80, NULL, "ip_literal");

    /* An explicit CIDR rule opens a private range. */
    struct policy_spec private_ok = { .default_allow = true, .allow_cidrs = { "10.9.9.0/24" } };
    must_set_policy(&private_ok);
    expect_http_spliced(NETLAB_PRIVATE, 80, NULL);

    /* But none opens the node, loopback, "this network", link-local (cloud
     * metadata) or a range the operator protects (PROTECTED_RANGE).
     * (Loopback and 0.0.0.0 never leave the guest's namespace: the policy
     * test checks those.) */
    struct policy_spec open_all = { .default_allow = true,
                                    .allow_cidrs = { NETLAB_UPLINK_ADDR "/32", "127.0.0.0/8",
                                                     "0.0.0.0/8", "169.254.0.0/16",
                                                     PROTECTED_RANGE } };
    must_set_policy(&open_all);
    DENY_HTTP(NETLAB_UPLINK_ADDR, 80, NULL, "host_address");
    DENY_HTTP("169.254.169.254", 80, NULL, "protected_range");
    DENY_HTTP(PROTECTED_ADDR, 80, NULL, "protected_range");
}

/* An address the node gains after egress started (DHCP, a new interface,
 * a floating IP) is the node's from the moment the kernel announces it:
 * a policy that opens it by CIDR still gets host_address. */
#define GAINED_ADDR "198.51.100.77"

static void test_address_gained_later_is_protected(void **state)
{
    (void)state;
    struct policy_spec open = { .default_allow = true, .allow_cidrs = { GAINED_ADDR "/32" } };
    must_set_policy(&open);
    assert_int_equal(system("ip -n " NETLAB_UPLINK_NS " addr add " GAINED_ADDR "/32 dev up0"), 0);
    /* The follower hears of it within milliseconds; this only bounds it. */
    usleep(500 * 1000);
    DENY_HTTP(GAINED_ADDR, 80, NULL, "host_address");
    /* Gone from the node, it stays protected (it may come back). */
    assert_int_equal(system("ip -n " NETLAB_UPLINK_NS " addr del " GAINED_ADDR "/32 dev up0"), 0);
    DENY_HTTP(GAINED_ADDR, 80, NULL, "host_address");
}

static void test_port_rules(void **state)
{
    (void)state;
    struct policy_spec ports = base_policy;
    ports.allow_ports[0] = 80;
    ports.allow_ports[1] = 443;
    must_set_policy(&ports);
    uint32_t addr;
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    char reply[256];
    assert_int_equal(http_get(NETLAB_WEB1, 80, "allowed.test", reply, sizeof(reply)),
                     GUEST_TCP_REPLY);
    DENY_HTTP(NETLAB_WEB1, 8080, "allowed.test", "port_not_allowed");

    struct policy_spec deny80 = base_policy;
    deny80.deny_ports[0] = 80;
    must_set_policy(&deny80);
    DENY_HTTP(NETLAB_WEB1, 80, "allowed.test", "deny_ports");
    expect_http_spliced(NETLAB_WEB1, 8080, "allowed.test");
}

static void test_live_policy_change(void **state)
{
    (void)state;
    must_set_policy(&base_policy);
    uint32_t addr;
    char reply[256];
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    assert_int_equal(http_get(NETLAB_WEB1, 80, "allowed.test", reply, sizeof(reply)),
                     GUEST_TCP_REPLY);

    struct policy_spec deny = base_policy;
    deny.deny_domains[0] = "allowed.test";
    must_set_policy(&deny);
    /* The pin from before still exists; the new policy decides. */
    DENY_HTTP(NETLAB_WEB1, 80, "allowed.test", "deny_domains");
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NXDOMAIN);
    /* deny_domains beats an allow_cidrs rule for the same address. */
    deny.allow_cidrs[0] = NETLAB_WEB1 "/32";
    must_set_policy(&deny);
    DENY_HTTP(NETLAB_WEB1, 80, "allowed.test", "deny_domains");
    deny.deny_cidrs[0] = "198.51.100.0/24";
    must_set_policy(&deny);
    DENY_HTTP(NETLAB_WEB1, 80, NULL, "deny_cidrs");

    must_set_policy(&base_policy);
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    assert_int_equal(http_get(NETLAB_WEB1, 80, "allowed.test", reply, sizeof(reply)),
                     GUEST_TCP_REPLY);
}

static void test_malformed_and_evasive_first_bytes(void **state)
{
    (void)state;
    must_set_policy(&base_policy);
    uint32_t addr;
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    /* CONNECT asks egress to be a proxy. */
    expect_denied(attempt_raw, "CONNECT denied.test:443 HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                  "malformed_first_bytes");
    /* Two Host headers, an absolute URI naming another host. */
    expect_denied(attempt_raw, "GET / HTTP/1.1\r\nHost: allowed.test\r\nHost: denied.test\r\n\r\n",
                  "malformed_first_bytes");
    expect_denied(attempt_raw, "GET http://denied.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                  "malformed_first_bytes");
    /* A Host that is no host name. */
    expect_denied(attempt_raw, "GET / HTTP/1.1\r\nHost: allowed.test\x01\r\n\r\n",
                  "malformed_first_bytes");
    /* A very long SNI. */
    char long_name[400];
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    struct tls_attempt long_sni = { NETLAB_WEB1, long_name, 1 };
    expect_denied(attempt_tls, &long_sni, "malformed_first_bytes");
    /* Half a ClientHello, then the guest stops sending. */
    uint8_t hello[2048];
    size_t len = tls_client_hello("allowed.test", 1, hello, sizeof(hello));
    char reply[256];
    uint64_t seq = last_seq();
    assert_int_equal(guest_tcp_exchange(NETLAB_WEB1, 443, hello, len / 2, reply, sizeof(reply)),
                     GUEST_TCP_RESET);
    expect_last_tcp(seq, false, "malformed_first_bytes");
}

static int read_counters(struct sandbox_net_counters *c)
{
    char err[512];
    int rc = sandbox_net_counters(NETLAB_SANDBOX_ID, c, err, sizeof(err));
    if (rc < 0)
        fprintf(stderr, "%s\n", err);
    return rc;
}

static void test_udp_and_icmp_dropped_and_counted(void **state)
{
    (void)state;
    struct sandbox_net_counters before, after;
    assert_int_equal(read_counters(&before), 0);
    unsigned received = netlab_udp_received();
    assert_int_equal(guest_udp_send(NETLAB_WEB1, NETLAB_UDP_PORT), 0);
    assert_int_equal(guest_udp_send(NETLAB_GUEST_GW, 15053), 0); /* egress's DNS port, directly */
    assert_int_equal(guest_icmp_echo(NETLAB_WEB1), 0);
    /* egress's TCP port dialled directly, not through the redirect. */
    assert_int_equal(guest_tcp_syn(NETLAB_GUEST_GW, 15001), 0);
    /* The veth delivers synchronously in the sender's context: by the time
     * sendto() returned the rules have seen the packets. */
    assert_int_equal(read_counters(&after), 0);
    assert_int_equal(after.dropped_udp - before.dropped_udp, 2);
    assert_int_equal(after.dropped_icmp - before.dropped_icmp, 1);
    assert_int_equal(after.dropped_other - before.dropped_other, 1);
    assert_int_equal(netlab_udp_received(), received);
}

/* The silent server: in the inet namespace, it takes one connection,
 * reads the request and answers nothing, until its peer (egress) closes. */
static struct {
    int fd;
    pthread_t thread;
    bool saw_close;
} silent = { .fd = -1 };

static void *silent_serve(void *arg)
{
    (void)arg;
    struct pollfd pfd = { .fd = silent.fd, .events = POLLIN };
    if (poll(&pfd, 1, 20000) != 1)
        return NULL;
    int fd = accept4(silent.fd, NULL, NULL, SOCK_CLOEXEC);
    char buf[512];
    /* The request, then nothing until the close (bounded: a test that
     * fails must not hang here). */
    for (int i = 0; fd >= 0 && i < 2; i++) {
        struct pollfd rp = { .fd = fd, .events = POLLIN };
        if (poll(&rp, 1, 20000) != 1)
            break;
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0) {
            silent.saw_close = i == 1;
            break;
        }
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* Nothing moves either way for the idle timeout: egress ends the spliced
 * connection on both sides and logs idle_timeout. */
static void test_silent_connection_ends_at_idle_timeout(void **state)
{
    (void)state;
    must_set_policy(&base_policy);
    uint32_t addr;
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    assert_true((silent.fd = netlab_inet_listen(NETLAB_WEB1, SILENT_PORT, 4)) >= 0);
    assert_int_equal(pthread_create(&silent.thread, NULL, silent_serve, NULL), 0);
    uint64_t seq = last_seq();
    const char *req = "GET /silent HTTP/1.1\r\nHost: allowed.test\r\n\r\n";
    char reply[256];
    /* netlab's client waits 10 s for an answer: egress's end comes first. */
    assert_int_equal(guest_tcp_exchange(NETLAB_WEB1, SILENT_PORT, req, strlen(req), reply,
                                        sizeof(reply)),
                     GUEST_TCP_REPLY);
    assert_string_equal(reply, "");
    pthread_join(silent.thread, NULL);
    close(silent.fd);
    silent.fd = -1;
    assert_true(silent.saw_close);
    expect_last_tcp(seq, true, "idle_timeout");
}

static void test_connection_log_contents(void **state)
{
    (void)state;
    must_set_policy(&base_policy);
    uint32_t addr;
    uint64_t seq = last_seq();
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    char reply[256];
    assert_int_equal(http_get(NETLAB_WEB1, 80, "allowed.test", reply, sizeof(reply)),
                     GUEST_TCP_REPLY);
    assert_int_equal(resolve("denied.test", &addr), DNS_RCODE_NXDOMAIN);

    /* A spliced connection's byte counts are written when egress's loop
     * has seen both sides close, which may be just after the guest read
     * its reply: wait for that (never a timing assertion: the deadline
     * only bounds a hang). */
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(seq);
    for (int tries = 0; tries < 100 && r->n_connections == 3 && r->connections[1]->bytes_sent == 0;
         tries++) {
        protobuf_c_message_free_unpacked(&r->base, NULL);
        usleep(50 * 1000);
        r = connections(seq);
    }
    assert_int_equal(r->n_connections, 3);
    Airlock__Egress__V1__Connection **c = r->connections;
    assert_string_equal(c[0]->protocol, "dns");
    assert_string_equal(c[0]->name, "allowed.test");
    assert_string_equal(c[0]->dest_ip, NETLAB_WEB1);
    assert_int_equal(c[0]->decision, AIRLOCK__EGRESS__V1__DECISION__DECISION_ALLOW);

    assert_string_equal(c[1]->protocol, "tcp");
    assert_string_equal(c[1]->name, "allowed.test");
    assert_string_equal(c[1]->dest_ip, NETLAB_WEB1);
    assert_int_equal(c[1]->dest_port, 80);
    assert_int_equal(c[1]->decision, AIRLOCK__EGRESS__V1__DECISION__DECISION_ALLOW);
    assert_int_equal(c[1]->bytes_sent, 38);
    assert_int_equal(c[1]->bytes_received, strlen(reply));
    assert_true(c[1]->time_unix_ms > 0);
    assert_true(c[1]->seq > c[0]->seq);

    assert_string_equal(c[2]->protocol, "dns");
    assert_string_equal(c[2]->name, "denied.test");
    assert_int_equal(c[2]->decision, AIRLOCK__EGRESS__V1__DECISION__DECISION_DENY);
    assert_string_equal(c[2]->reason, "default_deny");
    protobuf_c_message_free_unpacked(&r->base, NULL);
}

static void test_api_rejects_bad_input(void **state)
{
    (void)state;
    struct policy_spec bad = base_policy;
    bad.allow_cidrs[0] = "198.51.100.1/24"; /* host bits set */
    char *details = NULL;
    assert_int_equal(set_policy(&bad, &details), GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(details, "policy.allow_cidrs[0]"));
    free(details);
    bad = base_policy;
    bad.deny_domains[0] = "bad name.test";
    details = NULL;
    assert_int_equal(set_policy(&bad, &details), GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(details, "policy.deny_domains[0]"));
    free(details);
    /* This egress runs without --vault: no sandbox CA to inspect TLS
     * with. Refused, and the policy in force stays. */
    bad = base_policy;
    bad.inspect_tls = true;
    details = NULL;
    assert_int_equal(set_policy(&bad, &details), GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(details, "policy.inspect_tls"));
    free(details);
    uint32_t addr;
    assert_int_equal(resolve("allowed.test", &addr), DNS_RCODE_NOERROR);
    expect_tls_spliced(NETLAB_WEB1, "allowed.test", 1);

    Airlock__Egress__V1__DetachSandboxRequest req =
        AIRLOCK__EGRESS__V1__DETACH_SANDBOX_REQUEST__INIT;
    req.sandbox_id = "not-attached";
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(lab.ch, EGRESS_METHOD("DetachSandbox"), &req.base,
                               &airlock__egress__v1__detach_sandbox_response__descriptor, &resp,
                               NULL, CALL_TIMEOUT_MS),
                     GRPC_STATUS_NOT_FOUND);
}

/* ---- setup ---- */

static int attach(void)
{
    Airlock__Egress__V1__Policy p = AIRLOCK__EGRESS__V1__POLICY__INIT;
    policy_fill(&p, &base_policy);
    char path[256];
    sandbox_net_netns_path(NETLAB_SANDBOX_ID, path, sizeof(path));
    Airlock__Egress__V1__AttachSandboxRequest req =
        AIRLOCK__EGRESS__V1__ATTACH_SANDBOX_REQUEST__INIT;
    req.sandbox_id = NETLAB_SANDBOX_ID;
    req.netns_path = path;
    req.policy = &p;
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(lab.ch, EGRESS_METHOD("AttachSandbox"), &req.base,
                                    &airlock__egress__v1__attach_sandbox_response__descriptor,
                                    &resp, &details, CALL_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        fprintf(stderr, "AttachSandbox: %s\n", details ? details : "");
    free(details);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st == GRPC_STATUS_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    if (lab.ch)
        rpc_channel_close(lab.ch);
    if (lab.srv)
        rpc_server_stop(lab.srv);
    /* Detaches the sandbox: its sockets must go before its namespace. */
    egress_free(lab.eg);
    memset(&lab, 0, sizeof(lab));
    netlab_down();
    return 0;
}

static int group_setup(void **state)
{
    (void)state;
    if (netlab_up() < 0)
        return -1;
    static struct cidr protected_range;
    assert_int_equal(cidr_parse(PROTECTED_RANGE, &protected_range), 0);
    struct egress_config cfg = {
        .protected_cidrs = &protected_range,
        .n_protected_cidrs = 1,
        .uplink_netns = netlab_ns_path(NETLAB_UPLINK_NS),
        .upstream_dns_addr = ip(NETLAB_DNS),
        /* A half-sent ClientHello must not hold the test up for long. */
        .sniff_timeout_ms = 1000,
        .idle_timeout_ms = IDLE_TIMEOUT_MS,
    };
    char err[512];
    lab.eg = egress_new(&cfg, err, sizeof(err));
    if (!lab.eg) {
        fprintf(stderr, "egress_new: %s\n", err);
        goto fail;
    }
    snprintf(lab.sock, sizeof(lab.sock), "unix:/tmp/airlock-nettest-%d.sock", (int)getpid());
    lab.srv = egress_service_start(lab.eg, lab.sock, NULL, err, sizeof(err));
    if (!lab.srv) {
        fprintf(stderr, "egress_service_start: %s\n", err);
        goto fail;
    }
    lab.ch = rpc_channel_open(lab.sock, NULL);
    if (!lab.ch || attach() < 0)
        goto fail;
    return 0;
fail:
    group_teardown(state);
    return -1;
}

int main(void)
{
    if (!test_have_root("test_egress", "network namespaces"))
        return TEST_SKIPPED;
    signal(SIGPIPE, SIG_IGN);
    log_init("test_egress", getenv("AIRLOCK_DEBUG") ? LOG_DEBUG : LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dns_answers_only_allowed_names),
        cmocka_unit_test(test_allowed_http_and_tls_are_spliced),
        cmocka_unit_test(test_claimed_name_must_match_dns_answer),
        cmocka_unit_test(test_ip_literals_need_a_cidr_rule),
        cmocka_unit_test(test_reserved_and_host_addresses_denied),
        cmocka_unit_test(test_address_gained_later_is_protected),
        cmocka_unit_test(test_port_rules),
        cmocka_unit_test(test_live_policy_change),
        cmocka_unit_test(test_malformed_and_evasive_first_bytes),
        cmocka_unit_test(test_udp_and_icmp_dropped_and_counted),
        cmocka_unit_test(test_silent_connection_ends_at_idle_timeout),
        cmocka_unit_test(test_connection_log_contents),
        cmocka_unit_test(test_api_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
