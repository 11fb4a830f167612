#include "channel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* Stop reading requests while this much output waits for the host. */
#define CHANNEL_HIGH_WATER (8u << 20)
/* Retry interval while no host is connected to the virtio port: short, as
 * a restored VM waits here for its new host and every ms counts. */
#define CHANNEL_RETRY_MS 5
#define CHANNEL_READ_CHUNK (64u << 10)

struct out_buf {
    struct out_buf *next;
    uint8_t *data;
    size_t len, off;
};

struct channel {
    struct loop *loop;
    int fd;
    bool reconnecting;
    bool connected; /* a host is there: we read bytes since the last hangup */
    bool closed;    /* final: never reads or writes again */
    struct frame_decoder decoder;
    struct out_buf *head, *tail;
    size_t backlog;
    uint64_t retry_timer;
    const struct channel_handler *handler;
    void *ctx;
};

static void channel_on_io(int fd, short revents, void *ctx);

static void channel_update_events(struct channel *ch)
{
    if (ch->closed || ch->retry_timer)
        return;
    short events = 0;
    if (ch->backlog < CHANNEL_HIGH_WATER)
        events |= POLLIN;
    if (ch->head)
        events |= POLLOUT;
    loop_set_events(ch->loop, ch->fd, events);
}

static void channel_drop_output(struct channel *ch)
{
    while (ch->head) {
        struct out_buf *b = ch->head;
        ch->head = b->next;
        free(b->data);
        free(b);
    }
    ch->tail = NULL;
    ch->backlog = 0;
}

static void channel_retry(void *ctx)
{
    struct channel *ch = ctx;
    ch->retry_timer = 0;
    loop_watch(ch->loop, ch->fd, POLLIN, channel_on_io, ch);
}

/* The host is gone: on a virtio port wait for the next one (the port keeps
 * reporting POLLHUP until then, so stop polling it for a while instead of
 * spinning); on a stream socket this is the end. */
static void channel_hangup(struct channel *ch)
{
    bool was_connected = ch->connected;
    ch->connected = false;
    channel_drop_output(ch);
    /* A half frame from a vanished host is garbage. */
    frame_decoder_free(&ch->decoder);
    frame_decoder_init(&ch->decoder);
    loop_unwatch(ch->loop, ch->fd);
    if (!ch->reconnecting) {
        ch->closed = true;
        log_info("host channel closed", "fd=%d", ch->fd);
        ch->handler->on_hangup(ch->ctx, true);
        return;
    }
    ch->retry_timer = loop_add_timer(ch->loop, CHANNEL_RETRY_MS, channel_retry, ch);
    if (was_connected) {
        log_debug("host disconnected", "fd=%d", ch->fd);
        ch->handler->on_hangup(ch->ctx, false);
    }
}

static void channel_dispatch_frames(struct channel *ch)
{
    for (;;) {
        GuestFrame *f;
        enum frame_status st = frame_decoder_next(&ch->decoder, &f);
        if (st == FRAME_NEED_MORE)
            return;
        if (st == FRAME_MALFORMED) {
            /* The length was sane: the decoder skipped exactly that frame. */
            log_warn("malformed frame from host", "error=\"%s\"", frame_status_str(st));
            continue;
        }
        if (st != FRAME_OK) {
            /* Out of sync: drop what we have and carry on; the host
             * recovers by reconnecting. */
            log_warn("bad frame from host", "error=\"%s\"", frame_status_str(st));
            frame_decoder_free(&ch->decoder);
            frame_decoder_init(&ch->decoder);
            return;
        }
        ch->handler->on_frame(ch->ctx, f);
        frame_free(f);
        if (ch->closed || !ch->connected)
            return;
    }
}

static void channel_read(struct channel *ch)
{
    uint8_t buf[CHANNEL_READ_CHUNK];
    ssize_t n = read(ch->fd, buf, sizeof(buf));
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return;
        log_warn("channel read failed", "errno=%d error=\"%s\"", errno, strerror(errno));
        channel_hangup(ch);
        return;
    }
    if (n == 0) {
        channel_hangup(ch);
        return;
    }
    if (!ch->connected) {
        ch->connected = true;
        log_debug("host connected", "fd=%d", ch->fd);
    }
    if (frame_decoder_feed(&ch->decoder, buf, (size_t)n) < 0) {
        log_error("out of memory buffering a frame", "bytes=%zd", n);
        frame_decoder_free(&ch->decoder);
        frame_decoder_init(&ch->decoder);
        return;
    }
    channel_dispatch_frames(ch);
}

static void channel_flush(struct channel *ch)
{
    while (ch->head) {
        struct out_buf *b = ch->head;
        ssize_t n = write(ch->fd, b->data + b->off, b->len - b->off);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return;
            log_warn("channel write failed", "errno=%d error=\"%s\"", errno, strerror(errno));
            channel_hangup(ch);
            return;
        }
        b->off += (size_t)n;
        ch->backlog -= (size_t)n;
        if (b->off < b->len)
            return;
        ch->head = b->next;
        if (!ch->head)
            ch->tail = NULL;
        free(b->data);
        free(b);
    }
}

static void channel_on_io(int fd, short revents, void *ctx)
{
    (void)fd;
    struct channel *ch = ctx;
    if (revents & POLLIN)
        channel_read(ch);
    else if (revents & (POLLHUP | POLLERR | POLLNVAL))
        channel_hangup(ch);
    if (!ch->closed && !ch->retry_timer && (revents & POLLOUT))
        channel_flush(ch);
    channel_update_events(ch);
}

struct channel *channel_new(struct loop *loop, int fd, bool reconnecting,
                            const struct channel_handler *h, void *ctx)
{
    struct channel *ch = calloc(1, sizeof(*ch));
    if (!ch)
        return NULL;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        goto fail;
    ch->loop = loop;
    ch->fd = fd;
    ch->reconnecting = reconnecting;
    /* A stream socket is connected from the start; on a virtio port we
     * only know a host is there once it sends something (its Hello). */
    ch->connected = !reconnecting;
    ch->handler = h;
    ch->ctx = ctx;
    frame_decoder_init(&ch->decoder);
    if (loop_watch(loop, fd, POLLIN, channel_on_io, ch) < 0)
        goto fail;
    return ch;
fail:
    free(ch);
    return NULL;
}

void channel_free(struct channel *ch)
{
    if (!ch)
        return;
    loop_unwatch(ch->loop, ch->fd);
    loop_cancel_timer(ch->loop, ch->retry_timer);
    channel_drop_output(ch);
    frame_decoder_free(&ch->decoder);
    close(ch->fd);
    free(ch);
}

int channel_send(struct channel *ch, const GuestFrame *f)
{
    if (!ch->connected || ch->closed)
        return -1;
    struct out_buf *b = calloc(1, sizeof(*b));
    if (!b)
        return -1;
    if (frame_encode(f, &b->data, &b->len) < 0) {
        log_error("cannot encode frame", "stream=%u body=%d errno=%d", f->stream_id,
                  (int)f->body_case, errno);
        free(b);
        return -1;
    }
    if (ch->tail)
        ch->tail->next = b;
    else
        ch->head = b;
    ch->tail = b;
    ch->backlog += b->len;
    channel_update_events(ch);
    return 0;
}

size_t channel_backlog(const struct channel *ch)
{
    return ch->backlog;
}
