#include "conn_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "netns.h"

#define EVENTS_PER_WAIT 256
/* Distinct deadline durations kept in order (sniff, connect, idle). More
 * still work: they share the last list, inserted in order. */
#define TIMER_LISTS 4
#define WAKE_TAG ((uint64_t)1)

struct conn_timer_list {
    int duration_ms;                  /* -1: unused */
    struct conn_loop_item *head, *tail;
};

struct conn_loop_thread {
    struct conn_loop *loop;
    pthread_t thread;
    bool started;
    int epoll_fd;
    int wake_fd;                      /* eventfd: submissions, stop */
    pthread_mutex_t lock;             /* submitted, stopping */
    struct conn_loop_item *submitted;
    bool stopping;
    struct conn_timer_list timers[TIMER_LISTS];
    struct conn_loop_item *leaving;   /* their after() runs at the round's end */
    /* Start-up: whether the thread entered the namespace. */
    int start_rc;
    char start_err[256];
    bool start_done;
    pthread_cond_t start_cond;
};

struct conn_loop {
    const char *uplink_netns;         /* only while starting */
    unsigned n_threads;
    atomic_uint next;                 /* round robin */
    struct conn_loop_thread threads[];
};

/* epoll data: the item's address with the fd's tag in its low bit (items
 * are pointer-aligned), or WAKE_TAG alone for the eventfd. */
static uint64_t pack(struct conn_loop_item *it, int tag)
{
    return (uint64_t)(uintptr_t)it | (uint64_t)(tag & 1) << 1;
}

static struct conn_loop_item *unpack(uint64_t data, int *tag)
{
    *tag = (int)(data >> 1 & 1);
    return (struct conn_loop_item *)(uintptr_t)(data & ~(uint64_t)3);
}

static void timer_unlink(struct conn_loop_item *it)
{
    struct conn_timer_list *tl = it->timers;
    if (!tl)
        return;
    if (it->timer_prev)
        it->timer_prev->timer_next = it->timer_next;
    else
        tl->head = it->timer_next;
    if (it->timer_next)
        it->timer_next->timer_prev = it->timer_prev;
    else
        tl->tail = it->timer_prev;
    it->timer_prev = it->timer_next = NULL;
    it->timers = NULL;
}

static struct conn_timer_list *timer_list_for(struct conn_loop_thread *t, int duration_ms)
{
    struct conn_timer_list *unused = NULL;
    for (int i = 0; i < TIMER_LISTS; i++) {
        if (t->timers[i].duration_ms == duration_ms)
            return &t->timers[i];
        if (!unused && !t->timers[i].head)
            unused = &t->timers[i];
    }
    if (unused) {
        unused->duration_ms = duration_ms;
        return unused;
    }
    return &t->timers[TIMER_LISTS - 1];
}

void conn_loop_deadline(struct conn_loop_item *it, int timeout_ms)
{
    timer_unlink(it);
    if (timeout_ms < 0)
        return;
    struct conn_timer_list *tl = timer_list_for(it->thread, timeout_ms);
    it->deadline_ms = clock_monotonic_ms() + timeout_ms;
    /* From the tail: for a list of one duration the new deadline is the
     * latest, so this stops at once. */
    struct conn_loop_item *after = tl->tail;
    while (after && after->deadline_ms > it->deadline_ms)
        after = after->timer_prev;
    it->timer_prev = after;
    it->timer_next = after ? after->timer_next : tl->head;
    if (it->timer_next)
        it->timer_next->timer_prev = it;
    else
        tl->tail = it;
    if (after)
        after->timer_next = it;
    else
        tl->head = it;
    it->timers = tl;
}

int conn_loop_watch(struct conn_loop_item *it, int fd, int tag, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.u64 = pack(it, tag) };
    if (epoll_ctl(it->thread->epoll_fd, EPOLL_CTL_MOD, fd, &ev) == 0)
        return 0;
    if (errno != ENOENT)
        return -1;
    return epoll_ctl(it->thread->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

void conn_loop_unwatch(struct conn_loop_item *it, int fd)
{
    epoll_ctl(it->thread->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

void conn_loop_submit(struct conn_loop *l, struct conn_loop_item *it)
{
    if (!it->thread)
        it->thread = &l->threads[atomic_fetch_add(&l->next, 1) % l->n_threads];
    struct conn_loop_thread *t = it->thread;
    pthread_mutex_lock(&t->lock);
    it->submit_next = t->submitted;
    t->submitted = it;
    pthread_mutex_unlock(&t->lock);
    uint64_t one = 1;
    if (write(t->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        log_error("egress connection loop wake failed", "error=\"%s\"", strerror(errno));
}

void conn_loop_leave(struct conn_loop_item *it, void (*after)(struct conn_loop_item *it))
{
    timer_unlink(it);
    it->after = after;
    it->leave_next = it->thread->leaving;
    it->thread->leaving = it;
}

static void run_leaving(struct conn_loop_thread *t)
{
    while (t->leaving) {
        struct conn_loop_item *it = t->leaving;
        t->leaving = it->leave_next;
        void (*after)(struct conn_loop_item *) = it->after;
        it->after = NULL;
        it->leave_next = NULL;
        after(it); /* may free it, or submit it again */
    }
}

/* Runs what other threads submitted; false once the loop is stopping. */
static bool take_submitted(struct conn_loop_thread *t)
{
    uint64_t n;
    if (read(t->wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
        return true;
    pthread_mutex_lock(&t->lock);
    struct conn_loop_item *list = t->submitted;
    t->submitted = NULL;
    bool stopping = t->stopping;
    pthread_mutex_unlock(&t->lock);
    while (list) {
        struct conn_loop_item *it = list;
        list = it->submit_next;
        it->submit_next = NULL;
        it->ops->start(it);
    }
    return !stopping;
}

/* How long epoll may sleep: until the earliest deadline. */
static int wait_ms(struct conn_loop_thread *t, int64_t now)
{
    int64_t soonest = -1;
    for (int i = 0; i < TIMER_LISTS; i++) {
        struct conn_loop_item *h = t->timers[i].head;
        if (h && (soonest < 0 || h->deadline_ms < soonest))
            soonest = h->deadline_ms;
    }
    if (soonest < 0)
        return -1;
    return soonest <= now ? 0 : (int)(soonest - now > 60000 ? 60000 : soonest - now);
}

static void fire_expired(struct conn_loop_thread *t, int64_t now)
{
    for (int i = 0; i < TIMER_LISTS; i++) {
        struct conn_loop_item *h;
        while ((h = t->timers[i].head) && h->deadline_ms <= now) {
            timer_unlink(h);
            h->ops->expired(h); /* may make it leave */
        }
    }
}

static void thread_started(struct conn_loop_thread *t, int rc)
{
    pthread_mutex_lock(&t->lock);
    t->start_rc = rc;
    t->start_done = true;
    pthread_cond_signal(&t->start_cond);
    pthread_mutex_unlock(&t->lock);
}

static void *loop_main(void *arg)
{
    struct conn_loop_thread *t = arg;
    const char *ns = t->loop->uplink_netns;
    if (ns && netns_enter(ns, t->start_err, sizeof(t->start_err)) < 0) {
        thread_started(t, -1);
        return NULL;
    }
    thread_started(t, 0);
    struct epoll_event evs[EVENTS_PER_WAIT];
    for (;;) {
        int n = epoll_wait(t->epoll_fd, evs, EVENTS_PER_WAIT, wait_ms(t, clock_monotonic_ms()));
        if (n < 0 && errno != EINTR) {
            log_error("egress connection loop failed", "error=\"%s\"", strerror(errno));
            return NULL;
        }
        bool woken = false;
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u64 == WAKE_TAG) {
                woken = true;
                continue;
            }
            int tag;
            struct conn_loop_item *it = unpack(evs[i].data.u64, &tag);
            /* An earlier callback of this round may have ended it: it is
             * freed only after the round (run_leaving). */
            if (!it->after)
                it->ops->ready(it, tag, evs[i].events);
        }
        fire_expired(t, clock_monotonic_ms());
        bool go_on = !woken || take_submitted(t);
        run_leaving(t);
        if (!go_on)
            return NULL;
    }
}

static void thread_close(struct conn_loop_thread *t)
{
    if (t->epoll_fd >= 0)
        close(t->epoll_fd);
    if (t->wake_fd >= 0)
        close(t->wake_fd);
    pthread_cond_destroy(&t->start_cond);
    pthread_mutex_destroy(&t->lock);
}

static int thread_open(struct conn_loop *l, struct conn_loop_thread *t, char *err, size_t errlen)
{
    t->loop = l;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->start_cond, NULL);
    for (int i = 0; i < TIMER_LISTS; i++)
        t->timers[i].duration_ms = -1;
    t->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = WAKE_TAG };
    if (t->epoll_fd < 0 || t->wake_fd < 0 ||
        epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, t->wake_fd, &ev) < 0) {
        snprintf(err, errlen, "connection loop: %s", strerror(errno));
        return -1;
    }
    int rc = pthread_create(&t->thread, NULL, loop_main, t);
    if (rc != 0) {
        snprintf(err, errlen, "connection loop thread: %s", strerror(rc));
        return -1;
    }
    t->started = true;
    pthread_mutex_lock(&t->lock);
    while (!t->start_done)
        pthread_cond_wait(&t->start_cond, &t->lock);
    pthread_mutex_unlock(&t->lock);
    if (t->start_rc < 0) {
        snprintf(err, errlen, "connection loop: %s", t->start_err);
        return -1;
    }
    return 0;
}

struct conn_loop *conn_loop_new(unsigned threads, const char *uplink_netns, char *err,
                                size_t errlen)
{
    if (threads == 0)
        threads = 1;
    struct conn_loop *l = calloc(1, sizeof(*l) + threads * sizeof(l->threads[0]));
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    l->uplink_netns = uplink_netns;
    for (unsigned i = 0; i < threads; i++)
        l->threads[i].epoll_fd = l->threads[i].wake_fd = -1;
    for (unsigned i = 0; i < threads; i++) {
        l->n_threads = i + 1;
        if (thread_open(l, &l->threads[i], err, errlen) < 0) {
            conn_loop_free(l);
            return NULL;
        }
    }
    l->uplink_netns = NULL;
    return l;
}

void conn_loop_free(struct conn_loop *l)
{
    if (!l)
        return;
    for (unsigned i = 0; i < l->n_threads; i++) {
        struct conn_loop_thread *t = &l->threads[i];
        if (t->started) {
            pthread_mutex_lock(&t->lock);
            t->stopping = true;
            pthread_mutex_unlock(&t->lock);
            uint64_t one = 1;
            if (write(t->wake_fd, &one, sizeof(one)) < 0)
                log_error("egress connection loop wake failed", "error=\"%s\"", strerror(errno));
            pthread_join(t->thread, NULL);
        }
        thread_close(t);
    }
    free(l);
}
