#include "stop_signals.h"

#include <pthread.h>
#include <time.h>

void stop_signals_block(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, set, NULL);
}

int stop_signals_wait(const sigset_t *set, void (*refresh)(void *arg), void *arg)
{
    const struct timespec period = { .tv_sec = STOP_SIGNALS_REFRESH_S };
    for (;;) {
        /* -1: the period passed (EAGAIN) or another signal (EINTR). */
        int sig = sigtimedwait(set, NULL, &period);
        if (sig == SIGTERM || sig == SIGINT)
            return sig;
        if (refresh)
            refresh(arg);
    }
}
