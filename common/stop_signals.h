/* How every service waits for its stop signal: SIGTERM and SIGINT are
 * blocked before any thread starts (so no worker thread takes them), and
 * main later sleeps in stop_signals_wait() until one arrives. */
#ifndef AIRLOCK_STOP_SIGNALS_H
#define AIRLOCK_STOP_SIGNALS_H

#include <signal.h>

/* Blocks SIGTERM and SIGINT in the calling thread (and so in every thread
 * it starts afterwards); fills set for stop_signals_wait(). */
void stop_signals_block(sigset_t *set);

/* Waits for SIGTERM or SIGINT; returns the signal number. */
int stop_signals_wait(const sigset_t *set);

#endif
