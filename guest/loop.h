/* A small single-threaded poll() event loop in the spirit of Redis's ae:
 * file descriptors with a callback each, and one-shot timers.
 *
 * Callbacks are looked up by fd at dispatch time, so an object that
 * unwatches its fds (and frees itself) inside a callback never receives a
 * stale event later in the same iteration. */
#ifndef GUESTD_LOOP_H
#define GUESTD_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;

typedef void (*loop_fd_cb)(int fd, short revents, void *ctx);
typedef void (*loop_timer_cb)(void *ctx);

struct loop *loop_new(void);
void loop_free(struct loop *l);

/* Registers fd (or replaces its registration). events may be 0: the fd is
 * then not polled at all, so not even POLLHUP wakes the loop for it. */
int loop_watch(struct loop *l, int fd, short events, loop_fd_cb cb, void *ctx);
void loop_set_events(struct loop *l, int fd, short events);
void loop_unwatch(struct loop *l, int fd);

/* One-shot timer; returns its id (never 0). delay_ms 0 runs it on the next
 * iteration without sleeping. */
uint64_t loop_add_timer(struct loop *l, int64_t delay_ms, loop_timer_cb cb, void *ctx);
/* Cancelling id 0 or an expired timer is a no-op. */
void loop_cancel_timer(struct loop *l, uint64_t id);

/* Waits for events (at most until the next timer) and dispatches them.
 * Returns -1 only when poll() itself fails for a reason other than EINTR. */
int loop_run_once(struct loop *l);
void loop_stop(struct loop *l);
bool loop_stopped(const struct loop *l);


#endif
