/* A watch's pending events (watch.c): coalesced and bounded, so a burst
 * of writes to one file costs one entry and no burst grows memory past
 * the bound. Pure data: no inotify, no frames (unit.test_watch_queue).
 *
 * Coalescing: a create, write or chmod whose path's newest pending event
 * has the same type merges into it (its time becomes the newer one). Only
 * the newest pending event of a path is considered, so the order of a
 * path's different events is kept (write, rename, write stays three).
 *
 * Bound: at most cap events; one past it is dropped and an overflow event
 * takes the extra slot at the end (once per run of drops), so the reader
 * sees where events were lost. */
#ifndef GUESTD_WATCH_QUEUE_H
#define GUESTD_WATCH_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest.pb-c.h"

typedef Airlock__Guest__V1__WatchEventType watch_type;

struct watch_event {
    watch_type type;
    char *path;      /* owned; for overflow a copy of the watched root */
    bool is_dir;
    int64_t unix_ms;
};

struct watch_queue {
    struct watch_event *ev; /* ring of cap + 1 (the overflow's slot) */
    size_t cap, head, n;
    const char *root;       /* the watched directory, an overflow's path */
};

/* root is borrowed: it must outlive the queue. */
int watch_queue_init(struct watch_queue *q, size_t cap, const char *root);
void watch_queue_free(struct watch_queue *q);

/* Adds an event (path copied); an overflow event when the queue is full.
 * -1 only when out of memory (an overflow then stands in for it too). */
int watch_queue_push(struct watch_queue *q, watch_type type, const char *path, bool is_dir,
                     int64_t unix_ms);
/* Events were lost (the kernel's IN_Q_OVERFLOW, a recursive watch past its
 * directories): an overflow event, merged into a pending one at the end. */
void watch_queue_overflow(struct watch_queue *q, int64_t unix_ms);

static inline size_t watch_queue_len(const struct watch_queue *q) { return q->n; }
/* The i-th oldest pending event (i < len). */
const struct watch_event *watch_queue_at(const struct watch_queue *q, size_t i);
/* Drops the n oldest events. */
void watch_queue_drop(struct watch_queue *q, size_t n);

#endif
