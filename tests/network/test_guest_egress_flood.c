/* One sandbox's connection flood does not starve another (real guests,
 * support/guest_lab.h). A second sandbox opens far more connections than
 * its share — held open to a sink server of this test in netlab's inet
 * namespace, and silent ones egress must sniff — while the lab's sandbox
 * resolves and fetches: egress resets what is over the flooder's share
 * (too_many_connections, too_many_pending), the other sandbox's DNS and
 * HTTP work throughout, and once the flood ends the flooder connects
 * again. The shares are egress's defaults (256 open, 32 being decided). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest_lab.h"
#include "netlab.h"

#define SINK_PORT "8099"
#define SINK_MAX 2048
#define FLOOD_CONNECTIONS 600
#define SHARE_OPEN 256
#define SHARE_PENDING 32
#define SILENT_CONNECTIONS 150

static char flooder[32];

/* The sink: a listener in netlab's inet namespace, on a thread of this
 * process (it ends with it), accepting and holding every connection until
 * its peer (egress, for the guest) closes it. */
static struct {
    int fd;
    int held[SINK_MAX];
    size_t n_held;
    pthread_t thread;
    atomic_bool running;
} sink = { .fd = -1 };

static void *sink_main(void *arg)
{
    (void)arg;
    static struct pollfd pfd[SINK_MAX + 1];
    while (sink.running) {
        pfd[0] = (struct pollfd){ .fd = sink.fd, .events = POLLIN };
        for (size_t i = 0; i < sink.n_held; i++)
            pfd[i + 1] = (struct pollfd){ .fd = sink.held[i], .events = POLLIN };
        if (poll(pfd, sink.n_held + 1, 200) < 0)
            return NULL;
        /* Closed by the peer: gone (from the end, so indexes hold). */
        for (size_t i = sink.n_held; i-- > 0;) {
            char b[256];
            if ((pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) &&
                read(sink.held[i], b, sizeof(b)) <= 0) {
                close(sink.held[i]);
                sink.held[i] = sink.held[--sink.n_held];
            }
        }
        if (pfd[0].revents & POLLIN) {
            int fd = accept4(sink.fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0 && sink.n_held < SINK_MAX)
                sink.held[sink.n_held++] = fd;
            else if (fd >= 0)
                close(fd);
        }
    }
    return NULL;
}

static void sink_stop(void)
{
    if (sink.running) {
        sink.running = false;
        pthread_join(sink.thread, NULL);
    }
    for (size_t i = 0; i < sink.n_held; i++)
        close(sink.held[i]);
    sink.n_held = 0;
    if (sink.fd >= 0)
        close(sink.fd);
    sink.fd = -1;
}

/* In the flooder: opens n connections to host:port (sending first, when
 * given, on each), waits for /tmp/stop, then prints how many are still
 * open and how many egress reset. */
#define FLOOD_PY                                                                                   \
    "import os, socket, sys, time\n"                                                               \
    "host, port, n, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]\n"       \
    "socks = []\n"                                                                                 \
    "for i in range(n):\n"                                                                         \
    "    try:\n"                                                                                   \
    "        s = socket.create_connection((host, port), timeout=10)\n"                             \
    "        if first != '-':\n"                                                                   \
    "            s.sendall(first.encode())\n"                                                     \
    "        socks.append(s)\n"                                                                    \
    "    except OSError:\n"                                                                        \
    "        pass\n"                                                                               \
    "open('/tmp/flooding', 'w').write(str(len(socks)))\n"                                        \
    "while not os.path.exists('/tmp/stop'):\n"                                                     \
    "    time.sleep(0.05)\n"                                                                       \
    "alive = reset = 0\n"                                                                          \
    "for s in socks:\n"                                                                            \
    "    s.setblocking(False)\n"                                                                   \
    "    try:\n"                                                                                   \
    "        alive += s.recv(1, socket.MSG_PEEK) != b''\n"                                         \
    "    except BlockingIOError:\n"                                                                \
    "        alive += 1\n"                                                                         \
    "    except OSError:\n"                                                                        \
    "        reset += 1\n"                                                                         \
    "print(f'alive={alive} reset={reset + n - len(socks)}', flush=True)\n"

static int flooder_setup(void **state)
{
    (void)state;
    static char *domains[] = { "allowed.test" };
    static char *cidrs[] = { NETLAB_WEB2 "/32" };
    static uint32_t ports[] = { 80, 8099 };
    Airlock__Egress__V1__Policy p = AIRLOCK__EGRESS__V1__POLICY__INIT;
    p.n_allow_domains = 1;
    p.allow_domains = domains;
    p.n_allow_cidrs = 1;
    p.allow_cidrs = cidrs;
    p.n_allow_ports = 2;
    p.allow_ports = ports;
    snprintf(flooder, sizeof(flooder), "flood-%d", (int)getpid());
    if (guest_lab_create_sandbox(flooder, &p) < 0)
        return -1;
    if ((sink.fd = netlab_inet_listen(NETLAB_WEB2, atoi(SINK_PORT), 4096)) < 0)
        return -1;
    sink.running = true;
    if (pthread_create(&sink.thread, NULL, sink_main, NULL) != 0) {
        sink.running = false;
        return -1;
    }
    /* Wait until it listens: the flooder's first connection must land. */
    for (int i = 0; i < 100; i++) {
        char out[64];
        if (guest_sh_in(flooder, "python3 -c 'import socket; socket.create_connection((\""
                                 NETLAB_WEB2 "\", " SINK_PORT "), timeout=5)'",
                        out, sizeof(out)) == 0)
            return 0;
        usleep(100 * 1000);
    }
    return -1;
}

static int flooder_teardown(void **state)
{
    (void)state;
    int rc = 0;
    if (flooder[0] && itest_delete_sandbox(&lab.vh, flooder) != GRPC_STATUS_OK)
        rc = -1;
    sink_stop();
    return rc;
}

/* Starts the flood in the background and waits until every connection
 * was tried; the number the guest saw connect, from /tmp/flooding. */
static void start_flood(const char *host, const char *port, int n, const char *first)
{
    char script[4096], out[64];
    snprintf(script, sizeof(script),
             "rm -f /tmp/stop /tmp/flooding && cat > /tmp/flood.py <<'EOF'\n" FLOOD_PY "EOF\n"
             "setsid python3 /tmp/flood.py %s %s %d '%s' >/tmp/flood.out 2>&1 </dev/null &\n"
             "for i in $(seq 1200); do [ -s /tmp/flooding ] && break; sleep 0.1; done; "
             "cat /tmp/flooding",
             host, port, n, first);
    assert_int_equal(guest_sh_in(flooder, script, out, sizeof(out)), 0);
    assert_true(atoi(out) > 0);
}

/* Ends the flood: "alive=N reset=M" as the flooder counted them. */
static void stop_flood(int *alive, int *reset)
{
    char out[128];
    assert_int_equal(guest_sh_in(flooder,
                                 "touch /tmp/stop; for i in $(seq 600); do grep -q alive "
                                 "/tmp/flood.out && break; sleep 0.1; done; cat /tmp/flood.out",
                                 out, sizeof(out)),
                     0);
    assert_int_equal(sscanf(out, "alive=%d reset=%d", alive, reset), 2);
}

/* What the other sandbox does meanwhile: resolve and fetch. */
static void expect_other_sandbox_works(void)
{
    char out[512];
    assert_int_equal(guest_sh("getent hosts allowed.test", out, sizeof(out)), 0);
    assert_non_null(strstr(out, NETLAB_WEB1));
    assert_int_equal(guest_sh(GUEST_CURL "http://allowed.test/", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "HELLO " NETLAB_WEB1 ":80"));
}

/* The flood is over: once egress has seen its connections close, the
 * flooder's share is free again and its own requests go. */
static void expect_share_free_again(void)
{
    char out[512];
    assert_int_equal(guest_sh_in(flooder,
                                 "for i in $(seq 60); do " GUEST_CURL "http://allowed.test/ "
                                 "2>/dev/null && exit 0; sleep 0.5; done; exit 1",
                                 out, sizeof(out)),
                     0);
    assert_non_null(strstr(out, "HELLO " NETLAB_WEB1 ":80"));
}

static void test_open_connections_over_the_share_are_reset(void **state)
{
    (void)state;
    uint64_t mark = guest_log_mark_in(flooder);
    start_flood(NETLAB_WEB2, SINK_PORT, FLOOD_CONNECTIONS, "-");
    expect_other_sandbox_works();
    int alive, reset;
    stop_flood(&alive, &reset);
    fprintf(stderr, "flood of %d: alive=%d reset=%d\n", FLOOD_CONNECTIONS, alive, reset);
    assert_true(alive <= SHARE_OPEN);
    assert_true(alive >= SHARE_OPEN / 2); /* the share itself was served */
    assert_int_equal(alive + reset, FLOOD_CONNECTIONS);
    assert_true(guest_logged_in(flooder, mark, "tcp", NETLAB_WEB2, false, "too_many_connections"));
    expect_share_free_again();
}

static void test_silent_connections_over_the_share_are_reset(void **state)
{
    (void)state;
    /* Silent connections to a name-ruled host: egress must read their
     * first bytes, so each waits for the sniff timeout. */
    uint64_t mark = guest_log_mark_in(flooder);
    start_flood(NETLAB_WEB1, "80", SILENT_CONNECTIONS, "-");
    expect_other_sandbox_works();
    int alive, reset;
    stop_flood(&alive, &reset);
    fprintf(stderr, "silent flood of %d: alive=%d reset=%d\n", SILENT_CONNECTIONS, alive, reset);
    assert_true(reset >= SILENT_CONNECTIONS - SHARE_PENDING);
    assert_true(guest_logged_in(flooder, mark, "tcp", NETLAB_WEB1, false, "too_many_pending"));
    expect_share_free_again();
}

int main(void)
{
    /* The flooder and the sink live across both tests. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_open_connections_over_the_share_are_reset, flooder_setup),
        cmocka_unit_test_teardown(test_silent_connections_over_the_share_are_reset,
                                  flooder_teardown),
    };
    return GUEST_LAB_RUN(tests);
}
