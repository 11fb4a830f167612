/* How every service waits for its stop signal: SIGTERM, SIGINT and SIGHUP
 * are blocked before any thread starts (so no worker thread takes them),
 * and main later sleeps in stop_signals_wait() until a stop arrives. On
 * SIGHUP, and every STOP_SIGNALS_REFRESH_S besides (a Kubernetes Secret
 * is renewed in place and nobody sends a signal), the service rereads
 * its certificates (tls_credentials_refresh). */
#ifndef AIRLOCK_STOP_SIGNALS_H
#define AIRLOCK_STOP_SIGNALS_H

#include <signal.h>

#define STOP_SIGNALS_REFRESH_S 60

/* Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and so in every
 * thread it starts afterwards); fills set for stop_signals_wait(). */
void stop_signals_block(sigset_t *set);

/* Waits for SIGTERM or SIGINT and returns the signal number; calls
 * refresh(arg) at each SIGHUP and every STOP_SIGNALS_REFRESH_S meanwhile
 * (refresh may be NULL). */
int stop_signals_wait(const sigset_t *set, void (*refresh)(void *arg), void *arg);

#endif
