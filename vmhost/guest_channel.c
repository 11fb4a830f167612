#include "guest_channel.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/* Hello resend interval: doubles from the first to the max. */
#define GUEST_HELLO_RETRY_FIRST_MS 250
#define GUEST_HELLO_RETRY_MAX_MS 2000
/* What one queued frame costs beyond its encoded bytes (the unpacked
 * structures, the queue node), so empty frames are not free. */
#define GUEST_FRAME_QUEUE_OVERHEAD 256u
/* Most a stream's queue may hold, counted as encoded bytes plus overhead:
 * a full window of output, its answers, and room for a few DirEntries
 * batches (the guest paces listings by its own backlog, not by credit). */
#define GUEST_STREAM_QUEUE_MAX (AIRLOCK_STREAM_WINDOW + (4u << 20))
/* Closed streams remembered to tell a late frame the guest sent before it
 * saw our Cancel from a frame on a stream that has ended. */
#define GUEST_CLOSED_STREAMS 1024

struct queued_frame {
    GuestFrame *frame;
    size_t charge;              /* what it counts in its stream's queued_bytes */
    struct queued_frame *next;
};

struct guest_stream {
    struct guest_channel *ch;
    uint32_t id;
    struct queued_frame *head, *tail;
    pthread_cond_t changed;     /* frame queued, credit granted or channel closed */
    uint32_t send_credit;       /* payload bytes we may still send to the guest */
    uint32_t recv_unacked;      /* payload received and not yet credited back */
    size_t queued_bytes;        /* what the queue holds, as GUEST_STREAM_QUEUE_MAX counts */
    bool finished;              /* guest sent the terminal frame */
    bool closed;                /* removed from the channel */
    struct guest_stream *next;
};

/* A stream this side closed, and what the guest may still send on it: the
 * payload credit it held and the non-payload bytes it may have had queued
 * when our Cancel reached it (none once it had ended the stream). A byte
 * allowance rather than a time limit: a paused guest may flush old frames
 * minutes later. */
struct closed_stream {
    uint32_t id;
    uint32_t payload_left;
    uint32_t other_left;
};

struct guest_channel {
    int fd;
    pthread_t reader;
    pthread_mutex_t lock;       /* everything below and all stream fields */
    pthread_mutex_t write_lock; /* one frame at a time on the wire */
    pthread_cond_t hello_seen;
    struct guest_stream *streams;
    uint32_t next_stream_id;
    int refs;                   /* the owner's + one per open stream */
    bool dead;
    char dead_reason[256];
    uint32_t hello_answered;    /* stream id of the newest Hello answer */
    unsigned hello_answers;     /* how many Hellos the guest answered */
    bool session_started;       /* the guest answered our newest Hello */
    char guestd_version[64];
    struct closed_stream closed[GUEST_CLOSED_STREAMS]; /* a ring, oldest overwritten */
    unsigned closed_next;
    bool violated;                 /* dead because the guest broke the protocol */
    guest_violation_fn on_violation;
    void *on_violation_arg;
    bool violation_reported;
};

static void channel_free(struct guest_channel *ch)
{
    pthread_mutex_destroy(&ch->lock);
    pthread_mutex_destroy(&ch->write_lock);
    pthread_cond_destroy(&ch->hello_seen);
    free(ch);
}

void guest_channel_ref(struct guest_channel *ch)
{
    pthread_mutex_lock(&ch->lock);
    ch->refs++;
    pthread_mutex_unlock(&ch->lock);
}

void guest_channel_release(struct guest_channel *ch)
{
    pthread_mutex_lock(&ch->lock);
    bool last = --ch->refs == 0;
    pthread_mutex_unlock(&ch->lock);
    if (last)
        channel_free(ch);
}

static struct guest_stream *stream_find_locked(struct guest_channel *ch, uint32_t id)
{
    for (struct guest_stream *s = ch->streams; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

/* Marks the channel dead and wakes every waiter. Called with ch->lock. */
static void channel_kill_locked(struct guest_channel *ch, const char *reason)
{
    if (ch->dead)
        return;
    ch->dead = true;
    snprintf(ch->dead_reason, sizeof(ch->dead_reason), "%s", reason);
    for (struct guest_stream *s = ch->streams; s; s = s->next)
        pthread_cond_broadcast(&s->changed);
    pthread_cond_broadcast(&ch->hello_seen);
}

/* The guest broke the protocol: the channel dies with reason (one log line
 * here; the owner's callback, if any, runs from the reader once the lock is
 * dropped). Called with ch->lock. */
static void channel_violation_locked(struct guest_channel *ch, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void channel_violation_locked(struct guest_channel *ch, const char *fmt, ...)
{
    if (ch->dead)
        return;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    char reason[256];
    snprintf(reason, sizeof(reason), "guest broke the channel protocol: %s", what);
    log_warn("guest channel cut off", "reason=\"%s\"", reason);
    ch->violated = true;
    channel_kill_locked(ch, reason);
}

static struct closed_stream *closed_find_locked(struct guest_channel *ch, uint32_t id)
{
    for (unsigned i = 0; i < GUEST_CLOSED_STREAMS; i++)
        if (ch->closed[i].id == id)
            return &ch->closed[i];
    return NULL;
}

/* A frame for a stream that is not open. One never opened is a lie; one we
 * closed may still bring what the guest sent before it saw our Cancel, up
 * to its allowance. A stream closed so long ago that the ring forgot it
 * costs nothing: its frames are dropped. Credit for our own sends is
 * harmless on any stream we opened. Called with ch->lock. */
static void channel_late_frame_locked(struct guest_channel *ch, const GuestFrame *f,
                                      size_t wire_len)
{
    if (f->stream_id >= ch->next_stream_id) {
        channel_violation_locked(ch, "frame on stream %u, which vmhost never opened",
                                 f->stream_id);
        return;
    }
    struct closed_stream *c = closed_find_locked(ch, f->stream_id);
    if (!c || f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW)
        return;
    size_t payload = frame_payload_bytes(f);
    size_t other = payload ? 0 : wire_len;
    if (payload > c->payload_left || other > c->other_left) {
        channel_violation_locked(ch, "%zu more bytes on stream %u after it was closed", wire_len,
                                 f->stream_id);
        return;
    }
    c->payload_left -= (uint32_t)payload;
    c->other_left -= (uint32_t)other;
    if (frame_is_terminal(f))
        c->other_left = c->payload_left = 0;
}

/* Entries beyond what one frame may carry (see AIRLOCK_DIR_BATCH_ENTRIES,
 * AIRLOCK_WATCH_BATCH_EVENTS). */
static bool frame_over_entry_limit(const GuestFrame *f)
{
    if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DIR_ENTRIES)
        return f->dir_entries->n_entries > AIRLOCK_DIR_BATCH_ENTRIES;
    if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_LIST)
        return f->process_list->n_processes > AIRLOCK_PROCESS_LIST_MAX;
    if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LISTENING_PORTS)
        return f->listening_ports->n_ports > AIRLOCK_LISTENING_PORTS_MAX;
    if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WATCH_EVENTS)
        return f->watch_events->n_events > AIRLOCK_WATCH_BATCH_EVENTS;
    return false;
}

/* Checks a frame for open stream s against what this side granted; false
 * after killing the channel. Called with ch->lock. */
static bool stream_admits_locked(struct guest_stream *s, const GuestFrame *f, size_t charge)
{
    struct guest_channel *ch = s->ch;
    size_t payload = frame_payload_bytes(f);
    if (s->finished) {
        channel_violation_locked(ch, "frame on stream %u after its last one", s->id);
        return false;
    }
    if (s->recv_unacked + payload > AIRLOCK_STREAM_WINDOW) {
        channel_violation_locked(ch, "%zu payload bytes past the %u-byte window on stream %u",
                                 s->recv_unacked + payload - AIRLOCK_STREAM_WINDOW,
                                 AIRLOCK_STREAM_WINDOW, s->id);
        return false;
    }
    if (s->queued_bytes + charge > GUEST_STREAM_QUEUE_MAX) {
        channel_violation_locked(ch, "more than %u bytes queued on stream %u", GUEST_STREAM_QUEUE_MAX,
                                 s->id);
        return false;
    }
    if (frame_over_entry_limit(f)) {
        channel_violation_locked(ch, "too many entries in one frame on stream %u", s->id);
        return false;
    }
    return true;
}

/* Appends an Output frame's bytes to the queue's last frame when that is
 * Output of the same fd with room up to a chunk: a program writing a byte
 * at a time to a client that reads nothing would otherwise fill the queue
 * with frames long before the window. True when f was merged (the caller
 * frees it). Called with ch->lock. */
static bool stream_merge_output_locked(struct guest_stream *s, const GuestFrame *f)
{
    struct queued_frame *t = s->tail;
    if (f->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT || !t ||
        t->frame->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT ||
        t->frame->output->fd != f->output->fd ||
        t->frame->output->data.len + f->output->data.len > AIRLOCK_CHUNK_MAX)
        return false;
    ProtobufCBinaryData *into = &t->frame->output->data;
    const ProtobufCBinaryData *add = &f->output->data;
    if (add->len == 0)
        return true; /* carries nothing */
    /* Unpacked bytes are plain malloc'd memory (protobuf-c's default
     * allocator), which free_unpacked frees. */
    uint8_t *grown = realloc(into->data, into->len + add->len);
    if (!grown)
        return false;
    memcpy(grown + into->len, add->data, add->len);
    into->data = grown;
    into->len += add->len;
    t->charge += add->len;
    s->queued_bytes += add->len;
    s->recv_unacked += (uint32_t)add->len;
    return true;
}

/* Routes one decoded frame of wire_len encoded bytes; takes ownership of
 * it. Called with ch->lock. */
static void channel_dispatch_locked(struct guest_channel *ch, GuestFrame *f, size_t wire_len)
{
    if (!frame_is_from_guest(f)) {
        channel_violation_locked(ch, "a frame of kind %d, which only the host sends",
                                 (int)f->body_case);
        frame_free(f);
        return;
    }
    /* guestd answers a Hello on the Hello's stream id (see connect). */
    if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO) {
        snprintf(ch->guestd_version, sizeof(ch->guestd_version), "%s",
                 f->hello->guestd_version ? f->hello->guestd_version : "");
        ch->hello_answered = f->stream_id;
        ch->hello_answers++;
        pthread_cond_broadcast(&ch->hello_seen);
        frame_free(f);
        return;
    }
    /* Before it answers our newest Hello the guest may still flush what it
     * had for a previous host (a vmhost restart, a restored snapshot). */
    if (!ch->session_started) {
        frame_free(f);
        return;
    }
    struct guest_stream *s = f->stream_id ? stream_find_locked(ch, f->stream_id) : NULL;
    if (!s) {
        channel_late_frame_locked(ch, f, wire_len);
        frame_free(f);
        return;
    }
    if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW) {
        /* Credit back is at most what we sent: a window's worth in all. */
        if ((uint64_t)s->send_credit + f->window->bytes > AIRLOCK_STREAM_WINDOW)
            channel_violation_locked(ch, "credit beyond the window on stream %u", s->id);
        else if (!s->finished)
            s->send_credit += f->window->bytes;
        frame_free(f);
        pthread_cond_broadcast(&s->changed);
        return;
    }
    size_t charge = wire_len + GUEST_FRAME_QUEUE_OVERHEAD;
    if (!stream_admits_locked(s, f, charge) || stream_merge_output_locked(s, f)) {
        frame_free(f);
        pthread_cond_broadcast(&s->changed);
        return;
    }
    struct queued_frame *q = malloc(sizeof(*q));
    if (!q) {
        frame_free(f);
        channel_kill_locked(ch, "out of memory queueing a guest frame");
        return;
    }
    if (frame_is_terminal(f))
        s->finished = true;
    s->recv_unacked += (uint32_t)frame_payload_bytes(f);
    s->queued_bytes += charge;
    q->frame = f;
    q->charge = charge;
    q->next = NULL;
    if (s->tail)
        s->tail->next = q;
    else
        s->head = q;
    s->tail = q;
    pthread_cond_broadcast(&s->changed);
}

/* Tells the owner, once, that the guest broke the protocol. Called by the
 * reader without ch->lock. */
static void channel_report_violation(struct guest_channel *ch)
{
    pthread_mutex_lock(&ch->lock);
    guest_violation_fn fn = NULL;
    void *arg = NULL;
    if (ch->violated && ch->on_violation && !ch->violation_reported) {
        ch->violation_reported = true;
        fn = ch->on_violation;
        arg = ch->on_violation_arg;
    }
    char reason[sizeof(ch->dead_reason)];
    snprintf(reason, sizeof(reason), "%s", ch->dead_reason);
    pthread_mutex_unlock(&ch->lock);
    if (fn)
        fn(arg, reason);
}

static void *channel_reader_main(void *arg)
{
    struct guest_channel *ch = arg;
    struct frame_decoder dec;
    frame_decoder_init(&dec);
    uint8_t buf[64 * 1024];
    char reason[256] = "guest channel closed";

    for (;;) {
        ssize_t n = read(ch->fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n < 0)
                snprintf(reason, sizeof(reason), "guest channel read failed: %s", strerror(errno));
            break;
        }
        if (frame_decoder_feed(&dec, buf, (size_t)n) < 0) {
            snprintf(reason, sizeof(reason), "out of memory reading the guest channel");
            break;
        }
        GuestFrame *f;
        enum frame_status st;
        pthread_mutex_lock(&ch->lock);
        while (!ch->dead && (st = frame_decoder_next(&dec, &f)) == FRAME_OK)
            channel_dispatch_locked(ch, f, airlock__guest__v1__guest_frame__get_packed_size(f));
        if (!ch->dead && st != FRAME_NEED_MORE)
            channel_violation_locked(ch, "an invalid frame: %s", frame_status_str(st));
        bool dead = ch->dead;
        pthread_mutex_unlock(&ch->lock);
        if (dead)
            break;
    }
    frame_decoder_free(&dec);
    pthread_mutex_lock(&ch->lock);
    bool violated = ch->violated;
    channel_kill_locked(ch, reason);
    pthread_mutex_unlock(&ch->lock);
    /* Cut off: the guest sees the host go away and its bytes go nowhere. */
    if (violated) {
        shutdown(ch->fd, SHUT_RDWR);
        channel_report_violation(ch);
    }
    return NULL;
}

static int channel_write_frame(struct guest_channel *ch, GuestFrame *f)
{
    pthread_mutex_lock(&ch->write_lock);
    int rc = -1;
    errno = EPIPE;
    if (ch->fd >= 0)
        rc = frame_write_fd(ch->fd, f);
    int saved = errno;
    pthread_mutex_unlock(&ch->write_lock);
    errno = saved;
    return rc;
}

/* Hello until guestd answers the newest one. One is not always enough: a
 * guest that sees a new host's bytes before the kernel has processed the
 * port-open event polls POLLHUP next, takes it for a hangup and drops its
 * answer (virtio_console reports host_connected only through poll). QEMU
 * holds bytes until guestd opens the port, so a booting guest gets every
 * Hello at once and answers each; only the answer to the newest ends the
 * handshake, so no Hello can start a session after the host has begun to
 * use this one. Hellos count stream ids down from UINT32_MAX, apart from
 * the streams, which count up from 1. */
static int channel_handshake(struct guest_channel *ch, const char *address, int64_t deadline,
                             int timeout_ms, char *err, size_t errlen)
{
    Airlock__Guest__V1__Hello hello = AIRLOCK__GUEST__V1__HELLO__INIT;
    hello.protocol_version = AIRLOCK_GUEST_PROTOCOL_VERSION;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO;
    f.hello = &hello;
    int interval_ms = GUEST_HELLO_RETRY_FIRST_MS;
    bool answered = false, dead = false;
    unsigned answers = 0;
    for (uint32_t id = UINT32_MAX; !answered && !dead && clock_monotonic_ms() < deadline; id--) {
        f.stream_id = id;
        if (channel_write_frame(ch, &f) < 0) {
            snprintf(err, errlen, "cannot send hello to the guest: %s", strerror(errno));
            return -1;
        }
        int64_t resend_at = clock_monotonic_ms() + interval_ms;
        if (resend_at > deadline)
            resend_at = deadline;
        interval_ms = interval_ms * 2 > GUEST_HELLO_RETRY_MAX_MS ? GUEST_HELLO_RETRY_MAX_MS
                                                                 : interval_ms * 2;
        pthread_mutex_lock(&ch->lock);
        while (ch->hello_answered != f.stream_id && !ch->dead) {
            int64_t left = resend_at - clock_monotonic_ms();
            if (left <= 0)
                break;
            struct timespec ts = clock_deadline_after_ms(left);
            pthread_cond_timedwait(&ch->hello_seen, &ch->lock, &ts);
        }
        answered = ch->hello_answered == f.stream_id;
        ch->session_started = answered;
        answers = ch->hello_answers;
        dead = ch->dead;
        pthread_mutex_unlock(&ch->lock);
    }
    if (answered) {
        /* Hellos a booting guest answers late are normal; lost answers
         * are the race above: worth seeing. */
        unsigned sent = UINT32_MAX - f.stream_id + 1;
        if (answers < sent)
            log_info("guest lost its answer to a Hello; it answered a repeated one",
                     "channel=%s hellos=%u answers=%u", address, sent, answers);
        return 0;
    }
    pthread_mutex_lock(&ch->lock);
    snprintf(err, errlen, "guest daemon did not answer within %d ms%s%s", timeout_ms,
             ch->dead ? ": " : "", ch->dead ? ch->dead_reason : "");
    pthread_mutex_unlock(&ch->lock);
    return -1;
}

int guest_channel_connect(const struct guest_transport *transport, const char *address,
                          int timeout_ms, struct guest_channel **out, char *err, size_t errlen)
{
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    int fd = transport->connect(address, timeout_ms, err, errlen);
    if (fd < 0)
        return -1;

    struct guest_channel *ch = calloc(1, sizeof(*ch));
    if (!ch) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ch->fd = fd;
    ch->refs = 1;
    ch->next_stream_id = 1;
    pthread_mutex_init(&ch->lock, NULL);
    pthread_mutex_init(&ch->write_lock, NULL);
    pthread_cond_init(&ch->hello_seen, NULL);
    if (pthread_create(&ch->reader, NULL, channel_reader_main, ch) != 0) {
        snprintf(err, errlen, "cannot start the guest channel reader thread");
        close(fd);
        channel_free(ch);
        return -1;
    }

    if (channel_handshake(ch, address, deadline, timeout_ms, err, errlen) < 0)
        goto fail;
    *out = ch;
    return 0;

fail:
    guest_channel_close(ch);
    return -1;
}

void guest_channel_close(struct guest_channel *ch)
{
    if (!ch)
        return;
    /* shutdown() wakes the reader's read(); the fd is closed after the
     * reader is joined so no other thread can reuse its number meanwhile. */
    shutdown(ch->fd, SHUT_RDWR);
    pthread_join(ch->reader, NULL);
    pthread_mutex_lock(&ch->write_lock);
    close(ch->fd);
    ch->fd = -1;
    pthread_mutex_unlock(&ch->write_lock);
    pthread_mutex_lock(&ch->lock);
    channel_kill_locked(ch, "guest channel closed by vmhost");
    pthread_mutex_unlock(&ch->lock);
    guest_channel_release(ch);
}

bool guest_channel_alive(struct guest_channel *ch, char *reason, size_t reasonlen)
{
    pthread_mutex_lock(&ch->lock);
    bool alive = !ch->dead;
    if (!alive && reason)
        snprintf(reason, reasonlen, "%s", ch->dead_reason);
    pthread_mutex_unlock(&ch->lock);
    return alive;
}

void guest_channel_on_violation(struct guest_channel *ch, guest_violation_fn fn, void *arg)
{
    pthread_mutex_lock(&ch->lock);
    ch->on_violation = fn;
    ch->on_violation_arg = arg;
    bool already = ch->violated;
    pthread_mutex_unlock(&ch->lock);
    /* Cut off before anyone listened: say so now (the reader has already
     * passed its report, or reports nothing twice). */
    if (already)
        channel_report_violation(ch);
}

const char *guest_channel_guestd_version(const struct guest_channel *ch)
{
    return ch->guestd_version;
}

struct guest_stream *guest_stream_open(struct guest_channel *ch)
{
    struct guest_stream *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    pthread_cond_init(&s->changed, NULL);
    s->ch = ch;
    s->send_credit = AIRLOCK_STREAM_WINDOW;
    pthread_mutex_lock(&ch->lock);
    s->id = ch->next_stream_id++;
    if (ch->next_stream_id == 0)
        ch->next_stream_id = 1;
    s->next = ch->streams;
    ch->streams = s;
    ch->refs++;
    pthread_mutex_unlock(&ch->lock);
    return s;
}

static int stream_wait_credit_locked(struct guest_stream *s, size_t need, int timeout_ms)
{
    struct guest_channel *ch = s->ch;
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    while (s->send_credit < need && !ch->dead && !s->finished) {
        int64_t left = deadline - clock_monotonic_ms();
        if (timeout_ms >= 0 && left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (timeout_ms < 0) {
            pthread_cond_wait(&s->changed, &ch->lock);
        } else {
            struct timespec ts = clock_deadline_after_ms(left);
            pthread_cond_timedwait(&s->changed, &ch->lock, &ts);
        }
    }
    if (ch->dead || s->finished) {
        errno = EPIPE;
        return -1;
    }
    s->send_credit -= (uint32_t)need;
    return 0;
}

int guest_stream_send(struct guest_stream *s, GuestFrame *f, int timeout_ms)
{
    struct guest_channel *ch = s->ch;
    f->stream_id = s->id;
    size_t payload = frame_payload_bytes(f);
    if (payload > AIRLOCK_CHUNK_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    pthread_mutex_lock(&ch->lock);
    int rc = 0;
    if (ch->dead) {
        errno = EPIPE;
        rc = -1;
    } else if (payload > 0) {
        rc = stream_wait_credit_locked(s, payload, timeout_ms);
    }
    pthread_mutex_unlock(&ch->lock);
    if (rc < 0)
        return -1;
    if (channel_write_frame(ch, f) < 0) {
        errno = EPIPE;
        return -1;
    }
    return 0;
}

static void stream_grant_credit(struct guest_stream *s, size_t bytes)
{
    Airlock__Guest__V1__WindowUpdate w = AIRLOCK__GUEST__V1__WINDOW_UPDATE__INIT;
    w.bytes = (uint32_t)bytes;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = s->id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW;
    f.window = &w;
    channel_write_frame(s->ch, &f); /* a dead channel is noticed by recv */
}

enum guest_recv_status guest_stream_recv(struct guest_stream *s, int timeout_ms, GuestFrame **out)
{
    struct guest_channel *ch = s->ch;
    *out = NULL;
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    pthread_mutex_lock(&ch->lock);
    while (!s->head && !ch->dead && !s->finished) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&s->changed, &ch->lock);
            continue;
        }
        int64_t left = deadline - clock_monotonic_ms();
        if (left <= 0) {
            pthread_mutex_unlock(&ch->lock);
            return GUEST_RECV_TIMEOUT;
        }
        struct timespec ts = clock_deadline_after_ms(left);
        pthread_cond_timedwait(&s->changed, &ch->lock, &ts);
    }
    struct queued_frame *q = s->head;
    if (!q) {
        pthread_mutex_unlock(&ch->lock);
        return GUEST_RECV_CLOSED;
    }
    s->head = q->next;
    if (!s->head)
        s->tail = NULL;
    s->queued_bytes -= q->charge;
    size_t payload = frame_payload_bytes(q->frame);
    bool grant = payload > 0 && !s->finished;
    if (grant)
        s->recv_unacked -= (uint32_t)payload;
    pthread_mutex_unlock(&ch->lock);

    *out = q->frame;
    free(q);
    if (grant)
        stream_grant_credit(s, payload);
    return GUEST_RECV_OK;
}

bool guest_stream_finished(struct guest_stream *s)
{
    pthread_mutex_lock(&s->ch->lock);
    bool finished = s->finished;
    pthread_mutex_unlock(&s->ch->lock);
    return finished;
}

void guest_stream_close(struct guest_stream *s)
{
    if (!s)
        return;
    struct guest_channel *ch = s->ch;
    pthread_mutex_lock(&ch->lock);
    bool cancel = !s->finished && !ch->dead;
    for (struct guest_stream **pp = &ch->streams; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    /* A cancelled stream may still bring what the guest sent before the
     * Cancel reached it: its unused credit and a queue's worth of other
     * frames. An ended one brings nothing. */
    ch->closed[ch->closed_next] = (struct closed_stream){
        .id = s->id,
        .payload_left = cancel ? AIRLOCK_STREAM_WINDOW - s->recv_unacked : 0,
        .other_left = cancel ? GUEST_STREAM_QUEUE_MAX : 0,
    };
    ch->closed_next = (ch->closed_next + 1) % GUEST_CLOSED_STREAMS;
    pthread_mutex_unlock(&ch->lock);

    if (cancel) {
        Airlock__Guest__V1__Cancel c = AIRLOCK__GUEST__V1__CANCEL__INIT;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.stream_id = s->id;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_CANCEL;
        f.cancel = &c;
        channel_write_frame(ch, &f);
    }
    while (s->head) {
        struct queued_frame *q = s->head;
        s->head = q->next;
        frame_free(q->frame);
        free(q);
    }
    pthread_cond_destroy(&s->changed);
    free(s);
    guest_channel_release(ch);
}

int guest_stream_send_bytes(struct guest_stream *s, const uint8_t *data, size_t len, bool eof,
                            int timeout_ms)
{
    size_t off = 0;
    do {
        size_t n = len - off > AIRLOCK_CHUNK_MAX ? AIRLOCK_CHUNK_MAX : len - off;
        Airlock__Guest__V1__Data d = AIRLOCK__GUEST__V1__DATA__INIT;
        d.data.data = n ? (uint8_t *)data + off : NULL;
        d.data.len = n;
        d.eof = eof && off + n == len;
        GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
        f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DATA;
        f.data = &d;
        if (guest_stream_send(s, &f, timeout_ms) < 0)
            return -1;
        off += n;
    } while (off < len);
    return 0;
}

enum guest_recv_status guest_call(struct guest_channel *ch, GuestFrame *request, int timeout_ms,
                                  GuestFrame **answer)
{
    *answer = NULL;
    struct guest_stream *s = guest_stream_open(ch);
    if (!s)
        return GUEST_RECV_CLOSED;
    enum guest_recv_status st = GUEST_RECV_CLOSED;
    if (guest_stream_send(s, request, timeout_ms) == 0)
        st = guest_stream_recv(s, timeout_ms, answer);
    guest_stream_close(s);
    return st;
}
