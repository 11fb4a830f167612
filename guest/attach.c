/* AttachRequest: a stream that replays a background process's output ring
 * from a cursor as the host grants window, then (follow) keeps streaming
 * new output and ends with ExecExit, or (no follow) ends with Result once
 * it replayed what the ring held at attach time. */
#include <errno.h>
#include <stdlib.h>

#include "guestd_state.h"
#include "process_table.h"
#include "request_handlers.h"
#include "send.h"
#include "stream.h"

struct attach_stream {
    struct stream base;
    struct process_attacher attacher; /* in the process's attachers */
    struct bg_process *proc;
    uint64_t cursor; /* next ring position to send */
    uint64_t end;    /* without follow: stop here */
    bool follow;
    uint64_t window;
};

/* Sends what the window allows; ends the stream when it is complete. */
static void attach_pump(struct attach_stream *a)
{
    struct bg_process *p = a->proc;
    struct guestd *g = a->base.g;
    uint8_t buf[AIRLOCK_CHUNK_MAX];
    uint64_t limit = a->follow ? p->output.total : a->end;
    /* Output the ring already overwrote is lost to this reader. */
    if (a->cursor < ring_start(&p->output))
        a->cursor = ring_start(&p->output);
    while (a->cursor < limit && a->window > 0) {
        size_t want = a->window < sizeof(buf) ? (size_t)a->window : sizeof(buf);
        uint64_t chunk_end;
        int fd = process_output_fd(p, a->cursor, &chunk_end); /* one fd per chunk */
        if (chunk_end > limit)
            chunk_end = limit;
        if (chunk_end - a->cursor < want)
            want = (size_t)(chunk_end - a->cursor);
        size_t n = ring_read(&p->output, a->cursor, buf, want);
        if (n == 0)
            break;
        guestd_send_output(g, a->base.id, fd, buf, n);
        a->cursor += n;
        a->window -= n;
    }
    if (a->cursor < limit)
        return;
    if (!a->follow)
        guestd_send_result(g, a->base.id, 0, NULL);
    else if (!p->running)
        guestd_send_exec_exit(g, a->base.id, p->wait_status, p->timed_out);
    else
        return;
    guestd_stream_end(&a->base);
}

static void attach_wake(struct process_attacher *pa)
{
    attach_pump((struct attach_stream *)((char *)pa - offsetof(struct attach_stream, attacher)));
}

static void attach_on_window(struct stream *s, uint32_t bytes)
{
    struct attach_stream *a = (struct attach_stream *)s;
    a->window = window_add(a->window, bytes);
    attach_pump(a);
}

static void attach_destroy(struct stream *s)
{
    struct attach_stream *a = (struct attach_stream *)s;
    list_remove(&a->attacher.node);
    free(a);
}

static const struct stream_ops attach_stream_ops = {
    .kind = "attach",
    .on_window = attach_on_window,
    .destroy = attach_destroy,
};

void attach_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__AttachRequest *r = frame->attach;
    struct bg_process *p = process_table_find_or_reply(g, id, r->pid);
    if (!p)
        return;
    struct attach_stream *a = calloc(1, sizeof(*a));
    if (!a) {
        guestd_send_result(g, id, ENOMEM, "attach: out of memory");
        return;
    }
    a->proc = p;
    a->cursor = ring_start(&p->output);
    a->end = p->output.total;
    a->follow = r->follow;
    a->window = AIRLOCK_STREAM_WINDOW;
    guestd_stream_add(g, &a->base, id, &attach_stream_ops);
    a->attacher.wake = attach_wake;
    list_add_tail(&p->attachers, &a->attacher.node);
    attach_pump(a);
}
