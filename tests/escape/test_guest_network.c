/* Root in a guest goes for the host side of its TAP (docs/security.md,
 * "Host-side threat model: from the guest"): TCP and UDP to the node's
 * service ports on the gateway, SYNs for the namespace's loopback, AF_VSOCK
 * to the host, a spoofed source (an address of its own choosing, forged
 * headers), a SYN flood, IP fragments, VLAN-tagged frames, IPv6, ICMP, and
 * gratuitous ARP claiming the gateway. vmhost has no TCP API and this
 * harness runs no NATS, PostgreSQL or vault: the test listens on their
 * ports itself, on the host side of the shared sandbox's namespace (which
 * routes nowhere: docs/egress.md), plus an AF_VSOCK listener on the host.
 * Pass: no listener ever accepts or receives a byte, the namespace's rules
 * count what they dropped, and vmhost and the witness answer. The
 * guest-side code is tests/escape/guest/netprobe.py. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/vm_sockets.h>

#include "escape_guest.h"
#include "fsutil.h"
#include "netns.h"
#include "sandbox_net.h"
#include "sandbox_netdefs.h"

#define OUT_MAX 8192
#define GATEWAY SANDBOX_NET_GATEWAY_ADDR
/* What a node runs or could: ssh, http(s), etcd, NATS, PostgreSQL,
 * kubelet/apiserver, vault, metrics. */
#define SERVICE_PORTS "22,80,443,2379,4222,5432,6443,8200,9090"
#define UDP_PORTS "53,123,4222,5353,8125"
#define VSOCK_PORT 9999
#define SYN_FLOOD_COUNT "20000"
#define MAX_LISTENERS 32

static struct {
    int fds[MAX_LISTENERS];
    int types[MAX_LISTENERS];
    size_t n;
    int vsock; /* -1: the host has no AF_VSOCK */
    unsigned long accepted, received;
} listeners = { .vsock = -1 };

static int listen_on(int family, int type, int port)
{
    int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in in4 = { .sin_family = AF_INET, .sin_port = htons(port) };
    struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
                                .sin6_addr = IN6ADDR_ANY_INIT };
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    int rc = family == AF_INET ? bind(fd, (struct sockaddr *)&in4, sizeof(in4))
                               : bind(fd, (struct sockaddr *)&in6, sizeof(in6));
    if (rc < 0 || (type == SOCK_STREAM && listen(fd, 64) < 0)) {
        close(fd);
        return -1;
    }
    return fd;
}

static void add_listener(int family, int type, int port)
{
    int fd = listen_on(family, type, port);
    if (fd >= 0 && listeners.n < MAX_LISTENERS) {
        listeners.types[listeners.n] = type;
        listeners.fds[listeners.n++] = fd;
    } else if (fd >= 0) {
        close(fd);
    }
}

static void add_listeners(const char *ports, int type)
{
    for (const char *p = ports; *p; p += strcspn(p, ","), p += *p == ',') {
        add_listener(AF_INET, type, atoi(p));
        add_listener(AF_INET6, type, atoi(p));
    }
}

/* On a thread inside the sandbox's namespace (netns_run): every socket
 * made there stays there. */
static int open_in_namespace(void *arg)
{
    (void)arg;
    add_listeners(SERVICE_PORTS, SOCK_STREAM);
    add_listeners(UDP_PORTS, SOCK_DGRAM);
    return 0;
}

static void open_vsock(void)
{
    int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_vm addr = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY,
                                .svm_port = VSOCK_PORT };
    if (fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 && listen(fd, 8) == 0) {
        listeners.vsock = fd;
        return;
    }
    fprintf(stderr, "escape: no AF_VSOCK listener on the host (%s)\n", strerror(errno));
    if (fd >= 0)
        close(fd);
}

/* Takes what every listener got since the last look into the totals. */
static void drain(void)
{
    char buf[2048];
    for (size_t i = 0; i < listeners.n; i++) {
        for (int fd; listeners.types[i] == SOCK_STREAM && (fd = accept(listeners.fds[i], NULL,
                                                                      NULL)) >= 0;) {
            listeners.accepted++;
            close(fd);
        }
        while (listeners.types[i] == SOCK_DGRAM && recv(listeners.fds[i], buf, sizeof(buf), 0) >= 0)
            listeners.received++;
    }
    for (int fd; listeners.vsock >= 0 && (fd = accept(listeners.vsock, NULL, NULL)) >= 0;) {
        listeners.accepted++;
        close(fd);
    }
}

static void assert_nothing_arrived(void)
{
    drain();
    if (listeners.accepted || listeners.received)
        fail_msg("the host side got %lu connections and %lu datagrams", listeners.accepted,
                 listeners.received);
}

/* In the namespace: tap0's received packets from /proc/thread-self/net/dev
 * (the thread's namespace; /proc/self/net is the process's). */
static int read_tap_rx(void *arg)
{
    char *text = NULL;
    if (fs_read_file("/proc/thread-self/net/dev", 1 << 16, &text, NULL, NULL, 0) < 0)
        return -1;
    const char *line = strstr(text, SANDBOX_NET_TAP_NAME ":");
    int rc = line && sscanf(line + strlen(SANDBOX_NET_TAP_NAME ":"), "%*u %llu",
                            (unsigned long long *)arg) == 1 ? 0 : -1;
    free(text);
    return rc;
}

static unsigned long long tap_rx_packets(void)
{
    char ns[PATH_MAX], err[512] = "";
    unsigned long long packets = 0;
    if (sandbox_net_netns_path(escape_shared.id, ns, sizeof(ns)) < 0 ||
        netns_run(ns, read_tap_rx, &packets, err, sizeof(err)) < 0)
        fail_msg("tap0's counters: %s", err);
    return packets;
}

static struct sandbox_net_counters counters(void)
{
    struct sandbox_net_counters c;
    char err[512];
    if (sandbox_net_counters(escape_shared.id, &c, err, sizeof(err)) < 0)
        fail_msg("%s", err);
    return c;
}

/* netprobe.py with args in the shared sandbox: it must exit 0, print no
 * "connected", and leave every listener empty. Its output into out. */
static void probe(const char *args, char *out, size_t outlen)
{
    char command[512];
    snprintf(command, sizeof(command), "python3 /root/netprobe.py %s", args);
    escape_sh_ok(&escape_shared, command, out, outlen);
    assert_null(strstr(out, "connected"));
    assert_nothing_arrived();
    escape_assert_answers(&escape_shared, 0);
}

static void tcp_to_host_services(void **state)
{
    (void)state;
    char out[OUT_MAX];
    probe("connect " GATEWAY " " SERVICE_PORTS, out, sizeof(out));
    assert_non_null(strstr(out, "tcp " GATEWAY ":5432 ECONNREFUSED"));
}

/* SYNs for 127.0.0.1 on the wire to the gateway: they arrive, and the
 * namespace does not route them to its loopback (a martian). */
static void syns_for_the_namespace_loopback(void **state)
{
    (void)state;
    unsigned long long before = tap_rx_packets();
    char out[OUT_MAX];
    probe("martian 127.0.0.1 " SERVICE_PORTS, out, sizeof(out));
    assert_true(tap_rx_packets() >= before + 27);
}

static void udp_to_host_ports(void **state)
{
    (void)state;
    struct sandbox_net_counters before = counters();
    char out[OUT_MAX];
    probe("udp " GATEWAY " " UDP_PORTS, out, sizeof(out));
    /* 3 datagrams each; port 53 goes to egress's DNS port (nobody here). */
    assert_true(counters().dropped_udp >= before.dropped_udp + 12);
}

static void vsock_to_the_host(void **state)
{
    (void)state;
    char out[OUT_MAX], args[64];
    for (unsigned cid = 1; cid <= 3; cid++) {
        snprintf(args, sizeof(args), "vsock %u %d", cid, VSOCK_PORT);
        probe(args, out, sizeof(out));
        assert_non_null(strstr(out, "EAFNOSUPPORT")); /* no vsock transport in the guest */
    }
}

/* An address of its own on its interface, then connect from it: another
 * sandbox-like address (100.96.0.3 would be the /30's broadcast, which
 * the guest's stack refuses as a source) and a private one. */
static void spoofed_source_address(void **state)
{
    (void)state;
    struct sandbox_net_counters before = counters();
    char out[OUT_MAX];
    probe("spoof_bind 100.96.0.6 " GATEWAY " 22,5432", out, sizeof(out));
    probe("spoof_bind 10.1.2.3 " GATEWAY " 22,5432", out, sizeof(out));
    assert_non_null(strstr(out, "tcp 10.1.2.3->" GATEWAY ":5432 timeout"));
    assert_true(counters().dropped_spoofed >= before.dropped_spoofed + 4);
}

/* Forged IPv4 headers: the gateway's own address, loopback, a private
 * address, none. */
static void forged_source_headers(void **state)
{
    (void)state;
    static const char *const sources[] = { GATEWAY, "127.0.0.1", "10.0.0.1", "0.0.0.0" };
    struct sandbox_net_counters before = counters();
    char out[OUT_MAX], args[128];
    for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
        snprintf(args, sizeof(args), "raw_spoof %s " GATEWAY " 22,5432", sources[i]);
        probe(args, out, sizeof(out));
    }
    assert_true(counters().dropped_spoofed >= before.dropped_spoofed + 24);
}

static void syn_flood_at_the_gateway(void **state)
{
    (void)state;
    char out[OUT_MAX];
    probe("syn_flood " GATEWAY " 5432 " SYN_FLOOD_COUNT, out, sizeof(out));
    assert_non_null(strstr(out, SYN_FLOOD_COUNT " sent"));
}

static void fragmented_syns(void **state)
{
    (void)state;
    char out[OUT_MAX];
    probe("fragments " GATEWAY " " SERVICE_PORTS, out, sizeof(out));
}

/* 802.1Q and QinQ tags: the namespace has no VLAN device, its kernel
 * drops them before any rule (none counts them); they did arrive. */
static void vlan_tagged_frames(void **state)
{
    (void)state;
    unsigned long long before = tap_rx_packets();
    char out[OUT_MAX];
    probe("vlan " GATEWAY " 22,5432", out, sizeof(out));
    assert_true(tap_rx_packets() >= before + 4);
}

static void ipv6_to_the_gateway(void **state)
{
    (void)state;
    struct sandbox_net_counters before = counters();
    char out[OUT_MAX];
    /* The TAP's link-local address (made from its MAC). */
    probe("ipv6 fe80::a1:ff:fe00:1%eth0 22,5432", out, sizeof(out));
    assert_true(counters().dropped_ipv6 > before.dropped_ipv6);
}

static void icmp_to_the_gateway(void **state)
{
    (void)state;
    struct sandbox_net_counters before = counters();
    char out[OUT_MAX];
    probe("icmp " GATEWAY " 50", out, sizeof(out));
    assert_true(counters().dropped_icmp >= before.dropped_icmp + 50);
}

/* Gratuitous ARP saying the gateway's, another sandbox's and a LAN
 * address are the guest's, then the services again. */
static void arp_claims_change_nothing(void **state)
{
    (void)state;
    char out[OUT_MAX];
    probe("arp_claims " GATEWAY ",100.96.0.3,10.0.0.1", out, sizeof(out));
    probe("connect " GATEWAY " " SERVICE_PORTS, out, sizeof(out));
}

static size_t count_ports(const char *list)
{
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    return n;
}

static int group_setup(void **state)
{
    if (escape_guest_group_setup(state) < 0)
        return -1;
    char ns[PATH_MAX], err[512];
    if (sandbox_net_netns_path(escape_shared.id, ns, sizeof(ns)) < 0 ||
        netns_run(ns, open_in_namespace, NULL, err, sizeof(err)) < 0) {
        fprintf(stderr, "escape: listeners in the sandbox's namespace: %s\n", err);
        return -1;
    }
    open_vsock();
    fprintf(stderr, "escape: %zu listeners in %s, vsock %s\n", listeners.n, ns,
            listeners.vsock >= 0 ? "too" : "not");
    /* every port, IPv4 and IPv6 */
    return listeners.n == 2 * (count_ports(SERVICE_PORTS) + count_ports(UDP_PORTS)) ? 0 : -1;
}

static int group_teardown(void **state)
{
    for (size_t i = 0; i < listeners.n; i++)
        close(listeners.fds[i]);
    if (listeners.vsock >= 0)
        close(listeners.vsock);
    listeners.n = 0;
    return escape_guest_group_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ESCAPE_ATTEMPT(tcp_to_host_services),
        ESCAPE_ATTEMPT(syns_for_the_namespace_loopback),
        ESCAPE_ATTEMPT(udp_to_host_ports),
        ESCAPE_ATTEMPT(vsock_to_the_host),
        ESCAPE_ATTEMPT(spoofed_source_address),
        ESCAPE_ATTEMPT(forged_source_headers),
        ESCAPE_ATTEMPT(syn_flood_at_the_gateway),
        ESCAPE_ATTEMPT(fragmented_syns),
        ESCAPE_ATTEMPT(vlan_tagged_frames),
        ESCAPE_ATTEMPT(ipv6_to_the_gateway),
        ESCAPE_ATTEMPT(icmp_to_the_gateway),
        ESCAPE_ATTEMPT(arp_claims_change_nothing),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
