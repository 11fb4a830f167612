#include "service_exec_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "template_registry.h"

#define EXEC_MAX_ARGS 4096
#define EXEC_MAX_ENV 4096
#define EXEC_MAX_PTY_DIM 1000
#define EXEC_RELAY_POLL_MS 250

static bool bytes_have_nul(ProtobufCBinaryData b)
{
    return b.len && memchr(b.data, '\0', b.len);
}

bool guest_exec_request_translate(struct rpc_call *call, const Airlock__Vmhost__V1__ExecRequest *req,
                            struct guest_exec_request *out)
{
    memset(out, 0, sizeof(*out));
    airlock__guest__v1__exec_request__init(&out->msg);
    if (req->n_argv == 0) {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "argv: at least the program is required");
        return false;
    }
    if (req->n_argv > EXEC_MAX_ARGS) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "argv: more than %d arguments",
                         EXEC_MAX_ARGS);
        return false;
    }
    if (req->argv[0].len == 0) {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "argv[0]: the program name is empty");
        return false;
    }
    for (size_t i = 0; i < req->n_argv; i++) {
        if (bytes_have_nul(req->argv[i])) {
            rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "argv[%zu]: contains a NUL byte", i);
            return false;
        }
    }
    if (req->n_env > EXEC_MAX_ENV) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "env: more than %d variables",
                         EXEC_MAX_ENV);
        return false;
    }
    size_t storage = 0;
    for (size_t i = 0; i < req->n_env; i++) {
        const char *k = req->env[i]->key;
        if (!*k || strchr(k, '=')) {
            rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT,
                             "env: variable name \"%.64s\" must be non-empty and contain no '='", k);
            return false;
        }
        storage += strlen(k) + strlen(req->env[i]->value) + 2;
    }
    if (req->cwd.len && !service_check_path(call, "cwd", req->cwd))
        return false;
    if (req->pty && (req->rows > EXEC_MAX_PTY_DIM || req->cols > EXEC_MAX_PTY_DIM)) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "rows/cols: at most %d",
                         EXEC_MAX_PTY_DIM);
        return false;
    }

    out->env = calloc(req->n_env ? req->n_env : 1, sizeof(*out->env));
    out->env_storage = malloc(storage ? storage : 1);
    if (!out->env || !out->env_storage) {
        guest_exec_request_free(out);
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return false;
    }
    char *p = out->env_storage;
    for (size_t i = 0; i < req->n_env; i++) {
        int n = sprintf(p, "%s=%s", req->env[i]->key, req->env[i]->value);
        out->env[i].data = (uint8_t *)p;
        out->env[i].len = (size_t)n;
        p += n + 1;
    }
    out->msg.n_argv = req->n_argv;
    out->msg.argv = req->argv;
    out->msg.n_env = req->n_env;
    out->msg.env = out->env;
    out->msg.cwd = req->cwd;
    out->msg.user = req->user;
    out->msg.timeout_ms = req->timeout_ms;
    out->msg.pty = req->pty;
    out->msg.rows = req->rows ? req->rows : 24;
    out->msg.cols = req->cols ? req->cols : 80;
    out->msg.stdin_open = req->stdin_open || req->stdin.len > 0;
    out->msg.tag = req->tag;
    return true;
}

bool guest_exec_request_add_template_defaults(struct rpc_call *call, const struct sandbox *sb,
                                        struct guest_exec_request *g)
{
    const struct template_version *t = sandbox_template(sb);
    if (!t)
        return true;
    if (g->msg.cwd.len == 0 && *t->workdir) {
        g->msg.cwd.data = (uint8_t *)t->workdir;
        g->msg.cwd.len = strlen(t->workdir);
    }
    if (t->n_env == 0)
        return true;
    /* The guest applies entries in order, a later one replacing an earlier
     * one of the same name. */
    ProtobufCBinaryData *env = calloc(t->n_env + g->msg.n_env, sizeof(*env));
    if (!env) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return false;
    }
    memcpy(env, t->env, t->n_env * sizeof(*env));
    memcpy(env + t->n_env, g->msg.env, g->msg.n_env * sizeof(*env));
    free(g->env);
    g->env = env;
    g->msg.env = env;
    g->msg.n_env += t->n_env;
    return true;
}

void guest_exec_request_free(struct guest_exec_request *g)
{
    free(g->env);
    free(g->env_storage);
    g->env = NULL;
    g->env_storage = NULL;
}

static int exec_event_send_output(struct rpc_call *call, const Airlock__Guest__V1__Output *o)
{
    Airlock__Vmhost__V1__ExecOutput out = AIRLOCK__VMHOST__V1__EXEC_OUTPUT__INIT;
    out.fd = o->fd;
    out.data = o->data;
    Airlock__Vmhost__V1__ExecEvent ev = AIRLOCK__VMHOST__V1__EXEC_EVENT__INIT;
    ev.event_case = AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT;
    ev.output = &out;
    return rpc_call_send(call, &ev.base);
}

static int exec_event_send_exit(struct rpc_call *call, const Airlock__Guest__V1__ExecExit *x)
{
    Airlock__Vmhost__V1__ExecExit ex = AIRLOCK__VMHOST__V1__EXEC_EXIT__INIT;
    ex.exit_code = x->exit_code;
    ex.signal = x->signal;
    ex.timed_out = x->timed_out;
    Airlock__Vmhost__V1__ExecEvent ev = AIRLOCK__VMHOST__V1__EXEC_EVENT__INIT;
    ev.event_case = AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT;
    ev.exit = &ex;
    return rpc_call_send(call, &ev.base);
}

/* Feeds as much pending stdin as the guest's window allows without
 * waiting, so output keeps flowing while stdin is large. */
static void exec_feed_stdin(struct guest_stream *s, ProtobufCBinaryData *pending, bool *eof_due)
{
    while (pending->len > 0) {
        size_t n = pending->len > AIRLOCK_CHUNK_MAX ? AIRLOCK_CHUNK_MAX : pending->len;
        bool last = n == pending->len && *eof_due;
        if (guest_stream_send_bytes(s, pending->data, n, last, 0) < 0)
            return;
        pending->data += n;
        pending->len -= n;
        if (last)
            *eof_due = false;
    }
    if (*eof_due && guest_stream_send_bytes(s, NULL, 0, true, 0) == 0)
        *eof_due = false;
}

void exec_stream_relay(struct rpc_call *call, struct sandbox *sb, struct guest_stream *s,
                       ProtobufCBinaryData pending_stdin, bool close_stdin_after)
{
    bool eof_due = close_stdin_after;
    for (;;) {
        if (pending_stdin.len || eof_due)
            exec_feed_stdin(s, &pending_stdin, &eof_due);
        if (rpc_call_cancelled(call)) {
            rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client cancelled");
            return;
        }
        GuestFrame *f;
        enum guest_recv_status st = guest_stream_recv(s, EXEC_RELAY_POLL_MS, &f);
        if (st == GUEST_RECV_TIMEOUT)
            continue;
        if (st != GUEST_RECV_OK) {
            service_finish_guest_failure(call, sb, st);
            return;
        }
        int sent = 0;
        switch (f->body_case) {
        case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT:
            sandbox_touch(sb);
            sent = exec_event_send_output(call, f->output);
            break;
        case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT:
            exec_event_send_exit(call, f->exec_exit);
            rpc_call_finish(call, GRPC_STATUS_OK, NULL);
            frame_free(f);
            return;
        case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT:
            service_finish_from_result(call, f);
            frame_free(f);
            return;
        default:
            break; /* nothing else belongs on an exec stream; ignore it */
        }
        frame_free(f);
        if (sent < 0) {
            rpc_call_finish(call, GRPC_STATUS_CANCELLED, "client went away");
            return;
        }
    }
}

/* Waits for the guest's first answer: ExecStarted, or a Result explaining
 * why the program could not start (finishes the call then). */
static bool wait_started(struct rpc_call *call, struct sandbox *sb, struct guest_stream *s,
                              int32_t *pid)
{
    GuestFrame *f;
    enum guest_recv_status st = guest_stream_recv(s, SERVICE_GUEST_TIMEOUT_MS, &f);
    if (st != GUEST_RECV_OK) {
        service_finish_guest_failure(call, sb, st);
        return false;
    }
    bool started = f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED;
    if (started)
        *pid = f->exec_started->pid;
    else if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT)
        service_finish_from_result(call, f);
    else
        rpc_call_finish(call, GRPC_STATUS_INTERNAL, "guest sent an unexpected answer to exec");
    frame_free(f);
    return started;
}

bool exec_start(struct rpc_call *call, struct vmhost *vh,
                const Airlock__Vmhost__V1__ExecRequest *req, bool background,
                struct exec_started *x)
{
    *x = (struct exec_started){ 0 };
    if (!guest_exec_request_translate(call, req, &x->g))
        return false;
    x->translated = true;
    x->g.msg.background = background;
    x->ch = service_running_sandbox(call, vh, req->sandbox_id, &x->sb);
    if (!x->ch || !guest_exec_request_add_template_defaults(call, x->sb, &x->g))
        return false;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC;
    f.exec = &x->g.msg;
    x->s = service_open_stream(call, x->sb, x->ch, &f);
    return x->s && wait_started(call, x->sb, x->s, &x->pid);
}

void exec_started_done(struct exec_started *x)
{
    guest_stream_close(x->s);
    service_done(x->sb, x->ch);
    if (x->translated)
        guest_exec_request_free(&x->g);
}
