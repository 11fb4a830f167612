/* A stream: one operation the host opened with a request frame that lives
 * beyond that frame (foreground exec, attach, file read/write, directory
 * listing). The daemon routes the host's follow-up frames (Data,
 * WindowUpdate, Resize, Signal) to it by stream id, and destroys it on
 * Cancel, at session end, or when it sent its terminal frame. */
#ifndef GUESTD_STREAM_H
#define GUESTD_STREAM_H

#include <stdint.h>

#include "frame.h"
#include "list.h"

struct guestd;
struct stream;

/* Every op except destroy may be NULL (the frame is then ignored). */
struct stream_ops {
    const char *kind;
    void (*on_data)(struct stream *s, const Airlock__Guest__V1__Data *d);
    void (*on_window)(struct stream *s, uint32_t bytes);
    void (*on_resize)(struct stream *s, uint32_t rows, uint32_t cols);
    void (*on_signal)(struct stream *s, int signo);
    /* Releases everything (kills a foreground exec, unlinks a partial
     * file) and frees s. Sends nothing. */
    void (*destroy)(struct stream *s);
};

struct stream {
    struct list_node node; /* in guestd's stream list */
    uint32_t id;
    const struct stream_ops *ops;
    struct guestd *g;
};

/* The daemon's open streams (stream.c), in struct guestd: a handler
 * that opens a stream adds it; the host's follow-up frames find it by id. */
void guestd_stream_add(struct guestd *g, struct stream *s, uint32_t id,
                       const struct stream_ops *ops);
/* NULL when no open stream has id. */
struct stream *guestd_stream_find(struct guestd *g, uint32_t id);
/* Unlinks and destroys s; call after its terminal frame. */
void guestd_stream_end(struct stream *s);
/* At a session's end: foreground execs die, transfers are aborted;
 * background processes live on in the process table. */
void guestd_stream_end_all(struct guestd *g);

/* Adds credit to a send window without overflowing. */
static inline uint64_t window_add(uint64_t window, uint32_t bytes)
{
    uint64_t w = window + bytes;
    return w > (uint64_t)1 << 40 ? (uint64_t)1 << 40 : w;
}

#endif
