/* exec: run a command in a sandbox, relaying its output as it arrives and,
 * on request, the local stdin and terminal size. */
#include "ctl.h"
#include "ctl_exec_events.h"
#include "ctl_exec_spec.h"
#include "exec_input.h"
#include "tty.h"

#include <stdio.h>

struct exec_session {
    struct ctl *ctl;
    const struct exec_spec *spec;
    bool forward_stdin;
    struct exec_input *input; /* started with the exec's `started` event */
};

static void on_started(const Airlock__Vmhost__V1__ExecStarted *started, void *arg)
{
    struct exec_session *session = arg;
    if (session->forward_stdin && !session->input)
        session->input = exec_input_start(session->ctl, session->spec->req.sandbox_id,
                                          started->exec_id, session->spec->req.pty);
}

int ctl_cmd_exec(struct ctl *ctl, int argc, char **argv)
{
    struct exec_spec spec;
    int rc = ctl_exec_spec_parse(&spec, argc, argv);
    if (rc != 0)
        return rc;
    /* A PTY without the keyboard behind it is of little use: --pty implies
     * forwarding stdin. */
    struct exec_session session = {
        .ctl = ctl, .spec = &spec, .forward_stdin = spec.stdin_requested || spec.req.pty};
    spec.req.stdin_open = session.forward_stdin;
    if (spec.req.pty && !tty_window_size(&spec.req.rows, &spec.req.cols)) {
        spec.req.rows = 24;
        spec.req.cols = 80;
    }

    rc = CTL_EXIT_ERROR;
    struct tty_state tty = {0};
    struct exec_outcome outcome = {0};
    struct rpc_stream *s = NULL;
    if (ctl_connect(ctl) < 0)
        goto out;
    /* No deadline: the command may run as long as it likes (--timeout is
     * enforced by vmhost). */
    s = rpc_stream_open(ctl->channel, VMHOST_METHOD("Exec"), 0);
    if (!s)
        goto out;
    if (spec.req.pty)
        tty_enter_raw(&tty);
    if (rpc_stream_send(s, &spec.req.base) == 0 && rpc_stream_close_send(s) == 0)
        exec_events_relay(s, on_started, &session, &outcome);
    exec_input_stop(session.input);
    tty_restore(&tty);
    if (ctl_finish_stream(s) < 0)
        goto out;
    if (!outcome.exited) {
        fprintf(stderr, "vmhostctl: the exec stream ended without an exit status\n");
        goto out;
    }
    rc = exec_outcome_exit_code(&outcome);
out:
    ctl_exec_spec_free(&spec);
    return rc;
}
