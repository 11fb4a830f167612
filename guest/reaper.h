/* Reaps every child of the daemon (as PID 1 that includes all orphans) and
 * hands the exit status of the ones somebody watches to their owner.
 * SIGCHLD arrives through a signalfd watched by the event loop. */
#ifndef GUESTD_REAPER_H
#define GUESTD_REAPER_H

#include <sys/types.h>

#include "loop.h"

struct reaper;

typedef void (*reaper_cb)(void *ctx, pid_t pid, int wait_status);

/* Blocks SIGCHLD for the calling thread (children inherit nothing: spawn
 * resets the mask) and watches it with a signalfd. */
struct reaper *reaper_new(struct loop *loop);
/* Restores the signal mask. Does not kill or wait for anything. */
void reaper_free(struct reaper *r);

int reaper_watch(struct reaper *r, pid_t pid, reaper_cb cb, void *ctx);
/* The pid's status will be reaped and discarded. */
void reaper_unwatch(struct reaper *r, pid_t pid);

/* Reaps all exited children now (also called on every SIGCHLD). */
void reaper_reap(struct reaper *r);

#endif
