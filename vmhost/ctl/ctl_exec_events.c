#include "ctl_exec_events.h"

#include "fsutil.h"
#include "output.h"

#include <unistd.h>

void exec_events_relay(struct rpc_stream *s, exec_started_fn on_started, void *arg,
                       struct exec_outcome *outcome)
{
    *outcome = (struct exec_outcome){0};
    Airlock__Vmhost__V1__ExecEvent *ev;
    while (rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor,
                           (ProtobufCMessage **)&ev)) {
        bool write_failed = false;
        switch (ev->event_case) {
        case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_STARTED:
            if (on_started)
                on_started(ev->started, arg);
            break;
        case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT:
            write_failed = fs_write_all(ev->output->fd == 2 ? STDERR_FILENO : STDOUT_FILENO,
                                         ev->output->data.data, ev->output->data.len) < 0;
            break;
        case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT:
            outcome->exited = true;
            outcome->exit_code = ev->exit->exit_code;
            outcome->signal = ev->exit->signal;
            outcome->timed_out = ev->exit->timed_out;
            break;
        default:
            break;
        }
        protobuf_c_message_free_unpacked(&ev->base, NULL);
        if (write_failed) {
            rpc_stream_cancel(s);
            return;
        }
    }
}

int exec_outcome_exit_code(const struct exec_outcome *outcome)
{
    if (outcome->timed_out)
        return 124;
    if (outcome->signal > 0)
        return 128 + outcome->signal;
    return outcome->exit_code;
}
