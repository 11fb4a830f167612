/* Pieces shared by Exec, StartProcess and AttachProcess: turning a public
 * ExecRequest into the guest's, and relaying a guest output stream to a
 * gRPC server stream of ExecEvents. */
#ifndef AIRLOCK_SERVICE_EXEC_COMMON_H
#define AIRLOCK_SERVICE_EXEC_COMMON_H

#include "service.h"

struct guest_exec_request {
    Airlock__Guest__V1__ExecRequest msg;
    ProtobufCBinaryData *env;   /* "K=V" entries, owned */
    char *env_storage;
};

/* Validates req (finishing the call with INVALID_ARGUMENT naming the field
 * when it is bad) and fills out, which points into req: keep req alive. */
bool exec_request_translate(struct rpc_call *call, const Airlock__Vmhost__V1__ExecRequest *req,
                            struct guest_exec_request *out);
void exec_request_free(struct guest_exec_request *g);

/* Adds the defaults of sb's template (docs/templates.md): its env before
 * the request's (so the request's win) and its workdir when the request
 * has no cwd. false after finishing the call when out of memory. */
bool exec_request_add_template_defaults(struct rpc_call *call, const struct sandbox *sb,
                                        struct guest_exec_request *g);

/* Relays Output / ExecExit / Result frames from s to the call until the
 * stream ends, the client cancels or the channel fails; finishes the call.
 * pending_stdin (may be empty) is fed to the guest as credit allows, and
 * stdin is closed after it unless keep_stdin_open. */
void exec_stream_relay(struct rpc_call *call, struct sandbox *sb, struct guest_stream *s,
                       ProtobufCBinaryData pending_stdin, bool close_stdin_after);

#endif
