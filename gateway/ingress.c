#include "ingress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "gateway.h"
#include "http_head.h"
#include "log.h"
#include "port_proxy.h"
#include "port_target.h"

/* A head longer than this is not routed to a port (libmicrohttpd answers
 * it); nor is one that has not arrived within the wait. */
#define INGRESS_HEAD_MAX (16u << 10)
#define INGRESS_HEAD_WAIT_MS 10000
/* Connections waiting for their head at once; more skip the wait and go
 * to libmicrohttpd (its own limits apply there). */
#define INGRESS_PENDING_MAX 1024

struct pending {
    struct pending *prev, *next;
    int fd;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int64_t since_ms;
};

struct ingress {
    struct gateway *gw;
    int listen_fd, epoll_fd, wake_fd;
    pthread_t thread;
    struct pending *pending; /* oldest last */
    unsigned n_pending;
    struct port_relays *relays;
    /* Connections held: waiting for their head, libmicrohttpd's and the
     * relays. At --max-connections the listener stops accepting, so one
     * more waits in the kernel's listen queue until one closes, as when
     * libmicrohttpd listened itself. */
    atomic_uint held;
    bool accepting; /* the listener is armed (the ingress thread's) */
    atomic_bool stopping;
};

/* Markers for the two fds that are not connections. */
static char listen_marker, wake_marker;

/* One place freed: re-arms the listener if the cap had stopped it. */
static void release_place(struct ingress *in)
{
    atomic_fetch_sub(&in->held, 1);
    uint64_t one = 1;
    if (write(in->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        log_warn("ingress wake failed", "error=\"%s\"", strerror(errno));
}

void ingress_connection_closed(struct ingress *in)
{
    release_place(in);
}

static void relay_ended(void *arg)
{
    release_place(arg);
}

/* The listener armed while places are free, disarmed at the cap. */
static void arm_listener(struct ingress *in)
{
    bool want = atomic_load(&in->held) < in->gw->cfg.max_connections;
    if (want == in->accepting)
        return;
    struct epoll_event ev = { .events = want ? EPOLLIN : 0, .data.ptr = &listen_marker };
    if (epoll_ctl(in->epoll_fd, EPOLL_CTL_MOD, in->listen_fd, &ev) == 0)
        in->accepting = want;
}

static void pending_unlink(struct ingress *in, struct pending *p)
{
    epoll_ctl(in->epoll_fd, EPOLL_CTL_DEL, p->fd, NULL);
    if (p->prev)
        p->prev->next = p->next;
    else
        in->pending = p->next;
    if (p->next)
        p->next->prev = p->prev;
    in->n_pending--;
}

/* To libmicrohttpd, which closes the fd itself when it refuses it. */
static void to_api(struct ingress *in, int fd, const struct sockaddr_storage *addr,
                   socklen_t addrlen)
{
    if (MHD_add_connection(in->gw->daemon, fd, (const struct sockaddr *)addr, addrlen) !=
        MHD_YES) {
        log_warn("connection refused", "by=libmicrohttpd reason=\"%s\"", strerror(errno));
        release_place(in); /* it never reached libmicrohttpd's books */
    }
}

/* Routes p once its head is in; leaves it waiting otherwise. */
static void examine(struct ingress *in, struct pending *p)
{
    char buf[INGRESS_HEAD_MAX];
    ssize_t n = recv(p->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) { /* closed before asking anything */
        pending_unlink(in, p);
        close(p->fd);
        free(p);
        release_place(in);
        return;
    }
    struct http_head h;
    enum http_head_status st = http_head_parse(buf, (size_t)n, &h);
    if (st == HTTP_HEAD_INCOMPLETE && (size_t)n < sizeof(buf))
        return;
    pending_unlink(in, p);
    struct port_target t;
    char why[256] = "";
    enum port_target_kind k = st == HTTP_HEAD_COMPLETE
                                  ? port_target_find(&h, in->gw->cfg.public_domain, &t, why,
                                                     sizeof(why))
                                  : PORT_TARGET_NONE;
    if (k == PORT_TARGET_NONE || (k == PORT_TARGET_FOUND && t.port == PORT_TARGET_ENVD))
        to_api(in, p->fd, &p->addr, p->addrlen);
    else
        port_proxy_start(in->gw, in->relays, p->fd, &t,
                         k == PORT_TARGET_INVALID ? why : NULL);
    free(p);
}

static void accept_all(struct ingress *in)
{
    while (atomic_load(&in->held) < in->gw->cfg.max_connections) {
        struct sockaddr_storage addr;
        socklen_t addrlen = sizeof(addr);
        int fd = accept4(in->listen_fd, (struct sockaddr *)&addr, &addrlen,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                log_warn("accept failed", "error=\"%s\"", strerror(errno));
            if (errno != EINTR && errno != ECONNABORTED)
                return;
            continue;
        }
        atomic_fetch_add(&in->held, 1);
        struct pending *p = in->n_pending < INGRESS_PENDING_MAX ? calloc(1, sizeof(*p)) : NULL;
        if (!p) {
            to_api(in, fd, &addr, addrlen);
            continue;
        }
        *p = (struct pending){ .next = in->pending, .fd = fd, .addr = addr, .addrlen = addrlen,
                               .since_ms = clock_monotonic_ms() };
        /* Edge-triggered: peeked bytes stay readable, only new ones wake. */
        struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = p };
        if (epoll_ctl(in->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            free(p);
            to_api(in, fd, &addr, addrlen);
            continue;
        }
        if (in->pending)
            in->pending->prev = p;
        in->pending = p;
        in->n_pending++;
        examine(in, p); /* its head may be there already */
    }
}

/* Heads that never came: libmicrohttpd's timeouts and answers take over. */
static void expire(struct ingress *in)
{
    int64_t now = clock_monotonic_ms();
    struct pending *p = in->pending;
    while (p) {
        struct pending *next = p->next;
        if (now - p->since_ms >= INGRESS_HEAD_WAIT_MS) {
            pending_unlink(in, p);
            to_api(in, p->fd, &p->addr, p->addrlen);
            free(p);
        }
        p = next;
    }
}

static void *ingress_main(void *arg)
{
    struct ingress *in = arg;
    for (;;) {
        struct epoll_event evs[64];
        int n = epoll_wait(in->epoll_fd, evs, 64, 1000);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == &wake_marker) {
                uint64_t count;
                if (atomic_load(&in->stopping))
                    return NULL;
                if (read(in->wake_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
                    log_warn("ingress wake read failed", "error=\"%s\"", strerror(errno));
                continue;
            }
            if (evs[i].data.ptr == &listen_marker)
                accept_all(in);
            else
                examine(in, evs[i].data.ptr);
        }
        expire(in);
        arm_listener(in);
    }
}

static int listen_on(const char *host, uint16_t port, char *err, size_t errlen)
{
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        snprintf(err, errlen, "listen address %s is not an IPv4 address", host);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 1024) < 0) {
        snprintf(err, errlen, "cannot listen on %s:%u: %s", host, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

struct ingress *ingress_start(struct gateway *gw, char *err, size_t errlen)
{
    struct ingress *in = calloc(1, sizeof(*in));
    if (!in) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    in->gw = gw;
    in->epoll_fd = in->wake_fd = -1;
    in->listen_fd = listen_on(gw->cfg.listen_host, gw->cfg.listen_port, err, errlen);
    if (in->listen_fd < 0)
        goto fail;
    in->relays = port_relays_new(gw->cfg.max_connections, relay_ended, in);
    in->accepting = true;
    in->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    in->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event lev = { .events = EPOLLIN, .data.ptr = &listen_marker };
    struct epoll_event wev = { .events = EPOLLIN, .data.ptr = &wake_marker };
    gw->ingress = in; /* before any connection reaches libmicrohttpd's callbacks */
    if (!in->relays || in->epoll_fd < 0 || in->wake_fd < 0 ||
        epoll_ctl(in->epoll_fd, EPOLL_CTL_ADD, in->listen_fd, &lev) < 0 ||
        epoll_ctl(in->epoll_fd, EPOLL_CTL_ADD, in->wake_fd, &wev) < 0 ||
        pthread_create(&in->thread, NULL, ingress_main, in) != 0) {
        snprintf(err, errlen, "cannot start the listener's thread: %s", strerror(errno));
        goto fail;
    }
    return in;
fail:
    gw->ingress = NULL;
    port_relays_stop(in->relays);
    if (in->wake_fd >= 0)
        close(in->wake_fd);
    if (in->epoll_fd >= 0)
        close(in->epoll_fd);
    if (in->listen_fd >= 0)
        close(in->listen_fd);
    free(in);
    return NULL;
}

void ingress_stop(struct ingress *in)
{
    if (!in)
        return;
    atomic_store(&in->stopping, true);
    uint64_t one = 1;
    if (write(in->wake_fd, &one, sizeof(one)) != sizeof(one))
        log_warn("ingress wake failed", "error=\"%s\"", strerror(errno));
    pthread_join(in->thread, NULL);
    close(in->listen_fd);
    while (in->pending) {
        struct pending *p = in->pending;
        in->pending = p->next;
        close(p->fd);
        free(p);
    }
    port_relays_stop(in->relays);
}

void ingress_free(struct ingress *in)
{
    if (!in)
        return;
    close(in->epoll_fd);
    close(in->wake_fd);
    free(in);
}
