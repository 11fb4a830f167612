#include "stop_signals.h"

#include <pthread.h>

void stop_signals_block(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, set, NULL);
}

int stop_signals_wait(const sigset_t *set, void (*on_hup)(void *arg), void *arg)
{
    for (;;) {
        int sig = 0;
        if (sigwait(set, &sig) != 0)
            continue;
        if (sig != SIGHUP)
            return sig;
        if (on_hup)
            on_hup(arg);
    }
}
