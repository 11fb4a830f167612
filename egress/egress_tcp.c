/* One guest TCP connection: learn where it was going, read the name it
 * claims when the policy needs it, decide, then dial and splice or reset. */
#include "egress_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
/* After netinet/in.h, whose definitions linux/in.h then skips. */
#include <linux/netfilter_ipv4.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cidr.h"
#include "clock.h"
#include "log.h"
#include "sniff.h"

#define SPLICE_BUF 65536

/* Reads the guest's first bytes until sniff_name decides, the guest stops
 * sending, or the timeout passes. */
static enum sniff_result read_first_bytes(struct egress_conn *c, int timeout_ms, uint8_t *buf,
                                          size_t *got, char *name)
{
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    *got = 0;
    for (;;) {
        enum sniff_result r = sniff_name(buf, *got, name);
        if (r != SNIFF_NEED_MORE)
            return r;
        int64_t left = deadline - clock_monotonic_ms();
        struct pollfd pfd = { .fd = c->client_fd, .events = POLLIN };
        int pr = left > 0 ? poll(&pfd, 1, (int)left) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        ssize_t n = pr > 0 ? read(c->client_fd, buf + *got, SNIFF_MAX_BYTES - *got) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            /* Silence (a server-speaks-first protocol) claims no name; a
             * half-sent ClientHello or request is refused. */
            return *got == 0 ? SNIFF_NONE : SNIFF_MALFORMED;
        *got += (size_t)n;
    }
}

static int dial(struct egress_conn *c, uint32_t addr, uint16_t port, int timeout_ms)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct egress_sandbox *sb = c->sb;
    pthread_mutex_lock(&sb->lock);
    c->upstream_fd = fd; /* from now on a detach can shut it down */
    bool stopping = sb->stopping;
    pthread_mutex_unlock(&sb->lock);
    if (stopping)
        return -1;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                              .sin_addr.s_addr = htonl(addr) };
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
        return -1;
    struct pollfd pfd = { .fd = fd, .events = POLLOUT };
    if (poll(&pfd, 1, timeout_ms) != 1)
        return -1;
    int soerr = 0;
    socklen_t l = sizeof(soerr);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l) < 0 || soerr != 0)
        return -1;
    return 0;
}

/* One direction of the splice. */
struct pipe_dir {
    int from, to;
    uint8_t *buf;
    size_t len, off;
    bool eof;
    uint64_t bytes;
};

static int pipe_step(struct pipe_dir *d, short from_revents, short to_revents)
{
    if (d->len == 0 && !d->eof && (from_revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t n = read(d->from, d->buf, SPLICE_BUF);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        if (n == 0) {
            d->eof = true;
            shutdown(d->to, SHUT_WR);
        } else if (n > 0) {
            d->len = (size_t)n;
            d->off = 0;
        }
    }
    if (d->len > 0 && (to_revents & (POLLOUT | POLLERR))) {
        ssize_t n = send(d->to, d->buf + d->off, d->len, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        if (n > 0) {
            d->off += (size_t)n;
            d->len -= (size_t)n;
            d->bytes += (uint64_t)n;
        }
    }
    return 0;
}

/* Copies both ways until both sides have finished sending, one fails, or
 * egress detaches the sandbox (which shuts both sockets down). */
static void splice_both(int client, int upstream, uint8_t *first, size_t first_len,
                        uint64_t *sent, uint64_t *received)
{
    uint8_t *up_buf = malloc(SPLICE_BUF), *down_buf = malloc(SPLICE_BUF);
    struct pipe_dir up = { .from = client, .to = upstream, .buf = up_buf };
    struct pipe_dir down = { .from = upstream, .to = client, .buf = down_buf };
    if (!up_buf || !down_buf)
        goto out;
    fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK);
    /* The bytes read while deciding go first. */
    memcpy(up.buf, first, first_len);
    up.len = first_len;
    while (!(up.eof && up.len == 0 && down.eof && down.len == 0)) {
        struct pollfd pfd[2] = {
            { .fd = client, .events = (short)((up.len == 0 && !up.eof ? POLLIN : 0) |
                                              (down.len > 0 ? POLLOUT : 0)) },
            { .fd = upstream, .events = (short)((down.len == 0 && !down.eof ? POLLIN : 0) |
                                                (up.len > 0 ? POLLOUT : 0)) },
        };
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pipe_step(&up, pfd[0].revents, pfd[1].revents) < 0 ||
            pipe_step(&down, pfd[1].revents, pfd[0].revents) < 0)
            break;
        /* Peer gone in a direction we still had to write to. */
        if ((pfd[0].revents & (POLLERR | POLLNVAL)) || (pfd[1].revents & (POLLERR | POLLNVAL)))
            break;
    }
out:
    *sent = up.bytes;
    *received = down.bytes;
    free(up_buf);
    free(down_buf);
}

/* Closing with a zero linger sends RST: the guest sees "connection reset"
 * at once instead of a hang. */
static void reset(int fd)
{
    struct linger lg = { .l_onoff = 1, .l_linger = 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

static void conn_release(struct egress_conn *c)
{
    struct egress_sandbox *sb = c->sb;
    pthread_mutex_lock(&sb->lock);
    struct egress_conn **pp = &sb->conns;
    while (*pp != c)
        pp = &(*pp)->next;
    *pp = c->next;
    if (!sb->conns)
        pthread_cond_broadcast(&sb->conns_gone);
    pthread_mutex_unlock(&sb->lock);
    close(c->client_fd);
    if (c->upstream_fd >= 0)
        close(c->upstream_fd);
    free(c);
}

static void *conn_thread(void *arg)
{
    struct egress_conn *c = arg;
    struct egress_sandbox *sb = c->sb;
    const struct egress_config *cfg = &sb->eg->cfg;
    struct egress_policy *p = egress_sandbox_policy(sb);
    uint8_t *first = malloc(SNIFF_MAX_BYTES);
    size_t first_len = 0;
    char name[NAME_MAX_LEN + 1] = "", a[16];
    struct conn_entry e = { .protocol = "tcp" };

    struct sockaddr_in dst;
    socklen_t dl = sizeof(dst);
    if (!first || getsockopt(c->client_fd, SOL_IP, SO_ORIGINAL_DST, &dst, &dl) < 0) {
        log_error("no original destination", "sandbox=%s error=\"%s\"", sb->id, strerror(errno));
        reset(c->client_fd);
        goto out;
    }
    struct egress_target t = {
        .addr = ntohl(dst.sin_addr.s_addr),
        .port = ntohs(dst.sin_port),
    };
    t.host_address = egress_is_host_address(sb->eg, t.addr);
    struct egress_decision d = egress_policy_check_connection(p, &t);
    if (d.verdict == EGRESS_NEED_NAME) {
        enum sniff_result r = read_first_bytes(c, cfg->sniff_timeout_ms, first, &first_len, name);
        t.name_known = true;
        if (r == SNIFF_FOUND) {
            t.name = name;
            t.name_pinned = pins_match(sb->pins, name, t.addr);
        }
        d = r == SNIFF_MALFORMED ? (struct egress_decision){ EGRESS_DENY, "malformed_first_bytes" }
                                 : egress_policy_check_connection(p, &t);
    }
    e.addr = t.addr;
    e.port = t.port;
    e.allowed = d.verdict == EGRESS_ALLOW;
    e.reason = d.reason;
    snprintf(e.name, sizeof(e.name), "%s", name);
    uint64_t seq = conn_log_add(sb->log, &e);
    log_info(e.allowed ? "connection allowed" : "connection denied",
             "sandbox=%s dest=%s:%u name=%s reason=%s", sb->id, addr_format(t.addr, a), t.port,
             name[0] ? name : "-", d.reason);
    if (!e.allowed) {
        reset(c->client_fd);
        goto out;
    }
    if (dial(c, t.addr, t.port, cfg->connect_timeout_ms) < 0) {
        log_warn("upstream unreachable", "sandbox=%s dest=%s:%u", sb->id, a, t.port);
        conn_log_finish(sb->log, seq, 0, 0, "upstream_unreachable");
        reset(c->client_fd);
        goto out;
    }
    uint64_t sent = 0, received = 0;
    splice_both(c->client_fd, c->upstream_fd, first, first_len, &sent, &received);
    conn_log_finish(sb->log, seq, sent, received, NULL);
out:
    free(first);
    egress_policy_put(p);
    conn_release(c);
    return NULL;
}

void egress_tcp_accept(struct egress_sandbox *sb, int client_fd)
{
    struct egress_conn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(client_fd);
        return;
    }
    c->sb = sb;
    c->client_fd = client_fd;
    c->upstream_fd = -1;
    pthread_mutex_lock(&sb->lock);
    c->next = sb->conns;
    sb->conns = c;
    pthread_mutex_unlock(&sb->lock);

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &attr, conn_thread, c);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        log_error("connection thread failed", "sandbox=%s error=\"%s\"", sb->id, strerror(rc));
        reset(client_fd);
        conn_release(c);
    }
}
