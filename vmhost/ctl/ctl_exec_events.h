/* Relaying an ExecEvent stream (Exec, AttachProcess) to the terminal. */
#ifndef AIRLOCK_VMHOSTCTL_EXEC_EVENTS_H
#define AIRLOCK_VMHOSTCTL_EXEC_EVENTS_H

#include "rpc_client.h"
#include "vmhost.pb-c.h"

#include <stdbool.h>

struct exec_outcome {
    bool exited; /* an exit event arrived */
    int32_t exit_code;
    int32_t signal;
    bool timed_out;
};

typedef void (*exec_started_fn)(const Airlock__Vmhost__V1__ExecStarted *started, void *arg);

/* Reads events until the stream ends: output goes to stdout / stderr as it
 * arrives, `started` to on_started (may be NULL), `exit` into *outcome.
 * Cancels the stream when the local output cannot be written. The caller
 * still finishes the stream. */
void exec_events_relay(struct rpc_stream *s, exec_started_fn on_started, void *arg,
                       struct exec_outcome *outcome);

/* The exit code vmhostctl passes on: the command's own, 128+signal, or 124
 * when it timed out (like timeout(1)). */
int exec_outcome_exit_code(const struct exec_outcome *outcome);

#endif
