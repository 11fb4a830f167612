#include "loop.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

struct loop_fd {
    short events; /* 0 = not polled */
    bool watched;
    loop_fd_cb cb;
    void *ctx;
};

struct loop_timer {
    uint64_t id;
    int64_t deadline_ms;
    loop_timer_cb cb;
    void *ctx;
};

struct loop {
    struct loop_fd *fds; /* indexed by fd number */
    int nfds;            /* capacity of fds */
    struct pollfd *pollfds;
    int npollfds_cap;
    struct loop_timer *timers; /* unordered: there are few */
    size_t ntimers, timers_cap;
    uint64_t next_timer_id;
    bool stopped;
};

struct loop *loop_new(void)
{
    struct loop *l = calloc(1, sizeof(*l));
    if (l)
        l->next_timer_id = 1;
    return l;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    free(l->fds);
    free(l->pollfds);
    free(l->timers);
    free(l);
}

int loop_watch(struct loop *l, int fd, short events, loop_fd_cb cb, void *ctx)
{
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    if (fd >= l->nfds) {
        int n = l->nfds ? l->nfds : 64;
        while (n <= fd)
            n *= 2;
        struct loop_fd *nf = realloc(l->fds, (size_t)n * sizeof(*nf));
        if (!nf)
            return -1;
        memset(nf + l->nfds, 0, (size_t)(n - l->nfds) * sizeof(*nf));
        l->fds = nf;
        l->nfds = n;
    }
    l->fds[fd] = (struct loop_fd){ .events = events, .watched = true, .cb = cb, .ctx = ctx };
    return 0;
}

void loop_set_events(struct loop *l, int fd, short events)
{
    if (fd >= 0 && fd < l->nfds && l->fds[fd].watched)
        l->fds[fd].events = events;
}

void loop_unwatch(struct loop *l, int fd)
{
    if (fd >= 0 && fd < l->nfds)
        memset(&l->fds[fd], 0, sizeof(l->fds[fd]));
}

uint64_t loop_add_timer(struct loop *l, int64_t delay_ms, loop_timer_cb cb, void *ctx)
{
    if (l->ntimers == l->timers_cap) {
        size_t cap = l->timers_cap ? l->timers_cap * 2 : 16;
        struct loop_timer *nt = realloc(l->timers, cap * sizeof(*nt));
        if (!nt)
            return 0;
        l->timers = nt;
        l->timers_cap = cap;
    }
    uint64_t id = l->next_timer_id++;
    l->timers[l->ntimers++] = (struct loop_timer){
        .id = id, .deadline_ms = clock_monotonic_ms() + delay_ms, .cb = cb, .ctx = ctx
    };
    return id;
}

void loop_cancel_timer(struct loop *l, uint64_t id)
{
    for (size_t i = 0; id && i < l->ntimers; i++) {
        if (l->timers[i].id == id) {
            l->timers[i] = l->timers[--l->ntimers];
            return;
        }
    }
}

static int loop_poll_timeout(const struct loop *l)
{
    if (l->ntimers == 0)
        return -1;
    int64_t earliest = l->timers[0].deadline_ms;
    for (size_t i = 1; i < l->ntimers; i++)
        if (l->timers[i].deadline_ms < earliest)
            earliest = l->timers[i].deadline_ms;
    int64_t wait = earliest - clock_monotonic_ms();
    if (wait < 0)
        return 0;
    return wait > 60000 ? 60000 : (int)wait;
}

/* Fires the timers that were due when this pass began; timers added by the
 * callbacks (even with delay 0) wait for the next iteration. */
static void loop_fire_timers(struct loop *l)
{
    int64_t now = clock_monotonic_ms();
    uint64_t last_id = l->next_timer_id;
    for (;;) {
        size_t due = l->ntimers;
        for (size_t i = 0; i < l->ntimers; i++) {
            if (l->timers[i].id < last_id && l->timers[i].deadline_ms <= now) {
                due = i;
                break;
            }
        }
        if (due == l->ntimers)
            return;
        struct loop_timer t = l->timers[due];
        l->timers[due] = l->timers[--l->ntimers];
        t.cb(t.ctx);
    }
}

static int loop_build_pollfds(struct loop *l)
{
    int n = 0;
    for (int fd = 0; fd < l->nfds; fd++)
        if (l->fds[fd].watched && l->fds[fd].events)
            n++;
    if (n > l->npollfds_cap) {
        struct pollfd *np = realloc(l->pollfds, (size_t)n * sizeof(*np));
        if (!np)
            return -1;
        l->pollfds = np;
        l->npollfds_cap = n;
    }
    int i = 0;
    for (int fd = 0; fd < l->nfds; fd++)
        if (l->fds[fd].watched && l->fds[fd].events)
            l->pollfds[i++] = (struct pollfd){ .fd = fd, .events = l->fds[fd].events };
    return n;
}

int loop_run_once(struct loop *l)
{
    int n = loop_build_pollfds(l);
    if (n < 0)
        return -1;
    int ready = poll(l->pollfds, (nfds_t)n, loop_poll_timeout(l));
    if (ready < 0 && errno != EINTR)
        return -1;
    for (int i = 0; ready > 0 && i < n; i++) {
        short revents = l->pollfds[i].revents;
        int fd = l->pollfds[i].fd;
        if (!revents)
            continue;
        /* Re-check: an earlier callback may have unwatched or muted fd. */
        struct loop_fd *w = &l->fds[fd];
        revents &= (short)(w->events | POLLHUP | POLLERR | POLLNVAL);
        if (!w->watched || !w->events || !revents)
            continue;
        w->cb(fd, revents, w->ctx);
    }
    loop_fire_timers(l);
    return 0;
}

void loop_stop(struct loop *l)
{
    l->stopped = true;
}

bool loop_stopped(const struct loop *l)
{
    return l->stopped;
}
