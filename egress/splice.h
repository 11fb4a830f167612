/* The two-way copy of an allowed guest connection and its upstream, one
 * step per readiness event (conn_loop.h): bytes read from one side are
 * written to the other before more are read, so each direction holds at
 * most one buffer. With an HTTP follower the guest's requests are checked
 * one by one as they pass (http_follow.h); the server's answers only tell
 * the follower about an upgrade. */
#ifndef AIRLOCK_EGRESS_SPLICE_H
#define AIRLOCK_EGRESS_SPLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_follow.h"

/* Each direction's buffer: it also holds a request head the follower
 * keeps back (up to 16 KiB) and the first bytes read while deciding. */
#define SPLICE_BUF (64 * 1024)

enum splice_side { SPLICE_GUEST, SPLICE_UPSTREAM };

enum splice_state {
    SPLICE_GOING,
    SPLICE_DONE,      /* both sides finished sending and everything was written */
    SPLICE_FAILED,    /* a side broke (reset, error) */
    SPLICE_REFUSED,   /* the follower refused a later request */
};

struct splice;

/* Over the non-blocking sockets guest and upstream (not owned). first
 * (SPLICE_BUF bytes, taken over) holds first_len bytes the guest sent
 * already, of which first_ready were checked and may go; the rest begin a
 * head the follower holds. follow (taken over) may be NULL. NULL when out
 * of memory (first and follow are freed). */
struct splice *splice_new(int guest, int upstream, uint8_t *first, size_t first_len,
                          size_t first_ready, struct http_follow *follow);
void splice_free(struct splice *s);

/* side is ready with epoll's events for it: moves what it can. Returns
 * whether anything moved in *moved. */
enum splice_state splice_step(struct splice *s, enum splice_side side, uint32_t events,
                              bool *moved);
/* What each side must be watched for now (EPOLLIN/EPOLLOUT). */
uint32_t splice_interest(const struct splice *s, enum splice_side side);
/* Bytes written to the upstream and to the guest so far. */
void splice_counts(const struct splice *s, uint64_t *sent, uint64_t *received);

#endif
