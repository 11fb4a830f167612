/* A tiny host-side client for the guestd unit tests: runs the daemon core
 * in a forked child over a socketpair and speaks frames to it.
 * Header-only (static inline) so every test_guestd_*.c program can use it;
 * include it after <cmocka.h>. */
#ifndef TEST_GUESTD_CLIENT_H
#define TEST_GUESTD_CLIENT_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "guestd.h"
#include "log.h"

#define GD_TIMEOUT_MS 10000
#define GD_MAX_PENDING 4096

typedef Airlock__Guest__V1__ExecRequest ExecRequest;

struct gd {
    pid_t pid;
    int fd;
    struct frame_decoder dec;
    /* Frames read while waiting for another stream. */
    GuestFrame *pending[GD_MAX_PENDING];
    size_t npending;
    char tmpdir[64];
};

static inline int64_t gd_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int gd_rm_entry(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return (type == FTW_DP ? rmdir(p) : unlink(p)) < 0 ? -1 : 0;
}

static inline void gd_rm_rf(const char *path)
{
    nftw(path, gd_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Starts guestd in a child process; also makes a scratch directory. */
static inline struct gd *gd_start(void)
{
    struct gd *d = calloc(1, sizeof(*d));
    assert_non_null(d);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    fflush(NULL);
    d->pid = fork();
    assert_true(d->pid >= 0);
    if (d->pid == 0) {
        close(sv[0]);
        free(d); /* the parent's; LeakSanitizer would report it here */
        log_init("guestd-test", getenv("GUESTD_TEST_DEBUG") ? LOG_DEBUG : LOG_ERROR);
        struct guestd_options o = { .reconnecting = false };
        /* exit, not _exit: LeakSanitizer checks the daemon at exit. */
        exit(guestd_run(sv[1], &o) == 0 ? 0 : 1);
    }
    close(sv[1]);
    d->fd = sv[0];
    frame_decoder_init(&d->dec);
    snprintf(d->tmpdir, sizeof(d->tmpdir), "/tmp/guestd-test-XXXXXX");
    assert_non_null(mkdtemp(d->tmpdir));
    return d;
}

/* Closes the channel (guestd then kills what it started and exits) and
 * checks that it exited cleanly. */
static inline void gd_stop(struct gd *d)
{
    if (!d)
        return;
    close(d->fd);
    int status = -1;
    int64_t deadline = gd_now_ms() + 5000;
    pid_t r;
    while ((r = waitpid(d->pid, &status, WNOHANG)) == 0 && gd_now_ms() < deadline)
        usleep(5000);
    if (r == 0) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &status, 0);
    }
    for (size_t i = 0; i < d->npending; i++)
        frame_free(d->pending[i]);
    frame_decoder_free(&d->dec);
    gd_rm_rf(d->tmpdir);
    free(d);
    assert_true(r > 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static inline int gd_setup(void **state)
{
    *state = gd_start();
    return 0;
}

static inline int gd_teardown(void **state)
{
    gd_stop(*state);
    return 0;
}

static inline void gd_send(struct gd *d, const GuestFrame *f)
{
    assert_int_equal(frame_write_fd(d->fd, f), 0);
}

/* Sends a frame whose body is msg (every body member is a pointer). */
static inline void gd_send_body(struct gd *d, uint32_t id, int body_case, void *msg)
{
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = id;
    f.body_case = (Airlock__Guest__V1__GuestFrame__BodyCase)body_case;
    f.hello = msg;
    gd_send(d, &f);
}

static inline void gd_send_window(struct gd *d, uint32_t id, uint32_t bytes)
{
    Airlock__Guest__V1__WindowUpdate w = AIRLOCK__GUEST__V1__WINDOW_UPDATE__INIT;
    w.bytes = bytes;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW, &w);
}

static inline void gd_send_data(struct gd *d, uint32_t id, const void *data, size_t len, bool eof)
{
    Airlock__Guest__V1__Data m = AIRLOCK__GUEST__V1__DATA__INIT;
    m.data.data = (uint8_t *)data;
    m.data.len = len;
    m.eof = eof;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DATA, &m);
}

static inline void gd_send_cancel(struct gd *d, uint32_t id)
{
    Airlock__Guest__V1__Cancel c = AIRLOCK__GUEST__V1__CANCEL__INIT;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_CANCEL, &c);
}

/* Next frame from guestd (any stream), or NULL after timeout_ms. */
static inline GuestFrame *gd_read_frame(struct gd *d, int timeout_ms)
{
    int64_t deadline = gd_now_ms() + timeout_ms;
    for (;;) {
        GuestFrame *f;
        enum frame_status st = frame_decoder_next(&d->dec, &f);
        if (st == FRAME_OK)
            return f;
        assert_int_equal(st, FRAME_NEED_MORE);
        int64_t left = deadline - gd_now_ms();
        struct pollfd p = { .fd = d->fd, .events = POLLIN };
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return NULL;
        uint8_t buf[65536];
        ssize_t n = read(d->fd, buf, sizeof(buf));
        if (n <= 0)
            return NULL;
        assert_int_equal(frame_decoder_feed(&d->dec, buf, (size_t)n), 0);
    }
}

/* Next frame on stream id (others are kept for later), or NULL. */
static inline GuestFrame *gd_try_next(struct gd *d, uint32_t id, int timeout_ms)
{
    for (size_t i = 0; i < d->npending; i++) {
        if (d->pending[i]->stream_id == id) {
            GuestFrame *f = d->pending[i];
            memmove(&d->pending[i], &d->pending[i + 1], (d->npending - i - 1) * sizeof(f));
            d->npending--;
            return f;
        }
    }
    int64_t deadline = gd_now_ms() + timeout_ms;
    for (;;) {
        int64_t left = deadline - gd_now_ms();
        GuestFrame *f = gd_read_frame(d, left > 0 ? (int)left : 0);
        if (!f || f->stream_id == id)
            return f;
        assert_true(d->npending < GD_MAX_PENDING);
        d->pending[d->npending++] = f;
    }
}

static inline GuestFrame *gd_next(struct gd *d, uint32_t id)
{
    GuestFrame *f = gd_try_next(d, id, GD_TIMEOUT_MS);
    if (!f)
        fail_msg("no frame on stream %u within %d ms", id, GD_TIMEOUT_MS);
    return f;
}

/* Expects a Result on stream id; returns its errno, copies its message. */
static inline int gd_result(struct gd *d, uint32_t id, char *msg, size_t msglen)
{
    GuestFrame *f = gd_next(d, id);
    if (f->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT)
        fail_msg("stream %u: expected Result, got body %d", id, (int)f->body_case);
    int err = f->result->errno_value;
    if (msg)
        snprintf(msg, msglen, "%s", f->result->message);
    frame_free(f);
    return err;
}

/* ---- exec ---- */

struct gd_exec_opts {
    const char *const *argv; /* NULL-terminated */
    const char *const *env;
    const char *cwd;
    const char *user;
    uint32_t timeout_ms;
    bool pty;
    uint32_t rows, cols;
    bool background;
    bool stdin_open;
};

static inline void gd_send_exec(struct gd *d, uint32_t id, const struct gd_exec_opts *o)
{
    ExecRequest r = AIRLOCK__GUEST__V1__EXEC_REQUEST__INIT;
    ProtobufCBinaryData argv[64], env[64];
    for (r.n_argv = 0; o->argv && o->argv[r.n_argv]; r.n_argv++)
        argv[r.n_argv] = (ProtobufCBinaryData){ strlen(o->argv[r.n_argv]), (uint8_t *)o->argv[r.n_argv] };
    for (r.n_env = 0; o->env && o->env[r.n_env]; r.n_env++)
        env[r.n_env] = (ProtobufCBinaryData){ strlen(o->env[r.n_env]), (uint8_t *)o->env[r.n_env] };
    r.argv = argv;
    r.env = env;
    if (o->cwd)
        r.cwd = (ProtobufCBinaryData){ strlen(o->cwd), (uint8_t *)o->cwd };
    r.user = (char *)(o->user ? o->user : "");
    r.timeout_ms = o->timeout_ms;
    r.pty = o->pty;
    r.rows = o->rows;
    r.cols = o->cols;
    r.background = o->background;
    r.stdin_open = o->stdin_open;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC, &r);
}

struct gd_exec_result {
    int pid;        /* from ExecStarted, 0 if none */
    bool exited;    /* ExecExit seen */
    int exit_code, signal;
    bool timed_out;
    int err;        /* Result errno when it ended with a Result */
    char msg[512];
    char *out, *errout; /* NUL-terminated, malloc'd */
    size_t out_len, err_len;
};

static inline void gd_append(char **buf, size_t *len, const void *data, size_t n)
{
    *buf = realloc(*buf, *len + n + 1);
    assert_non_null(*buf);
    if (n)
        memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* Reads stream id to its terminal frame, returning window as output
 * arrives. */
static inline void gd_collect(struct gd *d, uint32_t id, struct gd_exec_result *res)
{
    memset(res, 0, sizeof(*res));
    gd_append(&res->out, &res->out_len, "", 0);
    gd_append(&res->errout, &res->err_len, "", 0);
    for (;;) {
        GuestFrame *f = gd_next(d, id);
        bool done = true;
        switch (f->body_case) {
        case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED:
            res->pid = f->exec_started->pid;
            done = false;
            break;
        case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT:
            if (f->output->fd == 2)
                gd_append(&res->errout, &res->err_len, f->output->data.data, f->output->data.len);
            else
                gd_append(&res->out, &res->out_len, f->output->data.data, f->output->data.len);
            gd_send_window(d, id, (uint32_t)f->output->data.len);
            done = false;
            break;
        case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW: /* stdin credit */
            done = false;
            break;
        case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT:
            res->exited = true;
            res->exit_code = f->exec_exit->exit_code;
            res->signal = f->exec_exit->signal;
            res->timed_out = f->exec_exit->timed_out;
            break;
        case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT:
            res->err = f->result->errno_value;
            snprintf(res->msg, sizeof(res->msg), "%s", f->result->message);
            break;
        default:
            fail_msg("stream %u: unexpected body %d", id, (int)f->body_case);
        }
        frame_free(f);
        if (done)
            return;
    }
}

static inline void gd_exec_result_free(struct gd_exec_result *res)
{
    free(res->out);
    free(res->errout);
    res->out = res->errout = NULL;
}

/* Runs a foreground exec to completion. */
static inline void gd_run(struct gd *d, uint32_t id, const struct gd_exec_opts *o,
                          struct gd_exec_result *res)
{
    gd_send_exec(d, id, o);
    gd_collect(d, id, res);
}

/* ---- files ---- */

/* Collects exec id, which must exit with code, its stdout being out. */
static inline void gd_expect_exit(struct gd *d, uint32_t id, int code, const char *out)
{
    struct gd_exec_result r;
    gd_collect(d, id, &r);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, code);
    assert_string_equal(r.out, out);
    gd_exec_result_free(&r);
}

static inline ProtobufCBinaryData gd_bytes(const char *s)
{
    return (ProtobufCBinaryData){ strlen(s), (uint8_t *)s };
}

/* The next frame answering a FileWrite: a WindowUpdate (its bytes added
 * to *window), or the Result (true; its errno in *err). */
static inline bool gd_write_reply(struct gd *d, uint32_t id, uint64_t *window, int *err)
{
    GuestFrame *f = gd_next(d, id);
    bool result = f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT;
    if (result) {
        *err = f->result->errno_value;
    } else {
        assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW);
        *window += f->window->bytes;
    }
    frame_free(f);
    return result;
}

/* Writes data to path with FileWrite, honouring the window; returns the
 * Result errno. */
static inline int gd_write_file(struct gd *d, uint32_t id, const char *path, const void *data,
                                size_t len, bool append, uint32_t mode)
{
    Airlock__Guest__V1__FileWriteRequest w = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
    w.path = gd_bytes(path);
    w.append = append;
    w.mode = mode;
    w.make_parents = true;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_WRITE, &w);
    uint64_t window = AIRLOCK_STREAM_WINDOW;
    size_t off = 0;
    int err;
    for (;;) {
        while (window > 0 && off < len) {
            size_t n = len - off;
            if (n > AIRLOCK_CHUNK_MAX)
                n = AIRLOCK_CHUNK_MAX;
            if (n > window)
                n = (size_t)window;
            gd_send_data(d, id, (const uint8_t *)data + off, n, false);
            off += n;
            window -= n;
        }
        if (off == len) {
            gd_send_data(d, id, NULL, 0, true);
            break;
        }
        if (gd_write_reply(d, id, &window, &err))
            return err;
    }
    while (!gd_write_reply(d, id, &window, &err)) /* window updates, then the Result */
        ;
    return err;
}

/* Reads path with FileRead, returning window as data arrives. Returns the
 * errno of a Result (then *out is NULL) or 0 with *out malloc'd. */
static inline int gd_read_file(struct gd *d, uint32_t id, const char *path, uint64_t offset,
                               uint64_t length, char **out, size_t *out_len)
{
    Airlock__Guest__V1__FileReadRequest r = AIRLOCK__GUEST__V1__FILE_READ_REQUEST__INIT;
    r.path = gd_bytes(path);
    r.offset = offset;
    r.length = length;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_READ, &r);
    *out = NULL;
    *out_len = 0;
    for (;;) {
        GuestFrame *f = gd_next(d, id);
        if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT) {
            int err = f->result->errno_value;
            frame_free(f);
            free(*out);
            *out = NULL;
            return err;
        }
        assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DATA);
        gd_append(out, out_len, f->data->data.data, f->data->data.len);
        if (f->data->data.len)
            gd_send_window(d, id, (uint32_t)f->data->data.len);
        bool eof = f->data->eof;
        frame_free(f);
        if (eof)
            return 0;
    }
}

/* Expects the Health answer on stream id. */
static inline void gd_expect_health(struct gd *d, uint32_t id)
{
    Airlock__Guest__V1__HealthRequest h = AIRLOCK__GUEST__V1__HEALTH_REQUEST__INIT;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH_REQUEST, &h);
    GuestFrame *f = gd_next(d, id);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH);
    assert_true(f->health->ready);
    assert_string_equal(f->health->guestd_version, GUESTD_VERSION);
    frame_free(f);
}

#endif
