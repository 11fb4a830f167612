#include "frame.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int frame_encode(const GuestFrame *f, uint8_t **out, size_t *out_len)
{
    size_t n = airlock__guest__v1__guest_frame__get_packed_size(f);
    if (n > AIRLOCK_FRAME_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    uint8_t *buf = malloc(AIRLOCK_FRAME_HEADER + n);
    if (!buf)
        return -1;
    buf[0] = (uint8_t)(n >> 24);
    buf[1] = (uint8_t)(n >> 16);
    buf[2] = (uint8_t)(n >> 8);
    buf[3] = (uint8_t)n;
    airlock__guest__v1__guest_frame__pack(f, buf + AIRLOCK_FRAME_HEADER);
    *out = buf;
    *out_len = AIRLOCK_FRAME_HEADER + n;
    return 0;
}

void frame_decoder_init(struct frame_decoder *d)
{
    memset(d, 0, sizeof(*d));
}

void frame_decoder_free(struct frame_decoder *d)
{
    free(d->buf);
    memset(d, 0, sizeof(*d));
}

/* Moves the undecoded bytes to the front of the buffer. */
static void frame_decoder_compact(struct frame_decoder *d)
{
    memmove(d->buf, d->buf + d->off, d->len - d->off);
    d->len -= d->off;
    d->off = 0;
}

int frame_decoder_feed(struct frame_decoder *d, const void *data, size_t len)
{
    if (len == 0)
        return 0;
    /* Each compaction moves no more than was consumed since the last. */
    if (d->off > 0 && d->off >= d->len - d->off)
        frame_decoder_compact(d);
    if (d->len + len > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + len)
            cap *= 2;
        uint8_t *nb = realloc(d->buf, cap);
        if (!nb)
            return -1;
        d->buf = nb;
        d->cap = cap;
    }
    memcpy(d->buf + d->len, data, len);
    d->len += len;
    return 0;
}

static uint32_t frame_length_prefix(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

enum frame_status frame_decoder_next(struct frame_decoder *d, GuestFrame **out)
{
    *out = NULL;
    size_t avail = d->len - d->off;
    if (avail < AIRLOCK_FRAME_HEADER)
        return FRAME_NEED_MORE;
    const uint8_t *p = d->buf + d->off;
    uint32_t n = frame_length_prefix(p);
    if (n > AIRLOCK_FRAME_MAX)
        return FRAME_TOO_LARGE;
    if (avail < AIRLOCK_FRAME_HEADER + (size_t)n)
        return FRAME_NEED_MORE;
    GuestFrame *f = airlock__guest__v1__guest_frame__unpack(NULL, n, p + AIRLOCK_FRAME_HEADER);
    d->off += AIRLOCK_FRAME_HEADER + (size_t)n;
    if (d->off == d->len)
        d->off = d->len = 0;
    /* Shrink a buffer that grew for one big frame. */
    if (d->cap > 2 * (AIRLOCK_FRAME_MAX + AIRLOCK_FRAME_HEADER) && d->len - d->off < 4096) {
        frame_decoder_compact(d);
        uint8_t *nb = realloc(d->buf, 4096);
        if (nb) {
            d->buf = nb;
            d->cap = 4096;
        }
    }
    if (!f)
        return FRAME_MALFORMED;
    *out = f;
    return FRAME_OK;
}

const char *frame_status_str(enum frame_status s)
{
    switch (s) {
    case FRAME_OK: return "ok";
    case FRAME_NEED_MORE: return "incomplete frame";
    case FRAME_TOO_LARGE: return "frame larger than the protocol maximum";
    case FRAME_MALFORMED: return "malformed frame";
    case FRAME_NO_MEMORY: return "out of memory";
    }
    return "unknown frame status";
}

void frame_free(GuestFrame *f)
{
    if (f)
        airlock__guest__v1__guest_frame__free_unpacked(f, NULL);
}

int frame_write_fd(int fd, const GuestFrame *f)
{
    uint8_t *buf;
    size_t len;
    if (frame_encode(f, &buf, &len) < 0)
        return -1;
    size_t off = 0;
    int rc = 0;
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd p = { .fd = fd, .events = POLLOUT };
            poll(&p, 1, 1000);
            continue;
        }
        rc = -1;
        break;
    }
    free(buf);
    return rc;
}

size_t frame_payload_bytes(const GuestFrame *f)
{
    switch (f->body_case) {
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT:
        return f->output ? f->output->data.len : 0;
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DATA:
        return f->data ? f->data->data.len : 0;
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WATCH_EVENTS:
        /* Events have no byte payload: their encoded size stands in, so a
         * watch is paced by the window like output (guest.proto). */
        return f->watch_events ? protobuf_c_message_get_packed_size(&f->watch_events->base) : 0;
    default:
        return 0;
    }
}

bool frame_is_from_guest(const GuestFrame *f)
{
    switch (f->body_case) {
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DATA:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_LIST:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_INFO:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DIR_ENTRIES:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LISTENING_PORTS:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WATCH_EVENTS:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_METRICS:
        return true;
    default:
        return false;
    }
}

bool frame_is_terminal(const GuestFrame *f)
{
    switch (f->body_case) {
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_LIST:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_INFO:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LISTENING_PORTS:
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_METRICS:
        return true;
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DIR_ENTRIES:
        return f->dir_entries && f->dir_entries->done;
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DATA:
        return f->data && f->data->eof;
    default:
        return false;
    }
}
