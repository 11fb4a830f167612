/* The framed host channel: length-prefixed GuestFrames over one fd.
 *
 * Two transports behave differently when the host goes away:
 *  - a virtio-serial port (reconnecting): read() returns 0 and poll() says
 *    POLLHUP while no host is connected. That is not end of file: the port
 *    stays open, we back off and retry, and the next host starts a new
 *    session. Frames sent while no host is connected are dropped.
 *  - a plain stream socket (--channel-fd, tests): end of file is final.
 *
 * Sending never blocks: frames are queued and written when the fd is
 * writable. While the queue is above a high-water mark the channel stops
 * reading requests, so a host that does not read answers cannot grow it
 * without bound (payload frames are bounded by the flow-control windows). */
#ifndef GUESTD_CHANNEL_H
#define GUESTD_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "frame.h"
#include "loop.h"

struct channel;

struct channel_handler {
    /* A decoded frame; the channel frees it when this returns. */
    void (*on_frame)(void *ctx, const GuestFrame *f);
    /* The host went away. final: the channel is closed for good (stream
     * socket EOF or error); otherwise a new host may connect later. */
    void (*on_hangup)(void *ctx, bool final);
};

/* Takes ownership of fd (made non-blocking) and starts reading. */
struct channel *channel_new(struct loop *loop, int fd, bool reconnecting,
                            const struct channel_handler *h, void *ctx);
void channel_free(struct channel *ch);

/* Queues f for the host; dropped (returns -1) when no host is connected or
 * it cannot be encoded. */
int channel_send(struct channel *ch, const GuestFrame *f);

/* Bytes queued but not yet written. */
size_t channel_backlog(const struct channel *ch);

#endif
