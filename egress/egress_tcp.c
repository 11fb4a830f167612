/* One guest TCP connection, from accept to close, on the connection loop
 * (conn_loop.h): learn where it was going, read the name it claims when
 * the policy needs it, decide, then dial and splice (splice.h) or reset.
 * A connection egress may inject for, or a TLS one the policy inspects,
 * leaves the loop for a thread of its own: it asks vault for a binding
 * and, if there is one or the policy inspects it, is intercepted there
 * (intercept.h); otherwise it comes back to be dialled and spliced.
 *
 *   NEW -> SNIFF -> (BINDING ->) DIAL -> SPLICE -> closed
 *
 * with a refusal, a timeout or a detach ending it from any phase. */
#include "egress_tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
/* After netinet/in.h, whose definitions linux/in.h then skips. */
#include <linux/netfilter_ipv4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cidr.h"
#include "clock.h"
#include "conn_loop.h"
#include "dial.h"
#include "http_follow.h"
#include "intercept.h"
#include "log.h"
#include "sniff.h"
#include "splice.h"

_Static_assert(SNIFF_MAX_BYTES <= SPLICE_BUF, "the first bytes become the splice's buffer");

/* conn_loop_watch tags */
#define TAG_GUEST 0
#define TAG_UPSTREAM 1

enum conn_phase {
    PHASE_NEW,
    PHASE_SNIFF,    /* reading the first bytes for a name */
    PHASE_BINDING,  /* on a thread of its own: vault, maybe interception */
    PHASE_DIAL,     /* connecting to the upstream */
    PHASE_SPLICE,
};

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

struct guest_conn {
    struct egress_conn c;             /* what detach and policy changes see */
    struct conn_loop_item item;
    enum conn_phase phase;
    struct egress_policy *policy;     /* in force when it was accepted */
    struct egress_target t;           /* t.name points at name once found */
    char name[NAME_MAX_LEN + 1];
    uint8_t *first;                   /* SPLICE_BUF: the first bytes, then the splice's */
    size_t first_len, first_ready;
    struct request_check rc;
    struct http_follow *follow;
    struct splice *splice;
    uint64_t seq;                     /* its connection-log entry */
    uint32_t watching[2];             /* SPLICE: the events each tag is watched for */
    bool may_inject;                  /* egress_intercept_wanted: ask vault */
    bool inspect;                     /* TLS under the policy's inspect_tls */
};

static struct guest_conn *of_item(struct conn_loop_item *it)
{
    return (struct guest_conn *)((char *)it - offsetof(struct guest_conn, item));
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

/* The sandbox forgets it; its fds close; it is freed. */
static void conn_free(struct guest_conn *gc)
{
    struct egress_conn *c = &gc->c;
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
    splice_free(gc->splice);
    http_follow_free(gc->follow);
    free(gc->first);
    egress_policy_put(gc->policy);
    free(gc);
}

static void conn_free_after(struct conn_loop_item *it)
{
    conn_free(of_item(it));
}

/* Ends a connection on the loop: what it has is closed after this round. */
static void conn_end(struct guest_conn *gc)
{
    conn_loop_unwatch(&gc->item, gc->c.client_fd);
    if (gc->c.upstream_fd >= 0)
        conn_loop_unwatch(&gc->item, gc->c.upstream_fd);
    conn_loop_leave(&gc->item, conn_free_after);
}

static void conn_reset_end(struct guest_conn *gc)
{
    egress_reset(gc->c.client_fd);
    conn_end(gc);
}

/* Resets an allowed connection before any bytes were counted for it,
 * closing its log entry with reason. */
static void conn_reset_logged(struct guest_conn *gc, const char *reason)
{
    egress_log_finish(gc->c.sb, gc->seq, 0, 0, reason);
    conn_reset_end(gc);
}

/* Decided: it no longer counts against the sandbox's pending share. */
static void conn_decided(struct egress_conn *c)
{
    pthread_mutex_lock(&c->sb->lock);
    if (c->pending)
        c->sb->n_pending--;
    c->pending = false;
    pthread_mutex_unlock(&c->sb->lock);
}

/* Why an allowed connection ended, for its log entry: a policy change
 * (egress_sandbox_recheck) outranks what the sockets saw. */
static const char *end_reason(struct guest_conn *gc, const char *seen)
{
    pthread_mutex_lock(&gc->c.sb->lock);
    bool closed = gc->c.closed_by_policy;
    pthread_mutex_unlock(&gc->c.sb->lock);
    return closed ? "policy_changed" : seen;
}

static void unreachable(struct guest_conn *gc)
{
    char a[16];
    log_warn("upstream unreachable", "sandbox=%s dest=%s:%u", gc->c.sb->id,
             addr_format(gc->t.addr, a), gc->t.port);
    conn_reset_logged(gc, "upstream_unreachable");
}

/* Tells the loop what each side waits for now, when that changed: most
 * events leave it as it was, and each change is a system call. */
static void splice_watch(struct guest_conn *gc)
{
    const int fds[2] = { [TAG_GUEST] = gc->c.client_fd, [TAG_UPSTREAM] = gc->c.upstream_fd };
    for (int tag = TAG_GUEST; tag <= TAG_UPSTREAM; tag++) {
        uint32_t want = splice_interest(gc->splice, tag == TAG_GUEST ? SPLICE_GUEST
                                                                     : SPLICE_UPSTREAM);
        if (want == gc->watching[tag])
            continue;
        if (conn_loop_watch(&gc->item, fds[tag], tag, want) < 0) {
            log_error("egress cannot watch a connection", "sandbox=%s error=\"%s\"",
                      gc->c.sb->id, strerror(errno));
            return;
        }
        gc->watching[tag] = want;
    }
}

static void splice_begin(struct guest_conn *gc)
{
    gc->splice = splice_new(gc->c.client_fd, gc->c.upstream_fd, gc->first, gc->first_len,
                            gc->first_ready, gc->follow);
    gc->first = NULL;
    gc->follow = NULL;
    if (!gc->splice) {
        conn_reset_logged(gc, "out_of_memory");
        return;
    }
    gc->phase = PHASE_SPLICE;
    /* Unknown: DIAL watched both for other events. */
    gc->watching[TAG_GUEST] = gc->watching[TAG_UPSTREAM] = UINT32_MAX;
    /* The bytes read while deciding go first. */
    bool moved;
    enum splice_state st = splice_step(gc->splice, SPLICE_UPSTREAM, EPOLLOUT, &moved);
    if (st != SPLICE_GOING) {
        conn_reset_logged(gc, end_reason(gc, NULL));
        return;
    }
    splice_watch(gc);
    conn_loop_deadline(&gc->item, gc->c.sb->eg->cfg.idle_timeout_ms);
}

static void splice_end(struct guest_conn *gc, enum splice_state st, bool idle)
{
    struct egress_sandbox *sb = gc->c.sb;
    uint64_t sent, received;
    splice_counts(gc->splice, &sent, &received);
    egress_log_finish(sb, gc->seq, sent, received,
                    end_reason(gc, idle ? "idle_timeout" : NULL));
    if (st == SPLICE_REFUSED) {
        /* A later request on the connection: logged on its own, and the
         * connection ends. */
        struct request_check *rc = &gc->rc;
        struct conn_entry e = { .protocol = "tcp", .addr = gc->t.addr, .port = gc->t.port,
                                .reason = rc->reason ? rc->reason : "malformed_request" };
        snprintf(e.name, sizeof(e.name), "%s", rc->reason ? rc->name : "");
        egress_log(sb, &e);
        char a[16];
        log_info("request denied", "sandbox=%s dest=%s:%u name=%s reason=%s", sb->id,
                 addr_format(gc->t.addr, a), gc->t.port, e.name[0] ? e.name : "-", e.reason);
        egress_reset(gc->c.upstream_fd);
    }
    if (st == SPLICE_REFUSED)
        egress_reset(gc->c.client_fd);
    conn_end(gc);
}

static void dial_start(struct guest_conn *gc)
{
    int rc = egress_dial_begin(&gc->c, gc->t.addr, gc->t.port);
    if (rc < 0) {
        unreachable(gc);
        return;
    }
    if (rc == 0) {
        splice_begin(gc);
        return;
    }
    gc->phase = PHASE_DIAL;
    /* The guest is watched for nothing but its going away. */
    if (conn_loop_watch(&gc->item, gc->c.upstream_fd, TAG_UPSTREAM, EPOLLOUT) < 0 ||
        conn_loop_watch(&gc->item, gc->c.client_fd, TAG_GUEST, 0) < 0) {
        unreachable(gc);
        return;
    }
    conn_loop_deadline(&gc->item, gc->c.sb->eg->cfg.connect_timeout_ms);
}

/* On a thread of its own (started from the loop, so in the uplink
 * namespace): vault's answer takes a network round trip, and an
 * intercepted connection is served with blocking reads. */
static void *binding_main(void *arg)
{
    struct guest_conn *gc = arg;
    bool bound = gc->may_inject && egress_intercept_bound(&gc->c, &gc->t);
    conn_decided(&gc->c);
    if (!bound && !gc->inspect) {
        gc->phase = PHASE_DIAL;
        conn_loop_submit(gc->c.sb->eg->conn_loop, &gc->item);
        return NULL;
    }
    uint64_t sent = 0, received = 0;
    const char *why = NULL;
    egress_intercept_serve(&gc->c, &gc->t, gc->first, gc->first_len, bound, &sent, &received,
                           &why);
    egress_log_finish(gc->c.sb, gc->seq, sent, received, end_reason(gc, why));
    conn_free(gc);
    return NULL;
}

static void binding_start(struct conn_loop_item *it)
{
    struct guest_conn *gc = of_item(it);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &attr, binding_main, gc);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        log_error("connection thread failed", "sandbox=%s error=\"%s\"", gc->c.sb->id,
                  strerror(rc));
        egress_log_finish(gc->c.sb, gc->seq, 0, 0, "out_of_memory");
        egress_reset(gc->c.client_fd);
        conn_free(gc);
    }
}

/* The verdict is in: log it, then reset, or go on to a binding or a dial. */
static void decided(struct guest_conn *gc, struct egress_decision d, bool http_named)
{
    struct egress_conn *c = &gc->c;
    struct egress_sandbox *sb = c->sb;
    gc->rc = (struct request_check){ .sb = sb, .p = gc->policy, .t = gc->t };
    if (d.verdict == EGRESS_ALLOW)
        gc->follow = follow_http(&gc->rc, gc->first, gc->first_len, http_named,
                                 &gc->first_ready, &d, gc->name);
    struct conn_entry e = { .protocol = "tcp", .addr = gc->t.addr, .port = gc->t.port,
                            .allowed = d.verdict == EGRESS_ALLOW, .reason = d.reason };
    snprintf(e.name, sizeof(e.name), "%s", gc->name);
    gc->seq = egress_log(sb, &e);
    char a[16];
    log_info(e.allowed ? "connection allowed" : "connection denied",
             "sandbox=%s dest=%s:%u name=%s reason=%s", sb->id, addr_format(gc->t.addr, a),
             gc->t.port, gc->name[0] ? gc->name : "-", d.reason);
    if (!e.allowed) {
        conn_reset_end(gc);
        return;
    }
    pthread_mutex_lock(&sb->lock);
    c->allowed = true;
    c->target = gc->t;
    snprintf(c->name, sizeof(c->name), "%s", gc->t.name ? gc->t.name : "");
    c->target.name = NULL; /* c->name, by egress_conn_still_allowed */
    /* A policy change while this was being decided did not see it: decide
     * under the new one too. */
    bool changed_meanwhile = sb->policy != gc->policy && !egress_conn_still_allowed(c, sb->policy);
    c->closed_by_policy = changed_meanwhile;
    pthread_mutex_unlock(&sb->lock);
    if (changed_meanwhile) {
        conn_reset_logged(gc, "policy_changed");
        return;
    }
    /* TLS naming its host, under inspect_tls: terminated even without a
     * binding, so the requests inside are checked. attach made sure the
     * sandbox has a CA for it. */
    gc->inspect = egress_policy_inspects_tls(gc->policy) && gc->t.name && gc->first_len > 0 &&
                  gc->first[0] == 0x16;
    gc->may_inject = egress_intercept_wanted(c, &gc->t, gc->first_len);
    if (gc->may_inject || gc->inspect) {
        /* Still pending: a flood of these holds at most the pending share
         * of threads. */
        gc->phase = PHASE_BINDING;
        conn_loop_unwatch(&gc->item, c->client_fd);
        conn_loop_leave(&gc->item, binding_start);
        return;
    }
    conn_decided(c);
    dial_start(gc);
}

/* The first bytes said what they could (sniff.h). */
static void sniffed(struct guest_conn *gc, enum sniff_result r)
{
    conn_loop_deadline(&gc->item, -1);
    struct egress_target *t = &gc->t;
    t->name_known = true;
    /* Encrypted Client Hello hides the name the server sees: decided by
     * the outer name only where the policy accepts that. */
    if (r == SNIFF_NAME_HIDDEN && egress_policy_allows_ech(gc->policy))
        r = gc->name[0] ? SNIFF_FOUND : SNIFF_NONE;
    bool http_named = r == SNIFF_FOUND && gc->first[0] != 0x16;
    if (r == SNIFF_FOUND) {
        t->name = gc->name;
        t->name_pinned = pins_match(gc->c.sb->pins, gc->name, t->addr, clock_monotonic_ms());
    }
    struct egress_decision d;
    if (r == SNIFF_MALFORMED)
        d = (struct egress_decision){ EGRESS_DENY, "malformed_first_bytes" };
    else if (r == SNIFF_NAME_HIDDEN)
        d = (struct egress_decision){ EGRESS_DENY, "encrypted_client_hello" };
    else
        d = egress_policy_check_connection(gc->policy, t);
    decided(gc, d, http_named);
}

static void sniff_read(struct guest_conn *gc)
{
    ssize_t n = read(gc->c.client_fd, gc->first + gc->first_len,
                     SNIFF_MAX_BYTES - gc->first_len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        /* Silence (a server-speaks-first protocol) claims no name; a
         * half-sent ClientHello or request is refused. */
        sniffed(gc, gc->first_len == 0 ? SNIFF_NONE : SNIFF_MALFORMED);
        return;
    }
    gc->first_len += (size_t)n;
    enum sniff_result r = sniff_name(gc->first, gc->first_len, gc->name);
    if (r == SNIFF_NEED_MORE && gc->first_len == SNIFF_MAX_BYTES)
        r = SNIFF_MALFORMED;
    if (r != SNIFF_NEED_MORE)
        sniffed(gc, r);
}

/* Accepted: where was it going, and is that enough to decide? */
static void conn_begin(struct guest_conn *gc)
{
    struct egress_sandbox *sb = gc->c.sb;
    gc->policy = egress_sandbox_policy(sb);
    if (!gc->first) {
        log_error("connection refused: out of memory", "sandbox=%s", sb->id);
        conn_reset_end(gc);
        return;
    }
    if (fcntl(gc->c.client_fd, F_SETFL, fcntl(gc->c.client_fd, F_GETFL) | O_NONBLOCK) < 0 ||
        original_dst(gc->c.client_fd, &gc->t.addr, &gc->t.port) < 0) {
        log_error("no original destination", "sandbox=%s error=\"%s\"", sb->id, strerror(errno));
        conn_reset_end(gc);
        return;
    }
    gc->t.protected_reason = egress_address_protection(sb->eg, gc->t.addr);
    struct egress_decision d = egress_policy_check_connection(gc->policy, &gc->t);
    if (d.verdict != EGRESS_NEED_NAME) {
        decided(gc, d, false);
        return;
    }
    gc->phase = PHASE_SNIFF;
    if (conn_loop_watch(&gc->item, gc->c.client_fd, TAG_GUEST, EPOLLIN) < 0) {
        log_error("egress cannot watch a connection", "sandbox=%s error=\"%s\"", sb->id,
                  strerror(errno));
        conn_reset_end(gc);
        return;
    }
    conn_loop_deadline(&gc->item, sb->eg->cfg.sniff_timeout_ms);
}

static void on_start(struct conn_loop_item *it)
{
    struct guest_conn *gc = of_item(it);
    if (gc->phase == PHASE_NEW)
        conn_begin(gc);
    else /* back from the binding question */
        dial_start(gc);
}

static void on_ready(struct conn_loop_item *it, int tag, uint32_t events)
{
    struct guest_conn *gc = of_item(it);
    switch (gc->phase) {
    case PHASE_SNIFF:
        sniff_read(gc);
        break;
    case PHASE_DIAL:
        if (tag == TAG_GUEST) {
            /* Gone (reset, or shut down by a detach or a policy change)
             * before the upstream answered. */
            conn_reset_logged(gc, end_reason(gc, NULL));
        } else if (egress_dial_result(gc->c.upstream_fd) < 0) {
            unreachable(gc);
        } else {
            conn_loop_deadline(&gc->item, -1);
            splice_begin(gc);
        }
        break;
    case PHASE_SPLICE: {
        bool moved;
        enum splice_state st = splice_step(gc->splice,
                                           tag == TAG_GUEST ? SPLICE_GUEST : SPLICE_UPSTREAM,
                                           events, &moved);
        if (st != SPLICE_GOING) {
            splice_end(gc, st, false);
            break;
        }
        splice_watch(gc);
        if (moved)
            conn_loop_deadline(&gc->item, gc->c.sb->eg->cfg.idle_timeout_ms);
        break;
    }
    case PHASE_NEW:
    case PHASE_BINDING:
        break; /* not watched then */
    }
}

static void on_expired(struct conn_loop_item *it)
{
    struct guest_conn *gc = of_item(it);
    switch (gc->phase) {
    case PHASE_SNIFF:
        sniffed(gc, gc->first_len == 0 ? SNIFF_NONE : SNIFF_MALFORMED);
        break;
    case PHASE_DIAL:
        unreachable(gc);
        break;
    case PHASE_SPLICE:
        /* Silent both ways for the idle timeout. */
        splice_end(gc, SPLICE_DONE, true);
        break;
    case PHASE_NEW:
    case PHASE_BINDING:
        break; /* no deadline then */
    }
}

static const struct conn_loop_ops guest_conn_ops = {
    .start = on_start,
    .ready = on_ready,
    .expired = on_expired,
};

/* Over the sandbox's share: reset at once, never on the loop. Logged in the
 * sandbox's connection log each time, in egress's own log at the 1st,
 * 2nd, 4th, 8th, ... refusal (a flood must not flood the log too). */
static void refuse_over_share(struct egress_sandbox *sb, int client_fd, const char *reason,
                              uint64_t refusals)
{
    struct conn_entry e = { .protocol = "tcp", .reason = reason };
    original_dst(client_fd, &e.addr, &e.port); /* unknown: logged as 0.0.0.0:0 */
    egress_log(sb, &e);
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
    struct guest_conn *gc = calloc(1, sizeof(*gc));
    if (!gc) {
        close(client_fd);
        return;
    }
    gc->first = malloc(SPLICE_BUF); /* checked in conn_begin, which ends it the one way */
    gc->item.ops = &guest_conn_ops;
    struct egress_conn *c = &gc->c;
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
    conn_loop_submit(sb->eg->conn_loop, &gc->item);
}
