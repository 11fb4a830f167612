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
#include "http_follow.h"
#include "intercept.h"
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

int egress_dial(struct egress_conn *c, uint32_t addr, uint16_t port, int timeout_ms)
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

/* One direction of the splice. With follow, the guest's requests are
 * checked one by one (http_follow.h): buf holds len bytes that may go from
 * off on, then held bytes of a request head not complete yet. */
struct pipe_dir {
    int from, to;
    uint8_t *buf;
    size_t len, off, held;
    bool eof;
    uint64_t bytes;
    struct http_follow *follow;
    bool responses;                   /* this direction carries the server's answers */
};

#define PIPE_REFUSED (-2)

/* The n bytes just read to buf + held: how many may go on. */
static int pipe_follow(struct pipe_dir *d, size_t n)
{
    if (!d->follow) {
        d->len = n;
        return 0;
    }
    if (d->responses) {
        http_follow_response(d->follow, d->buf, n);
        d->len = n;
        return 0;
    }
    size_t ready;
    if (http_follow_feed(d->follow, d->buf + d->held, n, &ready) != HTTP_FOLLOW_OK)
        return PIPE_REFUSED;
    d->held = d->held + n - ready;
    d->len = ready;
    return 0;
}

static int pipe_step(struct pipe_dir *d, short from_revents, short to_revents)
{
    if (d->len == 0 && !d->eof && (from_revents & (POLLIN | POLLHUP | POLLERR))) {
        if (d->held)
            memmove(d->buf, d->buf + d->off, d->held);
        d->off = 0;
        ssize_t n = read(d->from, d->buf + d->held, SPLICE_BUF - d->held);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        if (n == 0) {
            /* A request head never completed is never sent. */
            d->eof = true;
            shutdown(d->to, SHUT_WR);
        } else if (n > 0 && pipe_follow(d, (size_t)n) < 0) {
            return PIPE_REFUSED;
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
 * egress detaches the sandbox (which shuts both sockets down), or nothing
 * moved either way for idle_timeout_ms (*idle). With follow,
 * first_ready of the first bytes were checked already and the rest is held.
 * PIPE_REFUSED when the follower refused a later request. */
static int splice_both(int client, int upstream, uint8_t *first, size_t first_len,
                       size_t first_ready, struct http_follow *follow, int idle_timeout_ms,
                       uint64_t *sent, uint64_t *received, bool *idle)
{
    *idle = false;
    uint8_t *up_buf = malloc(SPLICE_BUF), *down_buf = malloc(SPLICE_BUF);
    struct pipe_dir up = { .from = client, .to = upstream, .buf = up_buf, .follow = follow };
    struct pipe_dir down = { .from = upstream, .to = client, .buf = down_buf, .follow = follow,
                             .responses = true };
    int rc = 0;
    if (!up_buf || !down_buf)
        goto out;
    fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK);
    /* The bytes read while deciding go first. */
    memcpy(up.buf, first, first_len);
    up.len = first_ready;
    up.held = first_len - first_ready;
    while (!(up.eof && up.len == 0 && down.eof && down.len == 0)) {
        struct pollfd pfd[2] = {
            { .fd = client, .events = (short)((up.len == 0 && !up.eof ? POLLIN : 0) |
                                              (down.len > 0 ? POLLOUT : 0)) },
            { .fd = upstream, .events = (short)((down.len == 0 && !down.eof ? POLLIN : 0) |
                                                (up.len > 0 ? POLLOUT : 0)) },
        };
        int ready = poll(pfd, 2, idle_timeout_ms);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            *idle = ready == 0; /* silent both ways for the idle timeout */
            break;
        }
        if ((rc = pipe_step(&up, pfd[0].revents, pfd[1].revents)) < 0 ||
            (rc = pipe_step(&down, pfd[1].revents, pfd[0].revents)) < 0)
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
    return rc == PIPE_REFUSED ? PIPE_REFUSED : 0;
}

/* Closing with a zero linger sends RST: the guest sees "connection reset"
 * at once instead of a hang. */
void egress_reset(int fd)
{
    struct linger lg = { .l_onoff = 1, .l_linger = 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/* The connection is decided: it no longer counts against the sandbox's
 * pending share. */
static void conn_decided(struct egress_conn *c)
{
    pthread_mutex_lock(&c->sb->lock);
    if (c->pending)
        c->sb->n_pending--;
    c->pending = false;
    pthread_mutex_unlock(&c->sb->lock);
}

static void conn_release(struct egress_conn *c)
{
    struct egress_sandbox *sb = c->sb;
    pthread_mutex_lock(&sb->lock);
    struct egress_conn **pp = &sb->conns;
    while (*pp != c)
        pp = &(*pp)->next;
    *pp = c->next;
    sb->n_conns--;
    if (c->pending)
        sb->n_pending--;
    if (!sb->conns)
        pthread_cond_broadcast(&sb->conns_gone);
    pthread_mutex_unlock(&sb->lock);
    close(c->client_fd);
    if (c->upstream_fd >= 0)
        close(c->upstream_fd);
    free(c);
}

/* A later request on a followed HTTP connection, decided like a first one
 * (the name must be allowed and pinned to this address); the refused one's
 * name and reason are kept for the log. */
struct request_check {
    struct egress_sandbox *sb;
    const struct egress_policy *p;
    struct egress_target t;
    char name[NAME_MAX_LEN + 1];
    const char *reason;
};

static bool check_request(void *ctx, const char *name)
{
    struct request_check *rc = ctx;
    struct egress_target t = rc->t;
    t.name_known = true;
    t.name = name;
    t.name_pinned = name && pins_match(rc->sb->pins, name, t.addr, clock_monotonic_ms());
    struct egress_decision d = egress_policy_check_connection(rc->p, &t);
    if (d.verdict == EGRESS_ALLOW)
        return true;
    snprintf(rc->name, sizeof(rc->name), "%s", name ? name : "");
    rc->reason = d.reason;
    return false;
}

/* Plaintext HTTP is followed request by request: the requests already in
 * the first bytes are checked before anything is dialled. *ready of them
 * may go; the rest begin a head. On refusal *d and name say why. A
 * connection allowed by its HTTP Host (http_named) must be HTTP the
 * follower parses strictly: one it cannot follow would pass its later
 * requests unchecked. */
static struct http_follow *follow_http(struct request_check *rc, const uint8_t *first,
                                       size_t first_len, bool http_named, size_t *ready,
                                       struct egress_decision *d, char *name)
{
    *ready = first_len;
    if (first_len == 0 || first[0] == 0x16)
        return NULL;
    if (!sniff_http_is_request(first, first_len)) {
        if (http_named)
            *d = (struct egress_decision){ EGRESS_DENY, "malformed_request" };
        return NULL;
    }
    struct http_follow *f = http_follow_new(check_request, rc);
    enum http_follow_result r = f ? http_follow_feed(f, first, first_len, ready)
                                  : HTTP_FOLLOW_MALFORMED;
    if (r == HTTP_FOLLOW_OK)
        return f;
    *d = (struct egress_decision){ EGRESS_DENY,
                                   r == HTTP_FOLLOW_DENIED ? rc->reason : "malformed_request" };
    if (r == HTTP_FOLLOW_DENIED)
        snprintf(name, NAME_MAX_LEN + 1, "%s", rc->name);
    http_follow_free(f);
    return NULL;
}

/* Where the guest dialled (before nftables redirected it here). */
static int original_dst(int fd, uint32_t *addr, uint16_t *port)
{
    struct sockaddr_in dst;
    socklen_t dl = sizeof(dst);
    if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &dst, &dl) < 0)
        return -1;
    *addr = ntohl(dst.sin_addr.s_addr);
    *port = ntohs(dst.sin_port);
    return 0;
}

static bool closed_by_policy(struct egress_conn *c)
{
    pthread_mutex_lock(&c->sb->lock);
    bool closed = c->closed_by_policy;
    pthread_mutex_unlock(&c->sb->lock);
    return closed;
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
    struct http_follow *follow = NULL;
    size_t first_ready = 0;

    struct egress_target t = { 0 };
    if (!first || original_dst(c->client_fd, &t.addr, &t.port) < 0) {
        log_error("no original destination", "sandbox=%s error=\"%s\"", sb->id, strerror(errno));
        egress_reset(c->client_fd);
        goto out;
    }
    t.protected_reason = egress_address_protection(sb->eg, t.addr);
    struct egress_decision d = egress_policy_check_connection(p, &t);
    bool http_named = false;
    if (d.verdict == EGRESS_NEED_NAME) {
        enum sniff_result r = read_first_bytes(c, cfg->sniff_timeout_ms, first, &first_len, name);
        t.name_known = true;
        /* Encrypted Client Hello hides the name the server sees: decided
         * by the outer name only where the policy accepts that. */
        if (r == SNIFF_NAME_HIDDEN && egress_policy_allows_ech(p))
            r = name[0] ? SNIFF_FOUND : SNIFF_NONE;
        http_named = r == SNIFF_FOUND && first[0] != 0x16;
        if (r == SNIFF_FOUND) {
            t.name = name;
            t.name_pinned = pins_match(sb->pins, name, t.addr, clock_monotonic_ms());
        }
        if (r == SNIFF_MALFORMED)
            d = (struct egress_decision){ EGRESS_DENY, "malformed_first_bytes" };
        else if (r == SNIFF_NAME_HIDDEN)
            d = (struct egress_decision){ EGRESS_DENY, "encrypted_client_hello" };
        else
            d = egress_policy_check_connection(p, &t);
    }
    conn_decided(c);
    struct request_check rc = { .sb = sb, .p = p, .t = t };
    if (d.verdict == EGRESS_ALLOW)
        follow = follow_http(&rc, first, first_len, http_named, &first_ready, &d, name);
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
        egress_reset(c->client_fd);
        goto out;
    }
    pthread_mutex_lock(&sb->lock);
    c->allowed = true;
    c->target = t;
    snprintf(c->name, sizeof(c->name), "%s", t.name ? t.name : "");
    c->target.name = NULL; /* c->name, by egress_conn_still_allowed */
    /* A policy change while this was being decided did not see it: decide
     * under the new one too. */
    bool changed_meanwhile = sb->policy != p && !egress_conn_still_allowed(c, sb->policy);
    c->closed_by_policy = changed_meanwhile;
    pthread_mutex_unlock(&sb->lock);
    if (changed_meanwhile) {
        conn_log_finish(sb->log, seq, 0, 0, "policy_changed");
        egress_reset(c->client_fd);
        goto out;
    }
    uint64_t sent = 0, received = 0;
    const char *why = NULL;
    /* A host with a credential binding: egress terminates, injects and
     * forwards itself (intercept.h). */
    if (egress_intercept(c, &t, first, first_len, &sent, &received, &why)) {
        conn_log_finish(sb->log, seq, sent, received, closed_by_policy(c) ? "policy_changed" : why);
        goto out;
    }
    if (egress_dial(c, t.addr, t.port, cfg->connect_timeout_ms) < 0) {
        log_warn("upstream unreachable", "sandbox=%s dest=%s:%u", sb->id, a, t.port);
        conn_log_finish(sb->log, seq, 0, 0, "upstream_unreachable");
        egress_reset(c->client_fd);
        goto out;
    }
    bool idle;
    bool refused = splice_both(c->client_fd, c->upstream_fd, first, first_len, first_ready,
                               follow, cfg->idle_timeout_ms, &sent, &received,
                               &idle) == PIPE_REFUSED;
    conn_log_finish(sb->log, seq, sent, received,
                    closed_by_policy(c) ? "policy_changed" : idle ? "idle_timeout" : NULL);
    if (refused) {
        /* A later request on the connection: logged on its own, and the
         * connection ends. */
        e.allowed = false;
        e.reason = rc.reason ? rc.reason : "malformed_request";
        snprintf(e.name, sizeof(e.name), "%s", rc.reason ? rc.name : "");
        conn_log_add(sb->log, &e);
        log_info("request denied", "sandbox=%s dest=%s:%u name=%s reason=%s", sb->id, a, t.port,
                 e.name[0] ? e.name : "-", e.reason);
        egress_reset(c->client_fd);
        egress_reset(c->upstream_fd);
    }
out:
    http_follow_free(follow);
    free(first);
    egress_policy_put(p);
    conn_release(c);
    return NULL;
}

/* Over the sandbox's share: reset at once, no thread. Logged in the
 * sandbox's connection log each time, in egress's own log at the 1st,
 * 2nd, 4th, 8th, ... refusal (a flood must not flood the log too). */
static void refuse_over_share(struct egress_sandbox *sb, int client_fd, const char *reason,
                              uint64_t refusals)
{
    struct conn_entry e = { .protocol = "tcp", .reason = reason };
    original_dst(client_fd, &e.addr, &e.port); /* unknown: logged as 0.0.0.0:0 */
    conn_log_add(sb->log, &e);
    if ((refusals & (refusals - 1)) == 0)
        log_warn("connection refused: the sandbox holds its share", "sandbox=%s reason=%s "
                 "refused=%llu", sb->id, reason, (unsigned long long)refusals);
    egress_reset(client_fd);
    close(client_fd);
}

void egress_tcp_accept(struct egress_sandbox *sb, int client_fd)
{
    const struct egress_config *cfg = &sb->eg->cfg;
    pthread_mutex_lock(&sb->lock);
    const char *over = sb->n_conns >= cfg->max_conns_per_sandbox       ? "too_many_connections"
                       : sb->n_pending >= cfg->max_pending_per_sandbox ? "too_many_pending"
                                                                       : NULL;
    uint64_t refusals = over ? ++sb->refused_over_share : 0;
    pthread_mutex_unlock(&sb->lock);
    if (over) {
        refuse_over_share(sb, client_fd, over, refusals);
        return;
    }
    struct egress_conn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(client_fd);
        return;
    }
    c->sb = sb;
    c->client_fd = client_fd;
    c->upstream_fd = -1;
    c->pending = true;
    pthread_mutex_lock(&sb->lock);
    c->next = sb->conns;
    sb->conns = c;
    sb->n_conns++;
    sb->n_pending++;
    pthread_mutex_unlock(&sb->lock);

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &attr, conn_thread, c);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        log_error("connection thread failed", "sandbox=%s error=\"%s\"", sb->id, strerror(rc));
        egress_reset(client_fd);
        conn_release(c);
    }
}
