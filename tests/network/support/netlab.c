#include "netlab.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns_wire.h"
#include "fsutil.h"
#include "netns.h"
#include "sandbox_net.h"
#include "egress_service.h"

#define NETLAB_CALL_TIMEOUT_MS 10000

#define IO_TIMEOUT_MS 10000

static const char *const netlab_namespaces[] = { NETLAB_GUEST_NS, NETLAB_UPLINK_NS,
                                                 NETLAB_INET_NS };

const char *netlab_ns_path(const char *ns)
{
    static __thread char path[256];
    netns_path(ns, path, sizeof(path));
    return path;
}

/* Runs a shell command, printing its output when it fails. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[1024], err[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    const char *argv[] = { "sh", "-c", cmd, NULL };
    if (run_command(argv, NULL, NULL, err, sizeof(err)) < 0) {
        fprintf(stderr, "netlab: %s\n", err);
        return -1;
    }
    return 0;
}

/* ---- the inet namespace's servers ---- */

struct dns_record {
    const char *name;
    const char *addr;
    const char *later_addr; /* the answer from the second query on; NULL: addr */
};

static const struct dns_record dns_records[] = {
    { "allowed.test", NETLAB_WEB1, NULL },
    { "www.wild.test", NETLAB_WEB2, NULL },
    { "other.test", NETLAB_WEB2, NULL },
    { "denied.test", NETLAB_WEB3, NULL },
    { "rebind.test", NETLAB_PRIVATE, NULL },
    { "uplink.test", NETLAB_UPLINK_ADDR, NULL },
    { "loop.test", "127.0.0.1", NULL },
    { "metadata.test", "169.254.169.254", NULL },
    /* DNS rebinding: public first, private once the name has been trusted */
    { "flip.test", NETLAB_WEB1, NETLAB_PRIVATE },
};

static const uint16_t tcp_ports[] = { 80, 443, 8080 };
#define N_TCP_PORTS (sizeof(tcp_ports) / sizeof(*tcp_ports))
/* The UDP "services" a guest might try: netlab's own, NTP, QUIC. */
static const uint16_t udp_ports[] = { NETLAB_UDP_PORT, 123, 443 };
#define N_UDP_PORTS (sizeof(udp_ports) / sizeof(*udp_ports))
#define DNS_NAMES_MAX 256

static struct {
    int tcp_fds[N_TCP_PORTS];
    int udp_fds[N_UDP_PORTS];
    int dns_fd;
    int stop[2];
    pthread_t thread;
    bool running;
    atomic_uint tcp_accepted, tcp_bytes, udp_received;
    pthread_mutex_t dns_lock; /* the query counts below */
    char dns_names[DNS_NAMES_MAX][256];
    unsigned dns_counts[DNS_NAMES_MAX];
    size_t n_dns_names;
    unsigned dns_total;
} servers = { .dns_fd = -1, .stop = { -1, -1 }, .dns_lock = PTHREAD_MUTEX_INITIALIZER };

unsigned netlab_tcp_accepted(void)
{
    return atomic_load(&servers.tcp_accepted);
}

unsigned netlab_tcp_bytes(void)
{
    return atomic_load(&servers.tcp_bytes);
}

unsigned netlab_udp_received(void)
{
    return atomic_load(&servers.udp_received);
}

/* Counts one query for name and returns how many came before it. */
static unsigned dns_count_query(const char *name)
{
    pthread_mutex_lock(&servers.dns_lock);
    servers.dns_total++;
    size_t i = 0;
    while (i < servers.n_dns_names && strcmp(servers.dns_names[i], name) != 0)
        i++;
    if (i == servers.n_dns_names && i < DNS_NAMES_MAX)
        snprintf(servers.dns_names[servers.n_dns_names++], sizeof(*servers.dns_names), "%s", name);
    unsigned before = i < DNS_NAMES_MAX ? servers.dns_counts[i]++ : 0;
    pthread_mutex_unlock(&servers.dns_lock);
    return before;
}

unsigned netlab_dns_queries(const char *name)
{
    pthread_mutex_lock(&servers.dns_lock);
    unsigned n = name ? 0 : servers.dns_total;
    for (size_t i = 0; name && i < servers.n_dns_names; i++)
        if (strcmp(servers.dns_names[i], name) == 0)
            n = servers.dns_counts[i];
    pthread_mutex_unlock(&servers.dns_lock);
    return n;
}

static int bound_socket(int type, const char *ip, uint16_t port, int backlog)
{
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
    inet_pton(AF_INET, ip, &sa.sin_addr);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        (type == SOCK_STREAM && listen(fd, backlog) < 0)) {
        fprintf(stderr, "netlab: bind %s:%u: %s\n", ip, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

struct inet_listener {
    const char *ip;
    uint16_t port;
    int backlog;
    int fd;
};

static int open_inet_listener(void *arg)
{
    struct inet_listener *l = arg;
    l->fd = bound_socket(SOCK_STREAM, l->ip, l->port, l->backlog);
    return l->fd < 0 ? -1 : 0;
}

int netlab_inet_listen(const char *ip, uint16_t port, int backlog)
{
    struct inet_listener l = { .ip = ip, .port = port, .backlog = backlog, .fd = -1 };
    char err[256] = "";
    if (netns_run(netlab_ns_path(NETLAB_INET_NS), open_inet_listener, &l, err, sizeof(err)) < 0) {
        if (err[0])
            fprintf(stderr, "netlab: listener %s:%u: %s\n", ip, port, err);
        return -1;
    }
    return l.fd;
}

static int open_server_sockets(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < N_TCP_PORTS; i++)
        if ((servers.tcp_fds[i] = bound_socket(SOCK_STREAM, "0.0.0.0", tcp_ports[i], 16)) < 0)
            return -1;
    for (size_t i = 0; i < N_UDP_PORTS; i++)
        if ((servers.udp_fds[i] = bound_socket(SOCK_DGRAM, "0.0.0.0", udp_ports[i], 0)) < 0)
            return -1;
    servers.dns_fd = bound_socket(SOCK_DGRAM, NETLAB_DNS, 53, 0);
    return servers.dns_fd < 0 ? -1 : 0;
}

/* Answers each read with "HELLO <local ip>:<port> got=<bytes read>" and
 * closes, unless the request asked for "Connection: keep-alive": then the
 * answer is an HTTP/1.1 response with a length and the next read follows. */
static void serve_tcp(int lfd)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    atomic_fetch_add(&servers.tcp_accepted, 1);
    char buf[4096], hello[64], reply[192], ip[16];
    struct sockaddr_in local;
    socklen_t ll = sizeof(local);
    getsockname(fd, (struct sockaddr *)&local, &ll);
    inet_ntop(AF_INET, &local.sin_addr, ip, sizeof(ip));
    for (bool first = true;; first = false) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        ssize_t n = poll(&pfd, 1, IO_TIMEOUT_MS) == 1 ? read(fd, buf, sizeof(buf)) : 0;
        if (n > 0)
            atomic_fetch_add(&servers.tcp_bytes, (unsigned)n);
        int hl = snprintf(hello, sizeof(hello), "HELLO %s:%u got=%zd\n", ip,
                          ntohs(local.sin_port), n);
        bool keep_alive = n > 0 && memmem(buf, (size_t)n, "Connection: keep-alive", 22);
        int len = keep_alive ? snprintf(reply, sizeof(reply),
                                        "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", hl,
                                        hello)
                             : snprintf(reply, sizeof(reply), "%s", hello);
        if (n > 0 || first)
            fs_write_all(fd, reply, (size_t)len);
        if (!keep_alive)
            break;
    }
    close(fd);
}

static void serve_dns(void)
{
    uint8_t query[512], reply[512];
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    ssize_t n = recvfrom(servers.dns_fd, query, sizeof(query), 0, (struct sockaddr *)&from, &fl);
    struct dns_question q;
    if (n <= 0 || dns_parse_query(query, (size_t)n, &q) < 0)
        return;
    unsigned earlier = dns_count_query(q.name_valid ? q.name : "");
    uint32_t addr = 0;
    for (size_t i = 0; i < sizeof(dns_records) / sizeof(*dns_records); i++) {
        const struct dns_record *r = &dns_records[i];
        struct in_addr in;
        if (q.name_valid && strcmp(q.name, r->name) == 0 &&
            inet_pton(AF_INET, earlier && r->later_addr ? r->later_addr : r->addr, &in) == 1)
            addr = ntohl(in.s_addr);
    }
    size_t len = addr && q.qtype == DNS_TYPE_A
                     ? dns_build_answer(query, &q, DNS_RCODE_NOERROR, &addr, 1, 60, reply,
                                        sizeof(reply))
                     : dns_build_answer(query, &q, addr ? DNS_RCODE_NOERROR : DNS_RCODE_NXDOMAIN,
                                        NULL, 0, 0, reply, sizeof(reply));
    sendto(servers.dns_fd, reply, len, 0, (struct sockaddr *)&from, fl);
}

static void *server_thread(void *arg)
{
    (void)arg;
    /* TCP listeners, UDP sockets, DNS, stop */
    enum { UDP0 = N_TCP_PORTS, DNS = UDP0 + N_UDP_PORTS, STOP, N_FDS };
    struct pollfd pfd[N_FDS];
    for (;;) {
        for (size_t i = 0; i < N_TCP_PORTS; i++)
            pfd[i] = (struct pollfd){ .fd = servers.tcp_fds[i], .events = POLLIN };
        for (size_t i = 0; i < N_UDP_PORTS; i++)
            pfd[UDP0 + i] = (struct pollfd){ .fd = servers.udp_fds[i], .events = POLLIN };
        pfd[DNS] = (struct pollfd){ .fd = servers.dns_fd, .events = POLLIN };
        pfd[STOP] = (struct pollfd){ .fd = servers.stop[0], .events = POLLIN };
        if (poll(pfd, N_FDS, -1) < 0 && errno != EINTR)
            return NULL;
        if (pfd[STOP].revents)
            return NULL;
        for (size_t i = 0; i < N_TCP_PORTS; i++)
            if (pfd[i].revents & POLLIN)
                serve_tcp(servers.tcp_fds[i]);
        if (pfd[DNS].revents & POLLIN)
            serve_dns();
        for (size_t i = 0; i < N_UDP_PORTS; i++) {
            char b[64];
            if ((pfd[UDP0 + i].revents & POLLIN) && recv(servers.udp_fds[i], b, sizeof(b), 0) >= 0)
                atomic_fetch_add(&servers.udp_received, 1);
        }
    }
}

static void servers_stop(void)
{
    if (servers.running) {
        if (write(servers.stop[1], "x", 1) < 0)
            perror("netlab: stop servers");
        pthread_join(servers.thread, NULL);
        servers.running = false;
    }
    for (size_t i = 0; i < N_TCP_PORTS; i++)
        if (servers.tcp_fds[i] > 0)
            close(servers.tcp_fds[i]);
    for (size_t i = 0; i < N_UDP_PORTS; i++)
        if (servers.udp_fds[i] > 0)
            close(servers.udp_fds[i]);
    int *fds[] = { &servers.dns_fd, &servers.stop[0], &servers.stop[1] };
    for (size_t i = 0; i < sizeof(fds) / sizeof(*fds); i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
    memset(servers.tcp_fds, 0, sizeof(servers.tcp_fds));
    memset(servers.udp_fds, 0, sizeof(servers.udp_fds));
    pthread_mutex_lock(&servers.dns_lock);
    servers.n_dns_names = 0;
    servers.dns_total = 0;
    memset(servers.dns_counts, 0, sizeof(servers.dns_counts));
    pthread_mutex_unlock(&servers.dns_lock);
}

/* ---- topology ---- */

void netlab_down(void)
{
    servers_stop();
    char err[512];
    if (sandbox_net_delete(NETLAB_SANDBOX_ID, err, sizeof(err)) < 0)
        fprintf(stderr, "netlab: %s\n", err);
    /* Deleting a namespace deletes its veth ends, and with them the peers. */
    for (size_t i = 0; i < sizeof(netlab_namespaces) / sizeof(*netlab_namespaces); i++)
        if (netns_delete(netlab_namespaces[i], err, sizeof(err)) < 0)
            fprintf(stderr, "netlab: %s\n", err);
}

#define IN(ns) "ip netns exec " ns " "

/* The uplink ⇄ inet pair and the inet servers. */
static int netlab_build_uplink(void)
{
    char err[512];
    if (netns_create(NETLAB_UPLINK_NS, err, sizeof(err)) < 0 ||
        netns_create(NETLAB_INET_NS, err, sizeof(err)) < 0) {
        fprintf(stderr, "netlab: %s\n", err);
        return -1;
    }
    if (sh(IN(NETLAB_UPLINK_NS) "ip link set lo up") < 0 ||
        sh(IN(NETLAB_UPLINK_NS) "ip link add up0 type veth peer name net0 netns " NETLAB_INET_NS) < 0 ||
        sh(IN(NETLAB_UPLINK_NS) "ip addr add " NETLAB_UPLINK_ADDR "/24 dev up0") < 0 ||
        sh(IN(NETLAB_UPLINK_NS) "ip link set up0 up") < 0 ||
        sh(IN(NETLAB_UPLINK_NS) "ip route add default via " NETLAB_WEB1) < 0 ||
        sh(IN(NETLAB_INET_NS) "ip link set lo up") < 0 ||
        sh(IN(NETLAB_INET_NS) "ip addr add " NETLAB_WEB1 "/24 dev net0") < 0 ||
        sh(IN(NETLAB_INET_NS) "ip addr add " NETLAB_WEB2 "/32 dev net0") < 0 ||
        sh(IN(NETLAB_INET_NS) "ip addr add " NETLAB_WEB3 "/32 dev net0") < 0 ||
        sh(IN(NETLAB_INET_NS) "ip addr add " NETLAB_DNS "/32 dev net0") < 0 ||
        sh(IN(NETLAB_INET_NS) "ip addr add " NETLAB_PRIVATE "/32 dev net0") < 0 ||
        sh(IN(NETLAB_INET_NS) "ip link set net0 up") < 0)
        return -1;
    if (pipe2(servers.stop, O_CLOEXEC) < 0 ||
        netns_run(netlab_ns_path(NETLAB_INET_NS), open_server_sockets, NULL, err, sizeof(err)) < 0 ||
        pthread_create(&servers.thread, NULL, server_thread, NULL) != 0)
        return -1;
    servers.running = true;
    return 0;
}

/* The guest namespace behind the sandbox namespace. */
static int netlab_build_guest(void)
{
    char err[512];
    if (sandbox_net_create(NETLAB_SANDBOX_ID, err, sizeof(err)) < 0 ||
        netns_create(NETLAB_GUEST_NS, err, sizeof(err)) < 0) {
        fprintf(stderr, "netlab: %s\n", err);
        return -1;
    }
    if (sh(IN(NETLAB_GUEST_NS) "ip link set lo up") < 0 ||
        sh(IN(NETLAB_GUEST_NS) "ip link add veth-g type veth peer name veth-s netns airlock-"
                               NETLAB_SANDBOX_ID) < 0 ||
        sh(IN(NETLAB_GUEST_NS) "ip addr add 100.96.1.2/30 dev veth-g") < 0 ||
        sh(IN(NETLAB_GUEST_NS) "ip link set veth-g up") < 0 ||
        sh(IN(NETLAB_GUEST_NS) "ip route add default via " NETLAB_GUEST_GW) < 0 ||
        sh(IN("airlock-" NETLAB_SANDBOX_ID) "ip addr add " NETLAB_GUEST_GW "/30 dev veth-s") < 0 ||
        sh(IN("airlock-" NETLAB_SANDBOX_ID) "ip link set veth-s up") < 0)
        return -1;
    return 0;
}

int netlab_up(void)
{
    netlab_down();
    if (netlab_build_guest() < 0 || netlab_build_uplink() < 0) {
        netlab_down();
        return -1;
    }
    return 0;
}

int netlab_uplink_up(void)
{
    netlab_down();
    if (netlab_build_uplink() < 0) {
        netlab_down();
        return -1;
    }
    return 0;
}

/* ---- the guest's side: each runs on a thread inside the guest ns ---- */

struct guest_job {
    const char *ip;
    uint16_t port;
    const char *name;
    uint16_t qtype;
    const void *payload;
    size_t len;
    char *reply;
    size_t replylen;
    uint32_t *addrs;
    size_t max, *n;
    int result;
};

static int addr_of(const char *ip, uint16_t port, struct sockaddr_in *sa)
{
    *sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port) };
    return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

static int run_in_guest(int (*fn)(void *), struct guest_job *job)
{
    char err[256];
    if (netns_run(netlab_ns_path(NETLAB_GUEST_NS), fn, job, err, sizeof(err)) < 0 && err[0])
        fprintf(stderr, "netlab: %s\n", err);
    return job->result;
}

static int dns_job(void *arg)
{
    struct guest_job *j = arg;
    uint8_t q[512], r[512];
    struct sockaddr_in sa;
    j->result = -1;
    size_t ql = dns_build_query(0x4242, j->name, j->qtype, q, sizeof(q));
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || addr_of(j->ip, 53, &sa) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || send(fd, q, ql, 0) < 0)
        goto out;
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    if (poll(&pfd, 1, IO_TIMEOUT_MS) != 1)
        goto out;
    ssize_t n = recv(fd, r, sizeof(r), 0);
    uint32_t ttl;
    int rcode;
    if (n > 0 && dns_parse_reply_a(r, (size_t)n, 0x4242, j->addrs, j->max, j->n, &ttl, &rcode) == 0)
        j->result = rcode;
out:
    if (fd >= 0)
        close(fd);
    return 0;
}

int guest_dns_query(const char *server, const char *name, uint16_t qtype, uint32_t *addrs,
                    size_t max, size_t *n)
{
    struct guest_job j = { .ip = server, .name = name, .qtype = qtype, .addrs = addrs, .max = max,
                           .n = n, .result = -1 };
    *n = 0;
    return run_in_guest(dns_job, &j);
}

static int tcp_job(void *arg)
{
    struct guest_job *j = arg;
    struct sockaddr_in sa;
    j->result = GUEST_TCP_FAILED;
    j->reply[0] = '\0';
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = { .tv_sec = IO_TIMEOUT_MS / 1000 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* bounds connect() too */
    if (fd < 0 || addr_of(j->ip, j->port, &sa) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        goto out;
    /* egress may reset before the request is even sent: the error is
     * reported once, by whichever call comes first. */
    if (send(fd, j->payload, j->len, MSG_NOSIGNAL) < 0) {
        j->result = errno == ECONNRESET || errno == EPIPE ? GUEST_TCP_RESET : GUEST_TCP_FAILED;
        goto out;
    }
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fd, j->reply + got, j->replylen - 1 - got);
        if (n < 0) {
            j->result = errno == ECONNRESET ? GUEST_TCP_RESET : GUEST_TCP_FAILED;
            break;
        }
        got += (size_t)n;
        j->reply[got] = '\0';
        if (n == 0 || got == j->replylen - 1) {
            j->result = GUEST_TCP_REPLY;
            break;
        }
    }
out:
    if (fd >= 0)
        close(fd);
    return 0;
}

enum guest_tcp_result guest_tcp_exchange(const char *ip, uint16_t port, const void *payload,
                                         size_t len, char *reply, size_t replylen)
{
    struct guest_job j = { .ip = ip, .port = port, .payload = payload, .len = len,
                           .reply = reply, .replylen = replylen };
    return (enum guest_tcp_result)run_in_guest(tcp_job, &j);
}

static int udp_job(void *arg)
{
    struct guest_job *j = arg;
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    j->result = fd >= 0 && addr_of(j->ip, j->port, &sa) == 0 &&
                        sendto(fd, "ping", 4, 0, (struct sockaddr *)&sa, sizeof(sa)) == 4
                    ? 0
                    : -1;
    if (fd >= 0)
        close(fd);
    return 0;
}

static int syn_job(void *arg)
{
    struct guest_job *j = arg;
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    j->result = fd >= 0 && addr_of(j->ip, j->port, &sa) == 0 &&
                        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno == EINPROGRESS
                    ? 0
                    : -1;
    if (fd >= 0)
        close(fd);
    return 0;
}

int guest_tcp_syn(const char *ip, uint16_t port)
{
    struct guest_job j = { .ip = ip, .port = port };
    return run_in_guest(syn_job, &j);
}

int guest_udp_send(const char *ip, uint16_t port)
{
    struct guest_job j = { .ip = ip, .port = port };
    return run_in_guest(udp_job, &j);
}

static uint16_t icmp_checksum(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return htons((uint16_t)~sum);
}

static int icmp_job(void *arg)
{
    struct guest_job *j = arg;
    struct sockaddr_in sa;
    struct icmphdr h = { .type = ICMP_ECHO, .un.echo.id = htons(7), .un.echo.sequence = htons(1) };
    h.checksum = icmp_checksum(&h, sizeof(h));
    int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
    j->result = fd >= 0 && addr_of(j->ip, 0, &sa) == 0 &&
                        sendto(fd, &h, sizeof(h), 0, (struct sockaddr *)&sa, sizeof(sa)) ==
                            (ssize_t)sizeof(h)
                    ? 0
                    : -1;
    if (fd >= 0)
        close(fd);
    return 0;
}

int guest_icmp_echo(const char *ip)
{
    struct guest_job j = { .ip = ip };
    return run_in_guest(icmp_job, &j);
}

/* ---- TLS ---- */

static uint8_t *put16(uint8_t *p, size_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}

size_t tls_client_hello(const char *sni, int records, uint8_t *out, size_t outlen)
{
    return tls_client_hello_ext(sni, records, 0, out, outlen);
}

size_t tls_client_hello_ext(const char *sni, int records, uint16_t extra, uint8_t *out,
                            size_t outlen)
{
    uint8_t hs[1024], *p = hs + 4;
    p = put16(p, 0x0303);
    memset(p, 0xab, 32);
    p += 32;
    *p++ = 0;                      /* session id */
    p = put16(p, 2);
    p = put16(p, 0x1301);          /* TLS_AES_128_GCM_SHA256 */
    *p++ = 1;
    *p++ = 0;                      /* null compression */
    uint8_t *ext_len = p;
    p += 2;
    if (sni) {
        size_t nl = strlen(sni);
        p = put16(p, 0x0000);
        p = put16(p, nl + 5);
        p = put16(p, nl + 3);
        *p++ = 0;
        p = put16(p, nl);
        memcpy(p, sni, nl);
        p += nl;
    }
    p = put16(p, 0x002b);          /* supported_versions: TLS 1.3 */
    p = put16(p, 3);
    *p++ = 2;
    p = put16(p, 0x0304);
    if (extra) {                   /* 32 opaque bytes, like a GREASE ECH */
        p = put16(p, extra);
        p = put16(p, 32);
        memset(p, 0x5a, 32);
        p += 32;
    }
    put16(ext_len, (size_t)(p - ext_len - 2));
    size_t body = (size_t)(p - hs - 4);
    hs[0] = 1;
    hs[1] = (uint8_t)(body >> 16);
    put16(hs + 2, body);
    size_t hs_len = body + 4, off = 0, o = 0;
    for (int r = 0; r < records; r++) {
        size_t chunk = r == records - 1 ? hs_len - off : hs_len / (size_t)records;
        if (o + 5 + chunk > outlen)
            return 0;
        out[o] = 0x16;
        put16(out + o + 1, 0x0301);
        put16(out + o + 3, chunk);
        memcpy(out + o + 5, hs + off, chunk);
        o += 5 + chunk;
        off += chunk;
    }
    return o;
}

Airlock__Egress__V1__ListConnectionsResponse *netlab_connections(struct rpc_channel *egress,
                                                                 const char *id,
                                                                 uint64_t after_seq)
{
    Airlock__Egress__V1__ListConnectionsRequest req =
        AIRLOCK__EGRESS__V1__LIST_CONNECTIONS_REQUEST__INIT;
    req.sandbox_id = (char *)id;
    req.after_seq = after_seq;
    ProtobufCMessage *resp = NULL;
    assert_int_equal(rpc_unary(egress, EGRESS_METHOD("ListConnections"), &req.base,
                               &airlock__egress__v1__list_connections_response__descriptor, &resp,
                               NULL, NETLAB_CALL_TIMEOUT_MS),
                     GRPC_STATUS_OK);
    return (Airlock__Egress__V1__ListConnectionsResponse *)resp;
}
