/* egress's connection loop (egress/conn_loop.h) on socketpairs: a
 * submitted item starts on a loop thread, a watched fd's events reach it
 * with their tag, a deadline fires once and moves when set again, and an
 * item that leaves mid-round gets no more callbacks before its after()
 * runs — where it may be freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "conn_loop.h"

struct probe {
    struct conn_loop_item item;
    int fds[2][2];                    /* two socketpairs: [i][0] watched, [i][1] the peer */
    atomic_int started, ready, expired, left;
    atomic_int last_tag;
    pthread_t start_thread;
    int timeout_ms;                   /* > 0: set at start */
    int64_t started_ms, expired_ms;
    bool leave_on_ready;              /* leave at the first event, both fds ready */
    bool rearm_on_ready;              /* set the deadline again at each event */
    bool clear_on_ready;              /* clear it at each event */
};

static struct probe *of(struct conn_loop_item *it)
{
    return (struct probe *)((char *)it - offsetof(struct probe, item));
}

static void after_leave(struct conn_loop_item *it)
{
    atomic_fetch_add(&of(it)->left, 1);
}

static void on_start(struct conn_loop_item *it)
{
    struct probe *p = of(it);
    p->start_thread = pthread_self();
    p->started_ms = clock_monotonic_ms();
    for (int i = 0; i < 2; i++)
        assert_int_equal(conn_loop_watch(it, p->fds[i][0], i, EPOLLIN), 0);
    if (p->timeout_ms > 0)
        conn_loop_deadline(it, p->timeout_ms);
    atomic_fetch_add(&p->started, 1);
}

static void on_ready(struct conn_loop_item *it, int tag, uint32_t events)
{
    struct probe *p = of(it);
    assert_true(events & EPOLLIN);
    atomic_store(&p->last_tag, tag);
    atomic_fetch_add(&p->ready, 1);
    char b[64];
    if (read(p->fds[tag][0], b, sizeof(b)) < 0)
        fail();
    if (p->rearm_on_ready)
        conn_loop_deadline(it, p->timeout_ms);
    if (p->clear_on_ready)
        conn_loop_deadline(it, -1);
    if (p->leave_on_ready) {
        for (int i = 0; i < 2; i++)
            conn_loop_unwatch(it, p->fds[i][0]);
        conn_loop_leave(it, after_leave);
    }
}

static void on_expired(struct conn_loop_item *it)
{
    struct probe *p = of(it);
    p->expired_ms = clock_monotonic_ms();
    atomic_fetch_add(&p->expired, 1);
}

static const struct conn_loop_ops probe_ops = { on_start, on_ready, on_expired };

static struct probe *probe_new(void)
{
    struct probe *p = calloc(1, sizeof(*p));
    assert_non_null(p);
    p->item.ops = &probe_ops;
    for (int i = 0; i < 2; i++)
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p->fds[i]), 0);
    atomic_store(&p->last_tag, -1);
    return p;
}

static void probe_free(struct probe *p)
{
    for (int i = 0; i < 2; i++) {
        close(p->fds[i][0]);
        close(p->fds[i][1]);
    }
    free(p);
}

/* Polls cond for up to 5 s. */
#define WAIT_FOR(cond)                                                                      \
    do {                                                                                    \
        for (int w_ = 0; w_ < 500 && !(cond); w_++)                                         \
            usleep(10000);                                                                  \
        assert_true(cond);                                                                  \
    } while (0)

static void test_submit_watch_and_tag(void **state)
{
    (void)state;
    char err[256];
    struct conn_loop *l = conn_loop_new(2, NULL, err, sizeof(err));
    assert_non_null(l);
    struct probe *p = probe_new();
    conn_loop_submit(l, &p->item);
    WAIT_FOR(atomic_load(&p->started) == 1);
    assert_false(pthread_equal(p->start_thread, pthread_self()));
    assert_int_equal(write(p->fds[1][1], "x", 1), 1);
    WAIT_FOR(atomic_load(&p->ready) == 1);
    assert_int_equal(atomic_load(&p->last_tag), 1);
    assert_int_equal(write(p->fds[0][1], "y", 1), 1);
    WAIT_FOR(atomic_load(&p->ready) == 2);
    assert_int_equal(atomic_load(&p->last_tag), 0);
    /* Leaves from its own callback, then may go. */
    p->leave_on_ready = true;
    assert_int_equal(write(p->fds[0][1], "z", 1), 1);
    WAIT_FOR(atomic_load(&p->left) == 1);
    conn_loop_free(l);
    probe_free(p);
}

static void test_deadline_fires_once_and_moves(void **state)
{
    (void)state;
    char err[256];
    struct conn_loop *l = conn_loop_new(1, NULL, err, sizeof(err));
    assert_non_null(l);
    struct probe *p = probe_new();
    p->timeout_ms = 150;
    p->rearm_on_ready = true;
    conn_loop_submit(l, &p->item);
    WAIT_FOR(atomic_load(&p->started) == 1);
    /* Activity at 100 ms pushes the deadline to ~250 ms. */
    usleep(100 * 1000);
    assert_int_equal(write(p->fds[0][1], "x", 1), 1);
    WAIT_FOR(atomic_load(&p->expired) == 1);
    assert_true(p->expired_ms - p->started_ms >= 240);
    /* Once: not again without being set again. */
    usleep(300 * 1000);
    assert_int_equal(atomic_load(&p->expired), 1);
    conn_loop_free(l);
    probe_free(p);
}

/* Durations side by side: a short one set after a long one still fires
 * first, and a cleared one never. */
static void test_deadlines_of_several_durations(void **state)
{
    (void)state;
    char err[256];
    struct conn_loop *l = conn_loop_new(1, NULL, err, sizeof(err));
    assert_non_null(l);
    struct probe *slow = probe_new(), *quick = probe_new(), *cleared = probe_new();
    slow->timeout_ms = 600;
    quick->timeout_ms = 100;
    cleared->timeout_ms = 50;
    cleared->clear_on_ready = true;
    assert_int_equal(write(cleared->fds[0][1], "x", 1), 1); /* seen at once */
    conn_loop_submit(l, &slow->item);
    WAIT_FOR(atomic_load(&slow->started) == 1);
    conn_loop_submit(l, &quick->item);
    conn_loop_submit(l, &cleared->item);
    WAIT_FOR(atomic_load(&quick->expired) == 1);
    assert_int_equal(atomic_load(&slow->expired), 0);
    WAIT_FOR(atomic_load(&slow->expired) == 1);
    assert_true(slow->expired_ms - slow->started_ms >= 590);
    assert_int_equal(atomic_load(&cleared->ready), 1);
    assert_int_equal(atomic_load(&cleared->expired), 0);
    conn_loop_free(l);
    probe_free(slow);
    probe_free(quick);
    probe_free(cleared);
}

/* Both fds ready in one round; the first callback leaves: the second
 * event is dropped, after() runs once. */
static void test_leave_drops_the_rounds_other_events(void **state)
{
    (void)state;
    char err[256];
    struct conn_loop *l = conn_loop_new(1, NULL, err, sizeof(err));
    assert_non_null(l);
    for (int round = 0; round < 50; round++) {
        struct probe *p = probe_new();
        assert_int_equal(write(p->fds[0][1], "a", 1), 1);
        assert_int_equal(write(p->fds[1][1], "b", 1), 1);
        p->leave_on_ready = true;
        conn_loop_submit(l, &p->item);
        WAIT_FOR(atomic_load(&p->left) == 1);
        usleep(1000);
        assert_int_equal(atomic_load(&p->ready), 1);
        probe_free(p);
    }
    conn_loop_free(l);
}

static void test_bad_namespace_fails_cleanly(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(conn_loop_new(2, "/nonexistent/netns", err, sizeof(err)));
    assert_non_null(strstr(err, "connection loop"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_submit_watch_and_tag),
        cmocka_unit_test(test_deadline_fires_once_and_moves),
        cmocka_unit_test(test_deadlines_of_several_durations),
        cmocka_unit_test(test_leave_drops_the_rounds_other_events),
        cmocka_unit_test(test_bad_namespace_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
