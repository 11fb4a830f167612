#include "template_guest.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "guest_channel.h"

#define TEMPLATE_GUEST_CALL_MS 30000
/* Beyond the command's own timeout: the guest reports it, give it time. */
#define TEMPLATE_GUEST_GRACE_MS 10000
#define TEMPLATE_LOG_LINE_MAX 2048

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
                                 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || len > n || (len == 2 && s[0] < 0xc2))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

void template_log_line_clean(const char *text, size_t len, char *out, size_t outlen)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < outlen;) {
        size_t n = utf8_sequence(s + i, len - i);
        if (n == 0 || (n == 1 && s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f) {
            out[o++] = '?';
            i += n ? n : 1;
            continue;
        }
        if (o + n + 1 > outlen)
            break;
        memcpy(out + o, s + i, n);
        o += n;
        i += n;
    }
    out[o] = '\0';
}

/* One answer that should be Result{0}. */
static int expect_ok(struct guest_channel *ch, GuestFrame *req, const char *what, char *err,
                     size_t errlen)
{
    GuestFrame *ans;
    if (guest_call(ch, req, TEMPLATE_GUEST_CALL_MS, &ans) != GUEST_RECV_OK) {
        snprintf(err, errlen, "%s: the guest did not answer", what);
        return -1;
    }
    int rc = 0;
    if (ans->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT ||
        ans->result->errno_value) {
        rc = ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT ? 1 : -1;
        snprintf(err, errlen, "%s: %s", what,
                 ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT
                     ? ans->result->message
                     : "unexpected answer");
    }
    frame_free(ans);
    return rc;
}

int template_guest_mkdir(struct guest_channel *ch, const char *path, char *err, size_t errlen)
{
    Airlock__Guest__V1__MkdirRequest m = AIRLOCK__GUEST__V1__MKDIR_REQUEST__INIT;
    m.path.data = (uint8_t *)path;
    m.path.len = strlen(path);
    m.parents = true;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_MKDIR;
    f.mkdir = &m;
    char what[256];
    snprintf(what, sizeof(what), "mkdir -p %.200s", path);
    return expect_ok(ch, &f, what, err, errlen);
}

int template_guest_write_file(struct guest_channel *ch, const char *path, const void *data,
                              size_t len, unsigned mode, char *err, size_t errlen)
{
    Airlock__Guest__V1__FileWriteRequest fw = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
    fw.path.data = (uint8_t *)path;
    fw.path.len = strlen(path);
    fw.mode = mode;
    fw.make_parents = true;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_WRITE;
    f.file_write = &fw;
    struct guest_stream *s = guest_stream_open(ch);
    if (!s || guest_stream_send(s, &f, TEMPLATE_GUEST_CALL_MS) < 0) {
        guest_stream_close(s);
        snprintf(err, errlen, "write %.200s: the guest channel is gone", path);
        return -1;
    }
    /* A refused write ends the stream early; its Result says why. */
    guest_stream_send_bytes(s, data, len, true, TEMPLATE_GUEST_CALL_MS);
    GuestFrame *ans = NULL;
    int rc = -1;
    if (guest_stream_recv(s, TEMPLATE_GUEST_CALL_MS, &ans) != GUEST_RECV_OK)
        snprintf(err, errlen, "write %.200s: the guest did not answer", path);
    else if (ans->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT)
        snprintf(err, errlen, "write %.200s: unexpected answer", path);
    else if (ans->result->errno_value) {
        snprintf(err, errlen, "write %.200s: %s", path, ans->result->message);
        rc = 1;
    } else {
        rc = 0;
    }
    frame_free(ans);
    guest_stream_close(s);
    return rc;
}

static struct guest_stream *exec_open(struct guest_channel *ch, const char *cmd,
                                      const struct template_guest_exec *how, bool background)
{
    static const char shell[] = "/bin/sh", dash_c[] = "-c";
    ProtobufCBinaryData argv[] = { { sizeof(shell) - 1, (uint8_t *)shell },
                                   { sizeof(dash_c) - 1, (uint8_t *)dash_c },
                                   { strlen(cmd), (uint8_t *)cmd } };
    Airlock__Guest__V1__ExecRequest ex = AIRLOCK__GUEST__V1__EXEC_REQUEST__INIT;
    ex.n_argv = 3;
    ex.argv = argv;
    ex.n_env = how->n_env;
    ex.env = (ProtobufCBinaryData *)how->env;
    ex.cwd.data = (uint8_t *)how->cwd;
    ex.cwd.len = strlen(how->cwd);
    ex.background = background;
    ex.timeout_ms = background ? 0 : (uint32_t)how->timeout_ms;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC;
    f.exec = &ex;
    struct guest_stream *s = guest_stream_open(ch);
    if (s && guest_stream_send(s, &f, TEMPLATE_GUEST_CALL_MS) == 0)
        return s;
    guest_stream_close(s);
    return NULL;
}

/* Output split into lines, per fd so partial lines never interleave. */
struct line_buffer {
    char text[TEMPLATE_LOG_LINE_MAX];
    size_t len;
};

static void line_emit(struct line_buffer *b, template_log_fn log, void *arg)
{
    char line[TEMPLATE_LOG_LINE_MAX + 8];
    memcpy(line, "| ", 2);
    template_log_line_clean(b->text, b->len, line + 2, sizeof(line) - 2);
    log(arg, line);
    b->len = 0;
}

static void lines_add(struct line_buffer *b, const uint8_t *data, size_t len, template_log_fn log,
                      void *arg)
{
    for (size_t i = 0; i < len; i++) {
        if (data[i] == '\n') {
            line_emit(b, log, arg);
            continue;
        }
        if (b->len == sizeof(b->text))
            line_emit(b, log, arg);
        b->text[b->len++] = (char)data[i];
    }
}

/* The exit as 0, or -1 with err. */
static int exit_status(const Airlock__Guest__V1__ExecExit *x, int timeout_ms, char *err,
                       size_t errlen)
{
    if (x->timed_out)
        snprintf(err, errlen, "timed out after %d s (killed)", timeout_ms / 1000);
    else if (x->signal)
        snprintf(err, errlen, "killed by signal %d", x->signal);
    else if (x->exit_code)
        snprintf(err, errlen, "exited with code %d", x->exit_code);
    else
        return 0;
    return -1;
}

int template_guest_run(struct guest_channel *ch, const char *cmd,
                       const struct template_guest_exec *how, template_log_fn log, void *log_arg,
                       char *err, size_t errlen)
{
    struct guest_stream *s = exec_open(ch, cmd, how, false);
    if (!s) {
        snprintf(err, errlen, "the guest channel is gone");
        return -1;
    }
    struct line_buffer out = { .len = 0 }, errb = { .len = 0 };
    int rc = -1;
    snprintf(err, errlen, "ended without an exit status");
    /* One deadline for the whole command, not one per frame: a guest that
     * trickles output past its own timeout must not hold the build. */
    int64_t give_up_at = clock_monotonic_ms() + how->timeout_ms + TEMPLATE_GUEST_GRACE_MS;
    for (;;) {
        GuestFrame *f;
        int64_t left = give_up_at - clock_monotonic_ms();
        enum guest_recv_status st =
            left > 0 ? guest_stream_recv(s, (int)left, &f) : GUEST_RECV_TIMEOUT;
        if (st != GUEST_RECV_OK) {
            snprintf(err, errlen, "%s", st == GUEST_RECV_TIMEOUT ? "the guest stopped answering"
                                                                 : "the guest channel is gone");
            break;
        }
        bool done = true;
        if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT) {
            lines_add(f->output->fd == 2 ? &errb : &out, f->output->data.data,
                      f->output->data.len, log, log_arg);
            done = false;
        } else if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT) {
            rc = exit_status(f->exec_exit, how->timeout_ms, err, errlen) < 0 ? 1 : 0;
        } else if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT) {
            snprintf(err, errlen, "%s", f->result->message);
            rc = 1;
        } else {
            done = false; /* ExecStarted */
        }
        frame_free(f);
        if (done)
            break;
    }
    if (out.len)
        line_emit(&out, log, log_arg);
    if (errb.len)
        line_emit(&errb, log, log_arg);
    guest_stream_close(s);
    return rc;
}

int template_guest_start(struct guest_channel *ch, const char *cmd,
                         const struct template_guest_exec *how, int *pid, char *err,
                         size_t errlen)
{
    struct guest_stream *s = exec_open(ch, cmd, how, true);
    if (!s) {
        snprintf(err, errlen, "the guest channel is gone");
        return -1;
    }
    GuestFrame *f = NULL;
    int rc = -1;
    if (guest_stream_recv(s, TEMPLATE_GUEST_CALL_MS, &f) != GUEST_RECV_OK) {
        snprintf(err, errlen, "the guest did not answer");
    } else if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT) {
        snprintf(err, errlen, "%s", f->result->message);
        rc = 1;
    } else if (f->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED) {
        snprintf(err, errlen, "unexpected answer");
    } else {
        *pid = f->exec_started->pid;
        rc = 0;
    }
    frame_free(f);
    /* A background process outlives its stream. */
    guest_stream_close(s);
    return rc;
}
