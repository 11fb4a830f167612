/* Pieces shared by Exec, StartProcess and AttachProcess: turning a public
 * ExecRequest into the guest's, and relaying a guest output stream to a
 * gRPC server stream of ExecEvents. */
#ifndef AIRLOCK_SERVICE_EXEC_COMMON_H
#define AIRLOCK_SERVICE_EXEC_COMMON_H

#include "vmhost_service.h"

struct guest_exec_request {
    Airlock__Guest__V1__ExecRequest msg;
    ProtobufCBinaryData *env;   /* "K=V" entries, owned */
    char *env_storage;
};

/* Validates req (finishing the call with INVALID_ARGUMENT naming the field
 * when it is bad) and fills out, which points into req: keep req alive. */
bool guest_exec_request_translate(struct rpc_call *call, const Airlock__Vmhost__V1__ExecRequest *req,
                            struct guest_exec_request *out);
void guest_exec_request_free(struct guest_exec_request *g);

/* Adds the defaults of sb's template (docs/templates.md): its env before
 * the request's (so the request's win) and its workdir when the request
 * has no cwd. false after finishing the call when out of memory. */
bool guest_exec_request_add_template_defaults(struct rpc_call *call, const struct sandbox *sb,
                                        struct guest_exec_request *g);

/* An exec in the guest, from its request to its ExecStarted. */
struct exec_started {
    struct guest_exec_request g;
    bool translated;             /* g holds something to free */
    struct sandbox *sb;
    struct guest_channel *ch;
    struct guest_stream *s;      /* its stream: output, exit */
    int32_t pid;
};

/* Starts req in its running sandbox: translated (background: a process the
 * guest keeps in its table), the template's defaults added, sent on a
 * fresh stream, and the guest's ExecStarted awaited. false after finishing
 * the call (a bad request, a sandbox not running, a program that could not
 * start). Either way exec_started_done() releases what x holds; closing
 * the stream ends a foreground exec. */
bool exec_start(struct rpc_call *call, struct vmhost *vh,
                const Airlock__Vmhost__V1__ExecRequest *req, bool background,
                struct exec_started *x);
void exec_started_done(struct exec_started *x);

/* Relays Output / ExecExit / Result frames from s to the call until the
 * stream ends, the client cancels or the channel fails; finishes the call.
 * pending_stdin (may be empty) is fed to the guest as credit allows, and
 * stdin is closed after it unless keep_stdin_open. */
void exec_stream_relay(struct rpc_call *call, struct sandbox *sb, struct guest_stream *s,
                       ProtobufCBinaryData pending_stdin, bool close_stdin_after);

#endif
