#include "exec_input.h"

#include "tty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STDIN_CHUNK (32 * 1024)

struct exec_input {
    struct ctl *ctl;
    char *sandbox_id;
    char *exec_id;
    bool with_resize;
    int wake_pipe[2]; /* written by exec_input_stop */
    pthread_t thread;
};

/* false when vmhost refused the input (the exec ended): stop forwarding. */
static bool send_input(struct exec_input *in, Airlock__Vmhost__V1__ExecInputRequest *req)
{
    req->sandbox_id = in->sandbox_id;
    req->exec_id = in->exec_id;
    ProtobufCMessage *resp = NULL;
    grpc_status_code code = rpc_unary(in->ctl->channel, VMHOST_METHOD("ExecInput"), &req->base,
                                      &airlock__vmhost__v1__exec_input_response__descriptor, &resp,
                                      NULL, in->ctl->call_timeout_ms);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return code == GRPC_STATUS_OK;
}

static bool forward_stdin(struct exec_input *in, bool *stdin_open)
{
    static uint8_t buf[STDIN_CHUNK];
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    Airlock__Vmhost__V1__ExecInputRequest req = AIRLOCK__VMHOST__V1__EXEC_INPUT_REQUEST__INIT;
    if (n > 0) {
        req.stdin = (ProtobufCBinaryData){.len = (size_t)n, .data = buf};
    } else {
        req.close_stdin = true;
        *stdin_open = false;
    }
    return send_input(in, &req);
}

static bool forward_resize(struct exec_input *in)
{
    tty_winch_drain();
    Airlock__Vmhost__V1__ExecInputRequest req = AIRLOCK__VMHOST__V1__EXEC_INPUT_REQUEST__INIT;
    if (!tty_window_size(&req.rows, &req.cols))
        return true;
    return send_input(in, &req);
}

static void *input_main(void *arg)
{
    struct exec_input *in = arg;
    bool stdin_open = true;
    bool forwarding = true;
    int winch_fd = in->with_resize ? tty_winch_watch() : -1;
    while (forwarding) {
        struct pollfd fds[3] = {
            {.fd = in->wake_pipe[0], .events = POLLIN},
            {.fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN},
            {.fd = winch_fd, .events = POLLIN},
        };
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[0].revents)
            break;
        if (fds[1].revents)
            forwarding = forward_stdin(in, &stdin_open);
        if (forwarding && fds[2].revents)
            forwarding = forward_resize(in);
    }
    return NULL;
}

static void exec_input_free(struct exec_input *in)
{
    for (int i = 0; i < 2; i++)
        if (in->wake_pipe[i] >= 0)
            close(in->wake_pipe[i]);
    free(in->sandbox_id);
    free(in->exec_id);
    free(in);
}

struct exec_input *exec_input_start(struct ctl *ctl, const char *sandbox_id, const char *exec_id,
                                    bool with_resize)
{
    struct exec_input *in = calloc(1, sizeof(*in));
    if (!in)
        goto fail;
    in->wake_pipe[0] = in->wake_pipe[1] = -1;
    in->ctl = ctl;
    in->sandbox_id = strdup(sandbox_id);
    in->exec_id = strdup(exec_id);
    if (!in->sandbox_id || !in->exec_id || pipe2(in->wake_pipe, O_CLOEXEC) < 0)
        goto fail;
    in->with_resize = with_resize && tty_winch_watch() >= 0;
    if (pthread_create(&in->thread, NULL, input_main, in) != 0) {
        if (in->with_resize)
            tty_winch_unwatch();
        goto fail;
    }
    return in;

fail:
    fprintf(stderr, "vmhostctl: cannot forward stdin: %s\n", strerror(errno ? errno : ENOMEM));
    if (in)
        exec_input_free(in);
    return NULL;
}

void exec_input_stop(struct exec_input *in)
{
    if (!in)
        return;
    while (write(in->wake_pipe[1], "x", 1) < 0 && errno == EINTR)
        ;
    pthread_join(in->thread, NULL);
    if (in->with_resize)
        tty_winch_unwatch();
    exec_input_free(in);
}
