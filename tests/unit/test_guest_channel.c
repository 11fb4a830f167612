/* The host end of the guest channel against a scripted fake guest on a
 * socketpair: handshake, stream routing, credit returned as output is
 * consumed, and a guest sending garbage, vanishing or breaking the
 * protocol (past its window, on streams it was not given, floods) — which
 * must end the channel with a reason, tell its owner once, and never
 * crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest_channel.h"

/* The "address" is the fd number of our end of a socketpair. */
static int socketpair_connect(const char *address, int timeout_ms, char *err, size_t errlen)
{
    (void)timeout_ms;
    (void)err;
    (void)errlen;
    return dup(atoi(address));
}

static const struct guest_transport socketpair_transport = {
    .name = "socketpair",
    .connect = socketpair_connect,
};

struct fake_guest {
    int fd;
    struct frame_decoder dec;
};

static GuestFrame *fake_read_frame(struct fake_guest *g)
{
    for (;;) {
        GuestFrame *f;
        enum frame_status st = frame_decoder_next(&g->dec, &f);
        if (st == FRAME_OK)
            return f;
        if (st != FRAME_NEED_MORE)
            return NULL;
        uint8_t buf[65536];
        ssize_t n = read(g->fd, buf, sizeof(buf));
        if (n <= 0)
            return NULL;
        frame_decoder_feed(&g->dec, buf, (size_t)n);
    }
}

/* guestd answers a Hello on the Hello's stream id. */
static void fake_send_hello(struct fake_guest *g, uint32_t stream)
{
    Airlock__Guest__V1__Hello h = AIRLOCK__GUEST__V1__HELLO__INIT;
    h.protocol_version = AIRLOCK_GUEST_PROTOCOL_VERSION;
    h.guestd_version = "fake-1";
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO;
    f.hello = &h;
    assert_int_equal(frame_write_fd(g->fd, &f), 0);
}

static void fake_send_output(struct fake_guest *g, uint32_t stream, size_t len)
{
    static uint8_t zeros[AIRLOCK_CHUNK_MAX];
    Airlock__Guest__V1__Output o = AIRLOCK__GUEST__V1__OUTPUT__INIT;
    o.fd = 1;
    o.data.data = zeros;
    o.data.len = len;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT;
    f.output = &o;
    assert_int_equal(frame_write_fd(g->fd, &f), 0);
}

struct connect_args {
    char address[16];
    struct guest_channel *ch;
    int rc;
    char err[256];
};

static void *connect_main(void *arg)
{
    struct connect_args *a = arg;
    a->rc = guest_channel_connect(&socketpair_transport, a->address, 5000, &a->ch, a->err,
                                  sizeof(a->err));
    return NULL;
}

/* Starts the host's connect (on thread t, into a) to a new fake guest g;
 * the host's end of the socket pair is returned. The fake answers. */
static int start_connect(struct fake_guest *g, struct connect_args *a, pthread_t *t)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    g->fd = sv[1];
    frame_decoder_init(&g->dec);
    *a = (struct connect_args){ 0 };
    snprintf(a->address, sizeof(a->address), "%d", sv[0]);
    assert_int_equal(pthread_create(t, NULL, connect_main, a), 0);
    return sv[0];
}

/* Connects a channel to a fake guest that completes the handshake. */
static struct guest_channel *connect_to_fake(struct fake_guest *g, int *host_fd)
{
    struct connect_args a;
    pthread_t t;
    *host_fd = start_connect(g, &a, &t);
    GuestFrame *hello = fake_read_frame(g);
    assert_non_null(hello);
    assert_int_equal(hello->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO);
    assert_int_equal(hello->hello->protocol_version, AIRLOCK_GUEST_PROTOCOL_VERSION);
    fake_send_hello(g, hello->stream_id);
    frame_free(hello);
    pthread_join(t, NULL);
    assert_int_equal(a.rc, 0);
    assert_string_equal(guest_channel_guestd_version(a.ch), "fake-1");
    return a.ch;
}

static void fake_close(struct fake_guest *g, int host_fd)
{
    close(g->fd);
    close(host_fd);
    frame_decoder_free(&g->dec);
}

static void test_routes_frames_and_returns_credit(void **state)
{
    (void)state;
    struct fake_guest g;
    int host_fd;
    struct guest_channel *ch = connect_to_fake(&g, &host_fd);
    struct guest_stream *s1 = guest_stream_open(ch);
    struct guest_stream *s2 = guest_stream_open(ch);

    Airlock__Guest__V1__HealthRequest hr = AIRLOCK__GUEST__V1__HEALTH_REQUEST__INIT;
    GuestFrame req = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    req.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH_REQUEST;
    req.health_request = &hr;
    assert_int_equal(guest_stream_send(s2, &req, 1000), 0);
    GuestFrame *got = fake_read_frame(&g);
    assert_int_equal(got->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH_REQUEST);
    uint32_t s2_id = got->stream_id;
    frame_free(got);

    /* Output for stream 2 only; stream 1 sees nothing. */
    fake_send_output(&g, s2_id, 1000);
    GuestFrame *f;
    assert_int_equal(guest_stream_recv(s1, 100, &f), GUEST_RECV_TIMEOUT);
    assert_int_equal(guest_stream_recv(s2, 2000, &f), GUEST_RECV_OK);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT);
    assert_int_equal(f->output->data.len, 1000);
    frame_free(f);

    /* Consuming the output returned its 1000 bytes of credit. */
    got = fake_read_frame(&g);
    assert_int_equal(got->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW);
    assert_int_equal(got->stream_id, s2_id);
    assert_int_equal(got->window->bytes, 1000);
    frame_free(got);

    /* Closing an unfinished stream tells the guest to cancel it. */
    guest_stream_close(s2);
    got = fake_read_frame(&g);
    assert_int_equal(got->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_CANCEL);
    assert_int_equal(got->stream_id, s2_id);
    frame_free(got);

    guest_stream_close(s1);
    guest_channel_close(ch);
    fake_close(&g, host_fd);
}

/* Reads and counts Data payload the host sends, like a guest would. */
static void *drain_main(void *arg)
{
    struct fake_guest *g = arg;
    size_t *total = calloc(1, sizeof(size_t));
    GuestFrame *f;
    while ((f = fake_read_frame(g))) {
        *total += frame_payload_bytes(f);
        frame_free(f);
    }
    return total;
}

static void test_send_waits_for_credit(void **state)
{
    (void)state;
    struct fake_guest g;
    int host_fd;
    struct guest_channel *ch = connect_to_fake(&g, &host_fd);
    pthread_t drain;
    pthread_create(&drain, NULL, drain_main, &g);
    struct guest_stream *s = guest_stream_open(ch);
    static uint8_t chunk[AIRLOCK_CHUNK_MAX];
    size_t sent = 0;
    /* Exactly one window goes out without any credit back... */
    while (guest_stream_send_bytes(s, chunk, sizeof(chunk), false, 0) == 0)
        sent += sizeof(chunk);
    assert_int_equal(sent, AIRLOCK_STREAM_WINDOW);
    /* ...and a WindowUpdate lets more through. */
    Airlock__Guest__V1__WindowUpdate w = AIRLOCK__GUEST__V1__WINDOW_UPDATE__INIT;
    w.bytes = AIRLOCK_CHUNK_MAX;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = 1;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW;
    f.window = &w;
    assert_int_equal(frame_write_fd(g.fd, &f), 0);
    assert_int_equal(guest_stream_send_bytes(s, chunk, sizeof(chunk), false, 2000), 0);
    guest_stream_close(s);
    guest_channel_close(ch);
    size_t *received;
    pthread_join(drain, (void **)&received);
    assert_int_equal(*received, AIRLOCK_STREAM_WINDOW + AIRLOCK_CHUNK_MAX);
    free(received);
    fake_close(&g, host_fd);
}

static void test_garbage_from_guest_closes_channel(void **state)
{
    (void)state;
    struct fake_guest g;
    int host_fd;
    struct guest_channel *ch = connect_to_fake(&g, &host_fd);
    struct guest_stream *s = guest_stream_open(ch);

    const uint8_t garbage[] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8 };
    assert_int_equal(write(g.fd, garbage, sizeof(garbage)), (ssize_t)sizeof(garbage));
    GuestFrame *f;
    assert_int_equal(guest_stream_recv(s, 5000, &f), GUEST_RECV_CLOSED);
    char reason[256];
    assert_false(guest_channel_alive(ch, reason, sizeof(reason)));
    assert_non_null(strstr(reason, "invalid frame"));

    /* Sends fail cleanly too. */
    Airlock__Guest__V1__HealthRequest hr = AIRLOCK__GUEST__V1__HEALTH_REQUEST__INIT;
    GuestFrame req = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    req.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH_REQUEST;
    req.health_request = &hr;
    assert_int_equal(guest_stream_send(s, &req, 100), -1);
    guest_stream_close(s);
    guest_channel_close(ch);
    fake_close(&g, host_fd);
}

static void test_malformed_payload_closes_channel(void **state)
{
    (void)state;
    struct fake_guest g;
    int host_fd;
    struct guest_channel *ch = connect_to_fake(&g, &host_fd);
    /* A valid length prefix around bytes that are no GuestFrame. */
    const uint8_t bad[] = { 0, 0, 0, 3, 0x0a, 0x7f, 0x01 };
    assert_int_equal(write(g.fd, bad, sizeof(bad)), (ssize_t)sizeof(bad));
    char reason[256] = "";
    for (int i = 0; i < 500 && guest_channel_alive(ch, reason, sizeof(reason)); i++)
        usleep(10000);
    assert_non_null(strstr(reason, "malformed"));
    guest_channel_close(ch);
    fake_close(&g, host_fd);
}

static void test_guest_vanishing_fails_streams(void **state)
{
    (void)state;
    struct fake_guest g;
    int host_fd;
    struct guest_channel *ch = connect_to_fake(&g, &host_fd);
    struct guest_stream *s = guest_stream_open(ch);
    close(g.fd);
    GuestFrame *f;
    assert_int_equal(guest_stream_recv(s, 5000, &f), GUEST_RECV_CLOSED);
    /* The stream outlives the owner's close without use-after-free. */
    guest_channel_close(ch);
    assert_int_equal(guest_stream_recv(s, 10, &f), GUEST_RECV_CLOSED);
    guest_stream_close(s);
    close(host_fd);
    frame_decoder_free(&g.dec);
}

/* A guest may drop its answer to a Hello (it took the new host's first
 * bytes for a hangup): the host says Hello again, and only the answer to
 * its newest Hello ends the handshake — a late answer to an older one
 * must not, or that Hello could end the session the host goes on to use. */
static void test_hello_resent_until_newest_answered(void **state)
{
    (void)state;
    struct fake_guest g;
    struct connect_args a;
    pthread_t t;
    int host_fd = start_connect(&g, &a, &t);
    GuestFrame *first = fake_read_frame(&g); /* not answered: lost */
    assert_non_null(first);
    GuestFrame *second = fake_read_frame(&g);
    assert_non_null(second);
    assert_int_equal(second->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO);
    assert_int_not_equal(second->stream_id, first->stream_id);
    fake_send_hello(&g, first->stream_id); /* late, for the older Hello */
    struct pollfd p = { .fd = g.fd, .events = POLLIN };
    assert_int_equal(poll(&p, 1, 4000), 1); /* so the host says Hello once more */
    GuestFrame *third = fake_read_frame(&g);
    assert_non_null(third);
    assert_int_equal(third->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO);
    fake_send_hello(&g, third->stream_id);
    pthread_join(t, NULL);
    assert_int_equal(a.rc, 0);
    frame_free(first);
    frame_free(second);
    frame_free(third);
    guest_channel_close(a.ch);
    fake_close(&g, host_fd);
}

static void test_no_hello_times_out(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char address[16];
    snprintf(address, sizeof(address), "%d", sv[0]);
    struct guest_channel *ch = NULL;
    char err[256];
    assert_int_equal(guest_channel_connect(&socketpair_transport, address, 200, &ch, err,
                                           sizeof(err)),
                     -1);
    assert_null(ch);
    assert_non_null(strstr(err, "did not answer"));
    close(sv[0]);
    close(sv[1]);
}

/* What a violation callback heard. */
struct violation_seen {
    pthread_mutex_t lock;
    int calls;
    char reason[256];
};

static void record_violation(void *arg, const char *reason)
{
    struct violation_seen *v = arg;
    pthread_mutex_lock(&v->lock);
    v->calls++;
    snprintf(v->reason, sizeof(v->reason), "%s", reason);
    pthread_mutex_unlock(&v->lock);
}

/* Waits (bounded) for the channel to die; its reason must contain want and
 * the callback must have heard exactly that, once. */
static void assert_cut_off(struct guest_channel *ch, struct violation_seen *v, const char *want)
{
    char reason[256] = "";
    for (int i = 0; i < 500 && guest_channel_alive(ch, reason, sizeof(reason)); i++)
        usleep(10000);
    assert_false(guest_channel_alive(ch, reason, sizeof(reason)));
    if (!strstr(reason, want))
        fail_msg("reason \"%s\" lacks \"%s\"", reason, want);
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&v->lock);
        int calls = v->calls;
        pthread_mutex_unlock(&v->lock);
        if (calls)
            break;
        usleep(10000);
    }
    usleep(50000); /* a second report would come now */
    pthread_mutex_lock(&v->lock);
    assert_int_equal(v->calls, 1);
    assert_string_equal(v->reason, reason);
    pthread_mutex_unlock(&v->lock);
}

static void fake_send(struct fake_guest *g, GuestFrame *f)
{
    assert_int_equal(frame_write_fd(g->fd, f), 0);
}

static void fake_send_exec_exit(struct fake_guest *g, uint32_t stream)
{
    Airlock__Guest__V1__ExecExit x = AIRLOCK__GUEST__V1__EXEC_EXIT__INIT;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT;
    f.exec_exit = &x;
    fake_send(g, &f);
}

struct hostile_case {
    struct fake_guest g;
    int host_fd;
    struct guest_channel *ch;
    struct guest_stream *s;
    struct violation_seen v;
};

static void hostile_case_start(struct hostile_case *c)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->v.lock, NULL);
    c->ch = connect_to_fake(&c->g, &c->host_fd);
    guest_channel_on_violation(c->ch, record_violation, &c->v);
    c->s = guest_stream_open(c->ch); /* stream 1 */
}

static void hostile_case_end(struct hostile_case *c)
{
    guest_stream_close(c->s);
    guest_channel_close(c->ch);
    fake_close(&c->g, c->host_fd);
    pthread_mutex_destroy(&c->v.lock);
}

static void test_output_past_window_cuts_off(void **state)
{
    (void)state;
    struct hostile_case c;
    hostile_case_start(&c);
    /* A window's worth unread is fine; one byte more is not. */
    for (unsigned i = 0; i < AIRLOCK_STREAM_WINDOW / AIRLOCK_CHUNK_MAX; i++)
        fake_send_output(&c.g, 1, AIRLOCK_CHUNK_MAX);
    usleep(100000);
    assert_true(guest_channel_alive(c.ch, NULL, 0));
    fake_send_output(&c.g, 1, 1);
    assert_cut_off(c.ch, &c.v, "past the 262144-byte window on stream 1");
    hostile_case_end(&c);
}

static void test_consumed_output_makes_room(void **state)
{
    (void)state;
    struct hostile_case c;
    hostile_case_start(&c);
    /* Three windows in all, read as they come: a good guest's pace. */
    for (unsigned i = 0; i < 3 * AIRLOCK_STREAM_WINDOW / AIRLOCK_CHUNK_MAX; i++) {
        fake_send_output(&c.g, 1, AIRLOCK_CHUNK_MAX);
        GuestFrame *f;
        assert_int_equal(guest_stream_recv(c.s, 5000, &f), GUEST_RECV_OK);
        frame_free(f);
    }
    fake_send_exec_exit(&c.g, 1);
    GuestFrame *f;
    assert_int_equal(guest_stream_recv(c.s, 5000, &f), GUEST_RECV_OK);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT);
    frame_free(f);
    assert_true(guest_channel_alive(c.ch, NULL, 0));
    hostile_case_end(&c);
}

/* A program writing a byte at a time to a client that reads nothing: many
 * tiny frames within the window are no lie, and queue as a few. */
static void test_tiny_output_frames_within_window(void **state)
{
    (void)state;
    struct hostile_case c;
    hostile_case_start(&c);
    enum { TINY = 40000 };
    for (unsigned i = 0; i < TINY; i++)
        fake_send_output(&c.g, 1, 1);
    fake_send_exec_exit(&c.g, 1);
    size_t got = 0;
    GuestFrame *f;
    for (;;) {
        assert_int_equal(guest_stream_recv(c.s, 5000, &f), GUEST_RECV_OK);
        bool exit = f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT;
        got += frame_payload_bytes(f);
        frame_free(f);
        if (exit)
            break;
    }
    assert_int_equal(got, TINY);
    assert_true(guest_channel_alive(c.ch, NULL, 0));
    hostile_case_end(&c);
}

static void test_unopened_stream_cuts_off(void **state)
{
    (void)state;
    struct hostile_case c;
    hostile_case_start(&c);
    fake_send_output(&c.g, 7, 10);
    assert_cut_off(c.ch, &c.v, "stream 7, which vmhost never opened");
    hostile_case_end(&c);
}

static void test_empty_frames_fill_queue_and_cut_off(void **state)
{
    (void)state;
    struct hostile_case c;
    hostile_case_start(&c);
    /* No payload, so no window: the queue's byte bound stops them. */
    Airlock__Guest__V1__ExecStarted st = AIRLOCK__GUEST__V1__EXEC_STARTED__INIT;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = 1;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED;
    f.exec_started = &st;
    uint8_t *one;
    size_t one_len;
    assert_int_equal(frame_encode(&f, &one, &one_len), 0);
    size_t n = 64 * 1024, len = n * one_len;
    uint8_t *flood = malloc(len);
    for (size_t i = 0; i < n; i++)
        memcpy(flood + i * one_len, one, one_len);
    /* The host stops reading once it cuts the guest off: write what fits. */
    for (size_t off = 0; off < len;) {
        ssize_t w = write(c.g.fd, flood + off, len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
        if (!guest_channel_alive(c.ch, NULL, 0))
            break;
    }
    assert_cut_off(c.ch, &c.v, "queued on stream 1");
    free(flood);
    free(one);
    hostile_case_end(&c);
}

static void test_host_only_frame_cuts_off(void **state)
{
    (void)state;
    struct hostile_case c;
    hostile_case_start(&c);
    Airlock__Guest__V1__HealthRequest hr = AIRLOCK__GUEST__V1__HEALTH_REQUEST__INIT;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = 1;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH_REQUEST;
    f.health_request = &hr;
    fake_send(&c.g, &f);
    assert_cut_off(c.ch, &c.v, "only the host sends");
    hostile_case_end(&c);
}

static void test_frame_after_last_cuts_off(void **state)
{
    (void)state;
    struct hostile_case c;
    hostile_case_start(&c);
    fake_send_exec_exit(&c.g, 1);
    fake_send_output(&c.g, 1, 10);
    assert_cut_off(c.ch, &c.v, "after its last one");
    hostile_case_end(&c);
}

static void test_too_many_entries_cut_off(void **state)
{
    (void)state;
    struct hostile_case c;
    hostile_case_start(&c);
    size_t n = AIRLOCK_DIR_BATCH_ENTRIES + 1;
    Airlock__Guest__V1__FileInfo *infos = calloc(n, sizeof(*infos));
    Airlock__Guest__V1__FileInfo **ptrs = calloc(n, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        airlock__guest__v1__file_info__init(&infos[i]);
        ptrs[i] = &infos[i];
    }
    Airlock__Guest__V1__DirEntries de = AIRLOCK__GUEST__V1__DIR_ENTRIES__INIT;
    de.entries = ptrs;
    de.n_entries = n;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = 1;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DIR_ENTRIES;
    f.dir_entries = &de;
    fake_send(&c.g, &f);
    assert_cut_off(c.ch, &c.v, "too many entries");
    free(ptrs);
    free(infos);
    hostile_case_end(&c);
}

/* Frames the guest sent before it saw our Cancel are dropped, up to what
 * it could have had in flight; beyond that it is lying. */
static void test_late_frames_after_cancel(void **state)
{
    (void)state;
    struct hostile_case c;
    hostile_case_start(&c);
    struct guest_stream *s2 = guest_stream_open(c.ch); /* stream 2 */
    fake_send_output(&c.g, 2, AIRLOCK_CHUNK_MAX);
    usleep(100000);
    guest_stream_close(s2); /* cancels with 64 KiB unread */
    GuestFrame *cancel = fake_read_frame(&c.g);
    assert_int_equal(cancel->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_CANCEL);
    frame_free(cancel);
    /* The rest of its window was still the guest's to send. */
    for (unsigned i = 1; i < AIRLOCK_STREAM_WINDOW / AIRLOCK_CHUNK_MAX; i++)
        fake_send_output(&c.g, 2, AIRLOCK_CHUNK_MAX);
    fake_send_exec_exit(&c.g, 2);
    usleep(100000);
    assert_true(guest_channel_alive(c.ch, NULL, 0));
    /* After its last frame, nothing more. */
    fake_send_output(&c.g, 2, 1);
    assert_cut_off(c.ch, &c.v, "on stream 2 after it was closed");
    hostile_case_end(&c);
}

static void test_violation_before_listener_is_reported(void **state)
{
    (void)state;
    struct fake_guest g;
    int host_fd;
    struct guest_channel *ch = connect_to_fake(&g, &host_fd);
    fake_send_output(&g, 9, 1);
    char reason[256] = "";
    for (int i = 0; i < 500 && guest_channel_alive(ch, reason, sizeof(reason)); i++)
        usleep(10000);
    struct violation_seen v = { .calls = 0 };
    pthread_mutex_init(&v.lock, NULL);
    guest_channel_on_violation(ch, record_violation, &v);
    assert_cut_off(ch, &v, "never opened");
    guest_channel_close(ch);
    fake_close(&g, host_fd);
    pthread_mutex_destroy(&v.lock);
}

/* What a guest still had for a previous host reaches the new one before
 * the answer to its Hello: dropped, not taken for a lie. */
static void test_stale_frames_before_hello_dropped(void **state)
{
    (void)state;
    struct fake_guest g;
    struct connect_args a;
    pthread_t t;
    int host_fd = start_connect(&g, &a, &t);
    GuestFrame *hello = fake_read_frame(&g);
    assert_non_null(hello);
    fake_send_output(&g, 5, 100);
    fake_send_exec_exit(&g, 5);
    fake_send_hello(&g, hello->stream_id);
    frame_free(hello);
    pthread_join(t, NULL);
    assert_int_equal(a.rc, 0);
    usleep(100000);
    assert_true(guest_channel_alive(a.ch, NULL, 0));
    guest_channel_close(a.ch);
    fake_close(&g, host_fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes_frames_and_returns_credit),
        cmocka_unit_test(test_send_waits_for_credit),
        cmocka_unit_test(test_garbage_from_guest_closes_channel),
        cmocka_unit_test(test_malformed_payload_closes_channel),
        cmocka_unit_test(test_guest_vanishing_fails_streams),
        cmocka_unit_test(test_hello_resent_until_newest_answered),
        cmocka_unit_test(test_no_hello_times_out),
        cmocka_unit_test(test_output_past_window_cuts_off),
        cmocka_unit_test(test_consumed_output_makes_room),
        cmocka_unit_test(test_tiny_output_frames_within_window),
        cmocka_unit_test(test_unopened_stream_cuts_off),
        cmocka_unit_test(test_empty_frames_fill_queue_and_cut_off),
        cmocka_unit_test(test_host_only_frame_cuts_off),
        cmocka_unit_test(test_frame_after_last_cuts_off),
        cmocka_unit_test(test_too_many_entries_cut_off),
        cmocka_unit_test(test_late_frames_after_cancel),
        cmocka_unit_test(test_violation_before_listener_is_reported),
        cmocka_unit_test(test_stale_frames_before_hello_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
