#include "bench_egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_egress_held.h"
#include "bench_egress_tls.h"
#include "dns_wire.h"
#include "egress.h"
#include "egress.pb-c.h"
#include "log.h"
#include "netlab.h"
#include "netns.h"
#include "policy.h"
#include "sandbox_net.h"

#define CONNECTS 200
/* Within one sandbox's share (256), room left for the measured ones. */
#define HELD 250
#define QUERIES 300
#define BULK_RUNS 3
#define BULK_BYTES (256u << 20)
#define BULK_PORT 8181
#define IO_TIMEOUT_MS 30000
#define REQUEST "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"

static struct bench_series connect_via = { .name = "egress connect+GET via egress", .unit = "ms" };
static struct bench_series connect_direct = { .name = "egress connect+GET direct (ref)",
                                              .unit = "ms" };
static struct bench_series connect_ratio = { .name = "egress connect ratio", .unit = "x" };
static struct bench_series connect_held = { .name = "egress connect+GET, 250 held open",
                                            .unit = "ms" };
static struct bench_series held_ratio = { .name = "egress connect ratio, 250 held open",
                                          .unit = "x" };
static struct bench_series held_threads = { .name = "egress threads added by 250 held open",
                                            .unit = "threads" };
static struct bench_series dns_allowed = { .name = "egress DNS allowed (upstream)", .unit = "ms" };
static struct bench_series dns_denied = { .name = "egress DNS denied (local)", .unit = "ms" };
static struct bench_series dns_direct = { .name = "egress DNS direct (ref)", .unit = "ms" };
static struct bench_series dns_ratio = { .name = "egress DNS ratio (allowed)", .unit = "x" };
static struct bench_series bulk_via = { .name = "egress 256 MiB via egress", .unit = "MB/s" };
static struct bench_series bulk_direct = { .name = "egress 256 MiB direct (ref)", .unit = "MB/s" };
static struct bench_series bulk_ratio = { .name = "egress throughput ratio", .unit = "x" };
static struct bench_series tls_via = { .name = "egress 256 MiB HTTPS intercepted via egress",
                                       .unit = "MB/s" };
static struct bench_series tls_direct = { .name = "egress 256 MiB HTTPS direct (ref)",
                                          .unit = "MB/s" };
static struct bench_series tls_ratio = { .name = "egress intercepted throughput ratio",
                                         .unit = "x" };
static struct bench_series inspect_via = { .name = "egress 256 MiB HTTPS inspected (inspect_tls)",
                                           .unit = "MB/s" };
static struct bench_series tls_spliced = { .name = "egress 256 MiB HTTPS spliced (ref)",
                                           .unit = "MB/s" };
static struct bench_series inspect_ratio = { .name = "egress inspected/spliced HTTPS ratio",
                                             .unit = "x" };
#define INSPECT_PROJECT "bench-inspect" /* no secrets */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int addr_of(const char *ip, uint16_t port, struct sockaddr_in *sa)
{
    *sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port) };
    return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

/* One measured client loop, run on a thread inside a namespace. */
struct client_job {
    const char *ip;
    uint16_t port;
    const char *name;      /* DNS: the question */
    int runs;
    struct bench_series *s;
    int failed;
    const char *ca_pem;    /* bulk over HTTPS trusting this CA; NULL = plain */
};

/* Connects, sends REQUEST and reads to EOF; the bytes read, or -1. */
static long long exchange(const char *ip, uint16_t port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = { .tv_sec = IO_TIMEOUT_MS / 1000 };
    long long total = -1;
    char *buf = malloc(1 << 20);
    if (!buf || fd < 0 || addr_of(ip, port, &sa) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        send(fd, REQUEST, strlen(REQUEST), MSG_NOSIGNAL) < 0)
        goto out;
    total = 0;
    for (;;) {
        ssize_t n = read(fd, buf, 1 << 20);
        if (n < 0) {
            total = -1;
            break;
        }
        if (n == 0)
            break;
        total += n;
    }
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    return total;
}

static int connect_loop(void *arg)
{
    struct client_job *j = arg;
    for (int i = 0; i < j->runs && !j->failed; i++) {
        double t0 = now_ms();
        if (exchange(j->ip, j->port) <= 0)
            j->failed = 1;
        bench_series_add(j->s, now_ms() - t0);
    }
    return 0;
}

static int bulk_loop(void *arg)
{
    struct client_job *j = arg;
    for (int i = 0; i < j->runs && !j->failed; i++) {
        double t0 = now_ms();
        long long got = j->ca_pem ? bench_tls_fetch(j->ip, j->port, j->ca_pem)
                                  : exchange(j->ip, j->port);
        if (got != BULK_BYTES)
            j->failed = 1;
        bench_series_add(j->s, BULK_BYTES / 1e6 / ((now_ms() - t0) / 1e3));
    }
    return 0;
}

static int dns_loop(void *arg)
{
    struct client_job *j = arg;
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || addr_of(j->ip, 53, &sa) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        j->failed = 1;
        goto out;
    }
    for (int i = 0; i < j->runs && !j->failed; i++) {
        uint8_t q[DNS_MAX_UDP], r[DNS_MAX_UDP];
        uint16_t id = (uint16_t)(i + 1);
        size_t ql = dns_build_query(id, j->name, DNS_TYPE_A, q, sizeof(q));
        double t0 = now_ms();
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        ssize_t n = -1;
        if (send(fd, q, ql, 0) == (ssize_t)ql && poll(&pfd, 1, IO_TIMEOUT_MS) == 1)
            n = recv(fd, r, sizeof(r), 0);
        uint32_t addrs[4], ttl;
        size_t got;
        int rcode;
        if (n <= 0 || dns_parse_reply_a(r, (size_t)n, id, addrs, 4, &got, &ttl, &rcode) < 0)
            j->failed = 1;
        bench_series_add(j->s, now_ms() - t0);
    }
out:
    if (fd >= 0)
        close(fd);
    return 0;
}

static int run_client(const char *ns, int (*fn)(void *), struct client_job *j)
{
    char err[256] = "";
    if (netns_run(netlab_ns_path(ns), fn, j, err, sizeof(err)) < 0 || j->failed) {
        fprintf(stderr, "bench egress: %s from %s to %s failed %s\n", j->s->name, ns, j->ip,
                err);
        return -1;
    }
    return 0;
}

/* ---- the bulk server: BULK_BYTES for each connection, in the inet ns ---- */

struct bulk_server {
    int fd;
    int connections;
    pthread_t thread;
};

static void *bulk_serve(void *arg)
{
    struct bulk_server *b = arg;
    static char block[1 << 20];
    for (int c = 0; c < b->connections; c++) {
        struct pollfd pfd = { .fd = b->fd, .events = POLLIN };
        if (poll(&pfd, 1, IO_TIMEOUT_MS) != 1)
            return NULL;
        int fd = accept4(b->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        char head[512];
        if (read(fd, head, sizeof(head)) > 0)
            for (size_t sent = 0; sent < BULK_BYTES;) {
                ssize_t n = send(fd, block, sizeof(block), MSG_NOSIGNAL);
                if (n <= 0)
                    break;
                sent += (size_t)n;
            }
        close(fd);
    }
    return NULL;
}

/* ---- egress, in process, on netlab's sandbox namespace ---- */

/* Allows allowed.test and the TLS host. */
static struct egress_policy *bench_policy(bool inspect_tls)
{
    char err[256];
    char *allow[] = { "allowed.test", BENCH_TLS_HOST };
    Airlock__Egress__V1__Policy msg = AIRLOCK__EGRESS__V1__POLICY__INIT;
    msg.n_allow_domains = 2;
    msg.allow_domains = allow;
    msg.inspect_tls = inspect_tls;
    struct egress_policy *p = egress_policy_from_proto(&msg, err, sizeof(err));
    if (!p)
        fprintf(stderr, "bench egress: policy: %s\n", err);
    return p;
}

/* egress with credential injection from t's vault; *ca_pem (malloc'd) is
 * the sandbox CA a guest trusts. */
static struct egress *egress_up(const struct bench_tls *t, char **ca_pem)
{
    char err[512], ns[256];
    struct airlock_error e = { 0 };
    struct in_addr dns;
    inet_pton(AF_INET, NETLAB_DNS, &dns);
    struct egress_config cfg = { .uplink_netns = netlab_ns_path(NETLAB_UPLINK_NS),
                                 .upstream_dns_addr = ntohl(dns.s_addr),
                                 .vault_addr = t->vault.addr,
                                 .upstream_ca_file = t->upstream_ca_file };
    struct egress *eg = egress_new(&cfg, err, sizeof(err));
    if (!eg) {
        fprintf(stderr, "bench egress: %s\n", err);
        return NULL;
    }
    struct egress_policy *p = bench_policy(false);
    if (!p || sandbox_net_netns_path(NETLAB_SANDBOX_ID, ns, sizeof(ns)) < 0 ||
        egress_attach(eg, NETLAB_SANDBOX_ID, ns, p, BENCH_TLS_PROJECT, ca_pem, &e) < 0 ||
        !*ca_pem) {
        fprintf(stderr, "bench egress: attach: %s\n", e.message);
        egress_free(eg);
        return NULL;
    }
    return eg;
}

static void ratio(struct bench_series *r, const struct bench_series *a,
                  const struct bench_series *b)
{
    double base = bench_series_percentile(b, 50);
    if (base > 0)
        bench_series_add(r, bench_series_percentile(a, 50) / base);
}

/* 256 MiB over HTTPS: through egress, which intercepts (the host has a
 * credential binding: TLS terminated with the sandbox CA, the request
 * injected, TLS again upstream), and directly. */
static int measure_tls(struct bench_tls *t, const char *sandbox_ca)
{
    struct client_job jobs[] = {
        { NETLAB_GUEST_GW, 0, BENCH_TLS_HOST, 1, &dns_allowed, 0, NULL },
        { NETLAB_WEB2, BENCH_TLS_PORT, NULL, BULK_RUNS, &tls_via, 0, sandbox_ca },
        { NETLAB_WEB2, BENCH_TLS_PORT, NULL, BULK_RUNS, &tls_direct, 0, t->upstream_ca_pem },
    };
    if (run_client(NETLAB_GUEST_NS, dns_loop, &jobs[0]) < 0 ||
        bench_tls_serve(t, 2 * BULK_RUNS, BULK_BYTES) < 0)
        return -1;
    int rc = run_client(NETLAB_GUEST_NS, bulk_loop, &jobs[1]) < 0 ||
                     run_client(NETLAB_UPLINK_NS, bulk_loop, &jobs[2]) < 0
                 ? -1
                 : 0;
    bench_tls_join(t);
    int injected = bench_tls_injections(t);
    if (rc == 0 && injected != BULK_RUNS) {
        fprintf(stderr, "bench egress: %d requests through egress, %d injected: not intercepted\n",
                BULK_RUNS, injected);
        rc = -1;
    }
    return rc;
}

/* The same HTTPS bulk from a sandbox of a project without secrets (the
 * sandbox attached again): with inspect_tls egress terminates TLS both
 * ways without injecting; without, it splices the guest's own TLS. */
static int measure_inspect(struct egress *eg, struct bench_tls *t)
{
    char ns[256], *ca_pem = NULL;
    struct airlock_error e = { 0 };
    struct egress_policy *p = bench_policy(true);
    if (!p || egress_detach(eg, NETLAB_SANDBOX_ID, &e) < 0 ||
        sandbox_net_netns_path(NETLAB_SANDBOX_ID, ns, sizeof(ns)) < 0 ||
        egress_attach(eg, NETLAB_SANDBOX_ID, ns, p, INSPECT_PROJECT, &ca_pem, &e) < 0) {
        fprintf(stderr, "bench egress: attach with inspect_tls: %s\n", e.message);
        free(ca_pem);
        return -1;
    }
    struct client_job jobs[] = {
        { NETLAB_GUEST_GW, 0, BENCH_TLS_HOST, 1, &dns_allowed, 0, NULL },
        { NETLAB_WEB2, BENCH_TLS_PORT, NULL, BULK_RUNS, &inspect_via, 0, ca_pem },
        { NETLAB_WEB2, BENCH_TLS_PORT, NULL, BULK_RUNS, &tls_spliced, 0, t->upstream_ca_pem },
    };
    int rc = -1;
    if (run_client(NETLAB_GUEST_NS, dns_loop, &jobs[0]) < 0 ||
        bench_tls_serve(t, 2 * BULK_RUNS, BULK_BYTES) < 0)
        goto out;
    if (run_client(NETLAB_GUEST_NS, bulk_loop, &jobs[1]) == 0 &&
        (p = bench_policy(false)) &&
        egress_set_policy(eg, NETLAB_SANDBOX_ID, p, INSPECT_PROJECT, NULL, &e) == 0 &&
        run_client(NETLAB_GUEST_NS, bulk_loop, &jobs[2]) == 0)
        rc = 0;
    bench_tls_join(t);
out:
    free(ca_pem);
    return rc;
}

static int measure(void)
{
    struct client_job jobs[] = {
        { NETLAB_GUEST_GW, 0, "allowed.test", QUERIES, &dns_allowed, 0, NULL },
        { NETLAB_GUEST_GW, 0, "denied.test", QUERIES, &dns_denied, 0, NULL },
        { NETLAB_DNS, 0, "allowed.test", QUERIES, &dns_direct, 0, NULL },
        { NETLAB_WEB1, 80, NULL, CONNECTS, &connect_via, 0, NULL },
        { NETLAB_WEB1, 80, NULL, CONNECTS, &connect_direct, 0, NULL },
        { NETLAB_WEB1, BULK_PORT, NULL, BULK_RUNS, &bulk_via, 0, NULL },
        { NETLAB_WEB1, BULK_PORT, NULL, BULK_RUNS, &bulk_direct, 0, NULL },
    };
    /* The allowed name's DNS answer first: egress lets a connection claim
     * a name only for an address it answered with. */
    if (run_client(NETLAB_GUEST_NS, dns_loop, &jobs[0]) < 0 ||
        run_client(NETLAB_GUEST_NS, dns_loop, &jobs[1]) < 0 ||
        run_client(NETLAB_UPLINK_NS, dns_loop, &jobs[2]) < 0 ||
        run_client(NETLAB_GUEST_NS, connect_loop, &jobs[3]) < 0 ||
        run_client(NETLAB_UPLINK_NS, connect_loop, &jobs[4]) < 0)
        return -1;
    /* The same connect + GET beside HELD spliced connections of the same
     * sandbox: neither a thread each nor a slower next connection. */
    struct client_job held_job = { NETLAB_WEB1, 80, NULL, CONNECTS, &connect_held, 0, NULL };
    int threads_before = process_threads();
    struct held_conns *held = held_conns_open(HELD);
    if (!held)
        return -1;
    bench_series_add(&held_threads, process_threads() - threads_before);
    int held_rc = run_client(NETLAB_GUEST_NS, connect_loop, &held_job);
    held_conns_close(held);
    if (held_rc < 0)
        return -1;
    struct bulk_server b = { .fd = -1, .connections = 2 * BULK_RUNS };
    if ((b.fd = netlab_inet_listen(NETLAB_WEB1, BULK_PORT, 8)) < 0 ||
        pthread_create(&b.thread, NULL, bulk_serve, &b) != 0) {
        fprintf(stderr, "bench egress: bulk server: %s\n", strerror(errno));
        if (b.fd >= 0)
            close(b.fd);
        return -1;
    }
    int rc = run_client(NETLAB_GUEST_NS, bulk_loop, &jobs[5]) < 0 ||
                     run_client(NETLAB_UPLINK_NS, bulk_loop, &jobs[6]) < 0
                 ? -1
                 : 0;
    /* A failed client leaves the server waiting: its poll ends it. */
    pthread_join(b.thread, NULL);
    close(b.fd);
    return rc;
}

int bench_egress(struct bench_series **out, size_t *n)
{
    *n = 0;
    /* egress in this process logs every connection: only its problems. */
    log_init("bench-egress", LOG_WARN);
    struct bench_tls tls;
    char *sandbox_ca = NULL;
    int rc = -1;
    if (bench_tls_setup(&tls) < 0 || netlab_up() < 0)
        goto out;
    struct egress *eg = egress_up(&tls, &sandbox_ca);
    rc = eg && measure() == 0 && measure_tls(&tls, sandbox_ca) == 0 &&
                 measure_inspect(eg, &tls) == 0
             ? 0
             : -1;
    egress_free(eg);
    netlab_down();
out:
    bench_tls_teardown(&tls);
    free(sandbox_ca);
    if (rc < 0)
        return -1;
    ratio(&connect_ratio, &connect_via, &connect_direct);
    ratio(&held_ratio, &connect_held, &connect_via);
    ratio(&dns_ratio, &dns_allowed, &dns_direct);
    ratio(&bulk_ratio, &bulk_via, &bulk_direct);
    ratio(&tls_ratio, &tls_via, &tls_direct);
    ratio(&inspect_ratio, &inspect_via, &tls_spliced);
    struct bench_series *all[] = { &connect_via,  &connect_direct, &connect_ratio, &connect_held,
                                   &held_ratio,   &held_threads,   &dns_allowed,   &dns_denied,
                                   &dns_direct,   &dns_ratio,      &bulk_via,      &bulk_direct,
                                   &bulk_ratio,   &tls_via,        &tls_direct,    &tls_ratio,
                                   &inspect_via,  &tls_spliced,    &inspect_ratio };
    for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
        out[(*n)++] = all[i];
    return 0;
}
