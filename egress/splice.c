#include "splice.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* One direction: buf holds len bytes that may go from off on, then held
 * bytes of a request head the follower has not seen complete yet. */
struct pipe_dir {
    int from, to;
    uint8_t *buf;
    size_t len, off, held;
    bool eof;
    uint64_t bytes;
    bool responses;                   /* carries the server's answers */
};

struct splice {
    struct pipe_dir up;               /* guest -> upstream */
    struct pipe_dir down;             /* upstream -> guest */
    struct http_follow *follow;
};

struct splice *splice_new(int guest, int upstream, uint8_t *first, size_t first_len,
                          size_t first_ready, struct http_follow *follow)
{
    struct splice *s = calloc(1, sizeof(*s));
    uint8_t *down_buf = malloc(SPLICE_BUF);
    if (!s || !down_buf) {
        free(s);
        free(down_buf);
        free(first);
        http_follow_free(follow);
        return NULL;
    }
    s->up = (struct pipe_dir){ .from = guest, .to = upstream, .buf = first, .len = first_ready,
                               .held = first_len - first_ready };
    s->down = (struct pipe_dir){ .from = upstream, .to = guest, .buf = down_buf,
                                 .responses = true };
    s->follow = follow;
    return s;
}

void splice_free(struct splice *s)
{
    if (!s)
        return;
    free(s->up.buf);
    free(s->down.buf);
    http_follow_free(s->follow);
    free(s);
}

/* The n bytes just read to buf + held: how many may go on; -1 when the
 * follower refused. */
static int dir_follow(struct splice *s, struct pipe_dir *d, size_t n)
{
    if (!s->follow) {
        d->len = n;
        return 0;
    }
    if (d->responses) {
        http_follow_response(s->follow, d->buf, n);
        d->len = n;
        return 0;
    }
    size_t ready;
    if (http_follow_feed(s->follow, d->buf + d->held, n, &ready) != HTTP_FOLLOW_OK)
        return -1;
    d->held = d->held + n - ready;
    d->len = ready;
    return 0;
}

/* Reads when the buffer is empty and the source is readable, then writes
 * what the buffer holds (a non-blocking try: EAGAIN waits for EPOLLOUT). */
static enum splice_state dir_step(struct splice *s, struct pipe_dir *d, bool readable,
                                  bool *moved)
{
    if (readable && d->len == 0 && !d->eof) {
        if (d->held)
            memmove(d->buf, d->buf + d->off, d->held);
        d->off = 0;
        ssize_t n = read(d->from, d->buf + d->held, SPLICE_BUF - d->held);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return SPLICE_FAILED;
        if (n == 0) {
            /* A request head never completed is never sent. */
            d->eof = true;
            shutdown(d->to, SHUT_WR);
            *moved = true;
        } else if (n > 0) {
            *moved = true;
            if (dir_follow(s, d, (size_t)n) < 0)
                return SPLICE_REFUSED;
        }
    }
    if (d->len > 0) {
        ssize_t n = send(d->to, d->buf + d->off, d->len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return SPLICE_FAILED;
        if (n > 0) {
            d->off += (size_t)n;
            d->len -= (size_t)n;
            d->bytes += (uint64_t)n;
            *moved = true;
        }
    }
    return SPLICE_GOING;
}

enum splice_state splice_step(struct splice *s, enum splice_side side, uint32_t events,
                              bool *moved)
{
    *moved = false;
    bool readable = events & (EPOLLIN | EPOLLHUP | EPOLLERR);
    struct pipe_dir *in = side == SPLICE_GUEST ? &s->up : &s->down;
    struct pipe_dir *out = side == SPLICE_GUEST ? &s->down : &s->up;
    enum splice_state st = dir_step(s, in, readable, moved);
    if (st == SPLICE_GOING)
        st = dir_step(s, out, false, moved);
    if (st != SPLICE_GOING)
        return st;
    if (s->up.eof && s->up.len == 0 && s->down.eof && s->down.len == 0)
        return SPLICE_DONE;
    /* An error, or a hang-up that moved nothing (reported at every wait
     * until the fd goes): the peer is gone. */
    if ((events & EPOLLERR) || ((events & EPOLLHUP) && !*moved))
        return SPLICE_FAILED;
    return SPLICE_GOING;
}

uint32_t splice_interest(const struct splice *s, enum splice_side side)
{
    const struct pipe_dir *in = side == SPLICE_GUEST ? &s->up : &s->down;
    const struct pipe_dir *out = side == SPLICE_GUEST ? &s->down : &s->up;
    return (in->len == 0 && !in->eof ? EPOLLIN : 0) | (out->len > 0 ? EPOLLOUT : 0);
}

void splice_counts(const struct splice *s, uint64_t *sent, uint64_t *received)
{
    *sent = s->up.bytes;
    *received = s->down.bytes;
}
