#include "reaper.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"

struct reaper_watch {
    pid_t pid;
    reaper_cb cb;
    void *ctx;
};

struct reaper {
    struct loop *loop;
    int sigfd;
    sigset_t old_mask;
    struct reaper_watch *watches;
    size_t n, cap;
};

static void reaper_on_signal(int fd, short revents, void *ctx)
{
    (void)revents;
    struct signalfd_siginfo si;
    /* Drain: several SIGCHLDs coalesce into one anyway. */
    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        ;
    reaper_reap(ctx);
}

struct reaper *reaper_new(struct loop *loop)
{
    struct reaper *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &chld, &r->old_mask) < 0)
        goto fail;
    r->sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    if (r->sigfd < 0)
        goto fail_mask;
    r->loop = loop;
    if (loop_watch(loop, r->sigfd, POLLIN, reaper_on_signal, r) < 0)
        goto fail_fd;
    return r;
fail_fd:
    close(r->sigfd);
fail_mask:
    sigprocmask(SIG_SETMASK, &r->old_mask, NULL);
fail:
    free(r);
    return NULL;
}

void reaper_free(struct reaper *r)
{
    if (!r)
        return;
    loop_unwatch(r->loop, r->sigfd);
    close(r->sigfd);
    sigprocmask(SIG_SETMASK, &r->old_mask, NULL);
    free(r->watches);
    free(r);
}

int reaper_watch(struct reaper *r, pid_t pid, reaper_cb cb, void *ctx)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        struct reaper_watch *nw = realloc(r->watches, cap * sizeof(*nw));
        if (!nw)
            return -1;
        r->watches = nw;
        r->cap = cap;
    }
    r->watches[r->n++] = (struct reaper_watch){ .pid = pid, .cb = cb, .ctx = ctx };
    return 0;
}

void reaper_unwatch(struct reaper *r, pid_t pid)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->watches[i].pid == pid) {
            r->watches[i] = r->watches[--r->n];
            return;
        }
    }
}

void reaper_reap(struct reaper *r)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        struct reaper_watch w = { 0 };
        for (size_t i = 0; i < r->n; i++) {
            if (r->watches[i].pid == pid) {
                w = r->watches[i];
                r->watches[i] = r->watches[--r->n];
                break;
            }
        }
        if (w.cb)
            w.cb(w.ctx, pid, status);
        else
            log_debug("reaped orphan", "pid=%d status=0x%x", (int)pid, status);
    }
}
