/* egress's two-way copy (egress/splice.h) over socketpairs, stepped by
 * poll as the connection loop would: bytes pass both ways and are
 * counted, the first bytes read while deciding go first, a half-close
 * passes on and both ends make it DONE, a reset peer makes it FAILED, and
 * a followed connection's second request naming a denied host is
 * REFUSED before any of it passes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_follow.h"
#include "splice.h"

struct pair {
    int guest_app, guest;       /* the guest's end, egress's end */
    int upstream, server;       /* egress's end, the server's end */
    struct splice *s;
};

static void pair_open(struct pair *p, const char *first, size_t ready, struct http_follow *f)
{
    int g[2], u[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, g), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, u), 0);
    p->guest_app = g[0];
    p->guest = g[1];
    p->upstream = u[0];
    p->server = u[1];
    uint8_t *buf = malloc(SPLICE_BUF);
    assert_non_null(buf);
    size_t n = first ? strlen(first) : 0;
    memcpy(buf, first ? first : "", n);
    p->s = splice_new(p->guest, p->upstream, buf, n, first ? ready : 0, f);
    assert_non_null(p->s);
}

static void pair_close(struct pair *p)
{
    splice_free(p->s);
    close(p->guest_app);
    close(p->guest);
    close(p->upstream);
    close(p->server);
}

/* Steps until nothing is ready for 50 ms or the splice ends. */
static enum splice_state run(struct pair *p)
{
    for (;;) {
        struct pollfd pfd[2] = {
            { .fd = p->guest, .events = (short)splice_interest(p->s, SPLICE_GUEST) },
            { .fd = p->upstream, .events = (short)splice_interest(p->s, SPLICE_UPSTREAM) },
        };
        if (poll(pfd, 2, 50) <= 0)
            return SPLICE_GOING;
        for (int i = 0; i < 2; i++) {
            if (!pfd[i].revents)
                continue;
            bool moved;
            enum splice_state st = splice_step(p->s, i == 0 ? SPLICE_GUEST : SPLICE_UPSTREAM,
                                               (uint32_t)pfd[i].revents, &moved);
            if (st != SPLICE_GOING)
                return st;
        }
    }
}

static void read_exactly(int fd, const char *want)
{
    char buf[256] = "";
    size_t n = strlen(want), got = 0;
    while (got < n) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        assert_int_equal(poll(&pfd, 1, 2000), 1);
        ssize_t r = read(fd, buf + got, n - got);
        assert_true(r > 0);
        got += (size_t)r;
    }
    assert_memory_equal(buf, want, n);
}

static void test_both_ways_first_bytes_first(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, "hello ", 6, NULL);
    assert_int_equal(write(p.guest_app, "world", 5), 5);
    assert_int_equal(run(&p), SPLICE_GOING);
    read_exactly(p.server, "hello world");
    assert_int_equal(write(p.server, "answer", 6), 6);
    assert_int_equal(run(&p), SPLICE_GOING);
    read_exactly(p.guest_app, "answer");
    uint64_t sent, received;
    splice_counts(p.s, &sent, &received);
    assert_int_equal(sent, 11);
    assert_int_equal(received, 6);
    /* The guest half-closes: the server sees the end, still answers. */
    shutdown(p.guest_app, SHUT_WR);
    assert_int_equal(run(&p), SPLICE_GOING);
    char c;
    assert_int_equal(read(p.server, &c, 1), 0);
    assert_int_equal(write(p.server, "bye", 3), 3);
    shutdown(p.server, SHUT_WR);
    assert_int_equal(run(&p), SPLICE_DONE);
    read_exactly(p.guest_app, "bye");
    pair_close(&p);
}

static void test_reset_peer_fails(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, NULL, 0, NULL);
    /* The server goes away entirely while the guest still sends. */
    close(p.server);
    p.server = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(write(p.guest_app, "data", 4), 4);
    assert_int_equal(run(&p), SPLICE_FAILED);
    pair_close(&p);
}

static bool allow_only_a(void *ctx, const char *name)
{
    (void)ctx;
    return name && strcmp(name, "a.test") == 0;
}

static void test_follower_refuses_a_later_request(void **state)
{
    (void)state;
    const char *first = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
    struct http_follow *f = http_follow_new(allow_only_a, NULL);
    assert_non_null(f);
    size_t ready;
    assert_int_equal(http_follow_feed(f, (const uint8_t *)first, strlen(first), &ready),
                     HTTP_FOLLOW_OK);
    struct pair p;
    pair_open(&p, first, ready, f);
    assert_int_equal(run(&p), SPLICE_GOING);
    read_exactly(p.server, first);
    const char *second = "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n";
    assert_int_equal(write(p.guest_app, second, strlen(second)), (ssize_t)strlen(second));
    assert_int_equal(run(&p), SPLICE_REFUSED);
    /* Nothing of the refused request reached the server. */
    char c;
    assert_int_equal(read(p.server, &c, 1), -1);
    pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_ways_first_bytes_first),
        cmocka_unit_test(test_reset_peer_fails),
        cmocka_unit_test(test_follower_refuses_a_later_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
