/* How every service waits for its stop signal: SIGTERM, SIGINT and SIGHUP
 * are blocked before any thread starts (so no worker thread takes them),
 * and main later sleeps in stop_signals_wait() until a stop arrives;
 * SIGHUP reloads (the TLS certificates: tls_credentials.h). */
#ifndef AIRLOCK_STOP_SIGNALS_H
#define AIRLOCK_STOP_SIGNALS_H

#include <signal.h>

/* Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and so in every
 * thread it starts afterwards); fills set for stop_signals_wait(). */
void stop_signals_block(sigset_t *set);

/* Waits for SIGTERM or SIGINT and returns the signal number; calls
 * on_hup(arg) for each SIGHUP meanwhile (on_hup may be NULL). */
int stop_signals_wait(const sigset_t *set, void (*on_hup)(void *arg), void *arg);

#endif
