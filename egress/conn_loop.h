/* The threads guest TCP connections live on while egress reads their first
 * bytes, dials and splices them (egress_tcp.c): each thread an epoll loop
 * over many connections, so a connection costs its descriptors and
 * buffers, not a thread. Connections are spread over the threads as they
 * arrive; one connection's callbacks all run on the same thread, so its
 * state needs no lock of its own while it is on the loop.
 *
 * The threads live in the uplink namespace: the sockets their callbacks
 * make (the dials) leave from there, as do threads they start. */
#ifndef AIRLOCK_EGRESS_CONN_LOOP_H
#define AIRLOCK_EGRESS_CONN_LOOP_H

#include <stddef.h>
#include <stdint.h>

struct conn_loop;
struct conn_loop_thread;
struct conn_loop_item;

struct conn_loop_ops {
    /* Handed over by conn_loop_submit, now on the item's thread. */
    void (*start)(struct conn_loop_item *it);
    /* A watched fd is ready: its tag and what epoll reports for it. */
    void (*ready)(struct conn_loop_item *it, int tag, uint32_t events);
    /* The deadline set with conn_loop_deadline has passed. */
    void (*expired)(struct conn_loop_item *it);
};

/* Embedded in the caller's connection. Zero it, set ops, submit. The
 * fields after ops belong to conn_loop.c. */
struct conn_loop_item {
    const struct conn_loop_ops *ops;
    struct conn_loop_thread *thread;  /* chosen at the first submit, kept */
    struct conn_loop_item *submit_next;
    struct conn_loop_item *timer_prev, *timer_next;
    struct conn_timer_list *timers;   /* NULL: no deadline */
    int64_t deadline_ms;
    void (*after)(struct conn_loop_item *it); /* set: leaving (conn_loop_leave) */
    struct conn_loop_item *leave_next;
};

/* threads: how many loops (at least 1). NULL with err when a thread cannot
 * start or enter uplink_netns (NULL = stay in the caller's namespace). */
struct conn_loop *conn_loop_new(unsigned threads, const char *uplink_netns, char *err,
                                size_t errlen);
/* Stops the threads. Every item must have left the loop first. */
void conn_loop_free(struct conn_loop *l);

/* From any thread: ops->start(it) runs soon on its thread. The item must
 * not be on the loop at the time (never submitted, or it left). */
void conn_loop_submit(struct conn_loop *l, struct conn_loop_item *it);

/* The rest only from the item's own callbacks, on its thread. */

/* Watches fd (level-triggered) for events (EPOLLIN, EPOLLOUT; errors and
 * hang-ups always), replacing what it was watched for. -1 with errno. */
int conn_loop_watch(struct conn_loop_item *it, int fd, int tag, uint32_t events);
/* Stops watching fd (before it is closed or handed to another thread). */
void conn_loop_unwatch(struct conn_loop_item *it, int fd);
/* ops->expired(it) after timeout_ms, replacing any earlier deadline;
 * timeout_ms < 0 clears it. Cheap to call on every byte moved: deadlines
 * of one duration are kept in arrival order. */
void conn_loop_deadline(struct conn_loop_item *it, int timeout_ms);
/* The item leaves the loop: its deadline is cleared, events already
 * collected for it are dropped, and after(it) runs on the thread once the
 * current round of callbacks is over — where it may free the item or hand
 * it to another thread. Unwatch its fds first. */
void conn_loop_leave(struct conn_loop_item *it, void (*after)(struct conn_loop_item *it));

#endif
