/* ExecRequest: a foreground exec is a stream whose output is forwarded as
 * the host grants window; a background exec goes to the process table. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "child.h"
#include "exec_spec.h"
#include "guestd_state.h"
#include "log.h"
#include "process_table.h"
#include "request_handlers.h"
#include "send.h"
#include "stream.h"

struct exec_stream {
    struct stream base;
    struct child child;
    uint64_t window; /* output bytes the host still accepts */
};

static size_t exec_output_budget(void *owner)
{
    struct exec_stream *e = owner;
    return (size_t)e->window;
}

static void exec_on_output(void *owner, int fd, const uint8_t *data, size_t len)
{
    struct exec_stream *e = owner;
    e->window -= len;
    guestd_touch(e->base.g);
    guestd_send_output(e->base.g, e->base.id, fd, data, len);
}

static void exec_on_stdin_consumed(void *owner, size_t len)
{
    struct exec_stream *e = owner;
    guestd_send_window(e->base.g, e->base.id, len);
}

static void exec_on_done(void *owner)
{
    struct exec_stream *e = owner;
    guestd_send_exec_exit(e->base.g, e->base.id, e->child.wait_status, e->child.timed_out);
    guestd_stream_end(&e->base);
}

static const struct child_owner exec_child_owner = {
    .output_budget = exec_output_budget,
    .on_output = exec_on_output,
    .on_stdin_consumed = exec_on_stdin_consumed,
    .on_done = exec_on_done,
};

static void exec_on_data(struct stream *s, const Airlock__Guest__V1__Data *d)
{
    struct exec_stream *e = (struct exec_stream *)s;
    if (e->child.stdin_host_bytes + d->data.len > AIRLOCK_STREAM_WINDOW) {
        /* The host ignored its window: refuse rather than buffer. */
        guestd_send_result(s->g, s->id, EPROTO, "exec: stdin beyond the flow-control window");
        guestd_stream_end(s);
        return;
    }
    /* Stdin the program can no longer take is dropped, but credited, so
     * the host is never stuck on a full window. */
    if (child_write_stdin(&e->child, d->data.data, d->data.len, d->eof) < 0 && d->data.len)
        guestd_send_window(s->g, s->id, d->data.len);
}

static void exec_on_window(struct stream *s, uint32_t bytes)
{
    struct exec_stream *e = (struct exec_stream *)s;
    e->window = window_add(e->window, bytes);
    child_resume_output(&e->child);
}

static void exec_on_resize(struct stream *s, uint32_t rows, uint32_t cols)
{
    struct exec_stream *e = (struct exec_stream *)s;
    int err = child_resize(&e->child, rows, cols);
    if (err)
        log_debug("resize failed", "stream=%u errno=%d", s->id, err);
}

static void exec_on_signal(struct stream *s, int signo)
{
    struct exec_stream *e = (struct exec_stream *)s;
    if (signo < 0 || signo >= NSIG)
        return;
    child_signal(&e->child, signo);
}

static void exec_destroy(struct stream *s)
{
    struct exec_stream *e = (struct exec_stream *)s;
    child_destroy(&e->child);
    free(e);
}

static const struct stream_ops exec_stream_ops = {
    .kind = "exec",
    .on_data = exec_on_data,
    .on_window = exec_on_window,
    .on_resize = exec_on_resize,
    .on_signal = exec_on_signal,
    .destroy = exec_destroy,
};

void exec_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__ExecRequest *r = frame->exec;
    char msg[1024];
    struct exec_spec spec;
    struct exec_stream *e = NULL;
    int err = exec_spec_build(&spec, r, msg, sizeof(msg));
    if (err)
        goto fail;
    if (r->background) {
        pid_t pid;
        err = process_table_start(g->processes, &spec.spawn, r, &pid, msg, sizeof(msg));
        if (err)
            goto fail;
        exec_spec_free(&spec);
        guestd_send_exec_started(g, id, pid);
        guestd_send_result(g, id, 0, NULL);
        return;
    }
    err = ENOMEM;
    if (!(e = calloc(1, sizeof(*e))))
        goto fail;
    e->window = AIRLOCK_STREAM_WINDOW;
    err = child_start(&e->child, g->loop, g->reaper, &spec.spawn, r->timeout_ms,
                      &exec_child_owner, e, msg, sizeof(msg));
    if (err)
        goto fail;
    exec_spec_free(&spec);
    guestd_stream_add(g, &e->base, id, &exec_stream_ops);
    log_debug("exec started", "stream=%u pid=%d pty=%d", id, (int)e->child.pid, (int)r->pty);
    guestd_send_exec_started(g, id, e->child.pid);
    return;
fail:
    free(e);
    exec_spec_free(&spec);
    log_info("exec failed", "stream=%u errno=%d", id, err);
    guestd_send_result(g, id, err, "%s", msg);
}
