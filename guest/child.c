#include "child.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "frame.h"
#include "log.h"

static void child_on_fd(int fd, short revents, void *ctx);

/* One fd may serve both directions (the PTY master): compute its events
 * from both roles. */
static short child_fd_events(const struct child *c, int fd)
{
    short events = 0;
    for (int i = 0; i < 2; i++)
        if (c->out_fd[i] == fd && c->ops->output_budget(c->owner) > 0)
            events |= POLLIN;
    if (c->stdin_fd == fd && (c->stdin_queue.len > 0 || c->stdin_eof))
        events |= POLLOUT;
    return events;
}

static void child_update_events(struct child *c)
{
    for (int i = 0; i < 2; i++)
        if (c->out_fd[i] >= 0)
            loop_set_events(c->loop, c->out_fd[i], child_fd_events(c, c->out_fd[i]));
    if (c->stdin_fd >= 0)
        loop_set_events(c->loop, c->stdin_fd, child_fd_events(c, c->stdin_fd));
}

static void child_close_fd(struct child *c, int fd)
{
    loop_unwatch(c->loop, fd);
    close(fd);
}

static void child_close_stdin(struct child *c)
{
    if (c->stdin_fd < 0)
        return;
    if (c->stdin_host_bytes && c->ops->on_stdin_consumed)
        c->ops->on_stdin_consumed(c->owner, c->stdin_host_bytes);
    if (!c->pty) /* the PTY master is closed by child_destroy */
        child_close_fd(c, c->stdin_fd);
    c->stdin_fd = -1;
    byte_queue_clear(&c->stdin_queue);
    c->stdin_host_bytes = 0;
    c->stdin_eof = false;
}

static void child_close_output(struct child *c, int i)
{
    int fd = c->out_fd[i];
    c->out_fd[i] = -1;
    if (!c->pty) {
        child_close_fd(c, fd);
        return;
    }
    /* EIO on the master: every slave fd is closed, but closing the master
     * now would hang up the terminal and SIGHUP a program that is still
     * exiting. Stop polling; child_destroy closes it. */
    child_close_stdin(c);
    loop_unwatch(c->loop, fd);
}

static void child_check_done(struct child *c)
{
    if (!c->exited || c->out_fd[0] >= 0 || c->out_fd[1] >= 0)
        return;
    loop_cancel_timer(c->loop, c->grace_timer);
    c->grace_timer = 0;
    c->ops->on_done(c->owner); /* may free c */
}

static void child_read_output(struct child *c, int i)
{
    uint8_t buf[AIRLOCK_CHUNK_MAX];
    size_t want = c->ops->output_budget(c->owner);
    if (want > sizeof(buf))
        want = sizeof(buf);
    if (c->draining && want > c->drain_left[i])
        want = c->drain_left[i];
    if (want == 0)
        return;
    ssize_t n = read(c->out_fd[i], buf, want);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        /* EOF; on a PTY master EIO means every slave fd is closed. */
        if (n < 0 && errno != EIO)
            log_warn("reading child output failed", "pid=%d errno=%d", (int)c->pid, errno);
        child_close_output(c, i);
        return;
    }
    if (c->draining) {
        c->drain_left[i] -= (size_t)n;
        if (c->drain_left[i] == 0)
            child_close_output(c, i);
    }
    c->ops->on_output(c->owner, c->pty ? 1 : i + 1, buf, (size_t)n);
}

static void child_flush_stdin(struct child *c)
{
    while (c->stdin_queue.len > 0) {
        ssize_t n = byte_queue_write(&c->stdin_queue, c->stdin_fd);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n < 0) { /* EPIPE: the program closed its stdin */
            child_close_stdin(c);
            return;
        }
        size_t host = (size_t)n < c->stdin_host_bytes ? (size_t)n : c->stdin_host_bytes;
        c->stdin_host_bytes -= host;
        if (host && c->ops->on_stdin_consumed)
            c->ops->on_stdin_consumed(c->owner, host);
    }
    if (c->stdin_eof)
        child_close_stdin(c);
}

static void child_on_fd(int fd, short revents, void *ctx)
{
    struct child *c = ctx;
    if (fd == c->stdin_fd && (revents & (POLLOUT | POLLERR | POLLHUP)))
        child_flush_stdin(c);
    for (int i = 0; i < 2; i++)
        if (fd == c->out_fd[i] && (revents & (POLLIN | POLLHUP | POLLERR)))
            child_read_output(c, i);
    child_update_events(c);
    child_check_done(c);
}

/* Descendants may hold the pipes open forever: forward only what is in
 * them now, then stop. */
static void child_on_grace(void *ctx)
{
    struct child *c = ctx;
    c->grace_timer = 0;
    c->draining = true;
    for (int i = 0; i < 2; i++) {
        int pending = 0;
        if (c->out_fd[i] < 0)
            continue;
        if (ioctl(c->out_fd[i], FIONREAD, &pending) < 0 || pending <= 0)
            child_close_output(c, i);
        else
            c->drain_left[i] = (size_t)pending;
    }
    child_update_events(c);
    child_check_done(c);
}

static void child_on_timeout(void *ctx)
{
    struct child *c = ctx;
    c->timeout_timer = 0;
    c->timed_out = true;
    log_info("exec timed out", "pid=%d", (int)c->pid);
    killpg(c->pid, SIGKILL);
}

static void child_on_exit(void *ctx, pid_t pid, int wait_status)
{
    (void)pid;
    struct child *c = ctx;
    c->exited = true;
    c->wait_status = wait_status;
    loop_cancel_timer(c->loop, c->timeout_timer);
    c->timeout_timer = 0;
    if (c->out_fd[0] >= 0 || c->out_fd[1] >= 0)
        c->grace_timer = loop_add_timer(c->loop, CHILD_DRAIN_GRACE_MS, child_on_grace, c);
    child_check_done(c);
}

int child_start(struct child *c, struct loop *loop, struct reaper *reaper,
                const struct spawn_spec *spec, uint32_t timeout_ms,
                const struct child_owner *ops, void *owner, char *msg, size_t msglen)
{
    memset(c, 0, sizeof(*c));
    c->loop = loop;
    c->reaper = reaper;
    c->ops = ops;
    c->owner = owner;
    c->out_fd[0] = c->out_fd[1] = c->stdin_fd = c->pty_master = -1;
    byte_queue_init(&c->stdin_queue);
    struct spawned sp;
    int err = spawn_start(spec, &sp, msg, msglen);
    if (err)
        return err;
    c->pid = sp.pid;
    c->pty = spec->pty;
    c->pty_master = sp.pty_fd;
    c->out_fd[0] = spec->pty ? sp.pty_fd : sp.stdout_fd;
    c->out_fd[1] = sp.stderr_fd;
    c->stdin_fd = spec->pty ? sp.pty_fd : sp.stdin_fd;
    int fds[] = { c->out_fd[0], c->out_fd[1], c->stdin_fd };
    for (size_t i = 0; i < 3; i++)
        if (fds[i] >= 0 && loop_watch(loop, fds[i], 0, child_on_fd, c) < 0)
            goto nomem;
    if (reaper_watch(reaper, c->pid, child_on_exit, c) < 0)
        goto nomem;
    if (timeout_ms && !(c->timeout_timer = loop_add_timer(loop, timeout_ms, child_on_timeout, c)))
        goto nomem;
    child_update_events(c);
    return 0;
nomem:
    snprintf(msg, msglen, "exec: out of memory");
    child_destroy(c);
    return ENOMEM;
}

void child_destroy(struct child *c)
{
    if (!c->loop) /* never started */
        return;
    if (!c->exited && c->pid > 0) {
        killpg(c->pid, SIGKILL);
        reaper_unwatch(c->reaper, c->pid);
        c->exited = true;
    }
    loop_cancel_timer(c->loop, c->timeout_timer);
    loop_cancel_timer(c->loop, c->grace_timer);
    c->timeout_timer = c->grace_timer = 0;
    c->stdin_host_bytes = 0; /* no callbacks from here on */
    child_close_stdin(c);
    for (int i = 0; i < 2; i++)
        if (c->out_fd[i] >= 0)
            child_close_output(c, i);
    if (c->pty_master >= 0)
        close(c->pty_master);
    c->pty_master = -1;
}

void child_resume_output(struct child *c)
{
    child_update_events(c);
}

int child_write_stdin(struct child *c, const void *data, size_t len, bool eof)
{
    if (c->stdin_fd < 0 || c->stdin_eof)
        return -1;
    if (byte_queue_push(&c->stdin_queue, data, len) < 0)
        return -1;
    c->stdin_host_bytes += len;
    if (eof) {
        /* A terminal has no half-close: send its EOF character instead. */
        if (c->pty)
            byte_queue_push(&c->stdin_queue, "\x04", 1);
        else
            c->stdin_eof = true;
    }
    child_update_events(c);
    return 0;
}

int child_signal(struct child *c, int sig)
{
    if (c->exited)
        return ESRCH;
    return killpg(c->pid, sig) < 0 ? errno : 0;
}

int child_resize(struct child *c, uint32_t rows, uint32_t cols)
{
    if (!c->pty || c->out_fd[0] < 0)
        return ENOTTY;
    struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
    return ioctl(c->out_fd[0], TIOCSWINSZ, &ws) < 0 ? errno : 0;
}
