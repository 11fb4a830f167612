/* vmhost's gRPC service (protos/vmhost.proto; its methods listed in
 * service_methods.c): the operations of ops.h (service_op.c), and request
 * validation and translation between the API's messages and the guest
 * protocol for the rest. One file per method group: service_exec.c, service_process.c, service_files.c,
 * service_logs.c (console and connection logs), service_template.c,
 * service_node.c. */
#ifndef AIRLOCK_VMHOST_SERVICE_H
#define AIRLOCK_VMHOST_SERVICE_H

#include <stddef.h>

#include "ops.h"
#include "rpc_err.h"
#include "rpc_server.h"
#include "sandbox.h"
#include "vmhost.h"

struct rpc_server *vmhost_service_start(struct vmhost *vh, const char *addr, char *err,
                                        size_t errlen);

/* Shared by the handlers. */
#define SERVICE_GUEST_TIMEOUT_MS 30000

grpc_status_code service_status_from_errno(int err);

/* Looks up the running sandbox named by id and its channel; on failure the
 * call is finished with NOT_FOUND / FAILED_PRECONDITION / INVALID_ARGUMENT
 * and NULL returned. The caller drops both references with service_done(). */
struct guest_channel *service_running_sandbox(struct rpc_call *call, struct vmhost *vh,
                                              const char *id, struct sandbox **sb_out);

void service_done(struct sandbox *sb, struct guest_channel *ch);

/* Finishes the call from a guest answer that should be Result{0}: OK, or the
 * errno mapped to a status with the guest's message. */
void service_finish_from_result(struct rpc_call *call, const GuestFrame *ans);

/* One request frame on a fresh stream, one answer; NULL after finishing
 * the call when the guest did not answer. */
GuestFrame *service_guest_call(struct rpc_call *call, struct sandbox *sb, struct guest_channel *ch,
                               GuestFrame *req);

/* The whole of a one-frame question to a running sandbox's guest: its
 * answer when its body is want (free it with frame_free), else NULL after
 * finishing the call (lookup failures, the guest's Result as its
 * status). activity: the question counts as the sandbox's activity (as
 * service_running_sandbox does); false for observing it. */
GuestFrame *service_guest_ask(struct rpc_call *call, struct vmhost *vh, const char *id,
                              bool activity, GuestFrame *req,
                              Airlock__Guest__V1__GuestFrame__BodyCase want);

/* Answers Empty on Result{0}, the mapped error otherwise. */
void service_finish_empty(struct rpc_call *call, const GuestFrame *ans);

/* Finishes the call for a guest_call/recv that returned no frame. */
void service_finish_guest_failure(struct rpc_call *call, struct sandbox *sb,
                                  enum guest_recv_status st);

/* Opens a stream and sends req on it; NULL after finishing the call with
 * UNAVAILABLE when the channel is gone. */
struct guest_stream *service_open_stream(struct rpc_call *call, struct sandbox *sb,
                                         struct guest_channel *ch, GuestFrame *req);

/* The whole of a request answered by Empty: look the sandbox up, send req,
 * answer Empty on Result{0}, the mapped error otherwise. */
void service_simple_op(struct rpc_call *call, struct vmhost *vh, const char *sandbox_id,
                       GuestFrame *req);

/* pid > 0 and a permission mode <= 07777; otherwise INVALID_ARGUMENT. */
bool service_check_pid(struct rpc_call *call, int32_t pid);
bool service_check_mode(struct rpc_call *call, uint32_t mode);

/* Path fields: non-empty, no NUL bytes, at most PATH_MAX. Finishes the call
 * with INVALID_ARGUMENT naming the field when not. */
bool service_check_path(struct rpc_call *call, const char *field, ProtobufCBinaryData path);

/* The sandbox named by id with a reference, or NULL after finishing the
 * call with INVALID_ARGUMENT / NOT_FOUND. */
struct sandbox *service_lookup_sandbox(struct rpc_call *call, struct vmhost *vh, const char *id);

/* Every operation of ops.h's table that has a VmHost method (service_op.c). */
void service_op(struct rpc_call *call, void *ctx);
/* The file operations forwarded to the guest as they are
 * (service_forward.c): the handler, and the methods it serves by index
 * (NULL past the last). */
void service_file_forward(struct rpc_call *call, void *ctx);
const char *service_forward_method(size_t i);
/* f to the guest on sb's channel, its answer to the call: the guest's
 * FileInfo when answers_file_info, else Empty on Result{0}; an error maps
 * to its status. */
void service_forward_frame(struct rpc_call *call, struct sandbox *sb, struct guest_channel *ch,
                           GuestFrame *f, bool answers_file_info);

void service_node_stats(struct rpc_call *call, void *ctx);
void service_connections(struct rpc_call *call, void *ctx);   /* service_logs.c */
void service_console_log(struct rpc_call *call, void *ctx);
void service_exec(struct rpc_call *call, void *ctx);
void service_exec_input(struct rpc_call *call, void *ctx);
void service_process_start(struct rpc_call *call, void *ctx);
void service_process_list(struct rpc_call *call, void *ctx);
void service_process_attach(struct rpc_call *call, void *ctx);
void service_process_stdin(struct rpc_call *call, void *ctx);
void service_process_signal(struct rpc_call *call, void *ctx);
void service_process_resize(struct rpc_call *call, void *ctx);
void service_file_read(struct rpc_call *call, void *ctx);
void service_file_write(struct rpc_call *call, void *ctx);
void service_file_list(struct rpc_call *call, void *ctx);
void service_list_ports(struct rpc_call *call, void *ctx);     /* service_ports.c */
void service_sandbox_metrics(struct rpc_call *call, void *ctx); /* service_metrics.c */
void service_port_forward(struct rpc_call *call, void *ctx);
void service_watch_dir(struct rpc_call *call, void *ctx);    /* service_watch.c */
void service_build_template(struct rpc_call *call, void *ctx);  /* service_template.c */
void service_list_templates(struct rpc_call *call, void *ctx);
void service_get_template(struct rpc_call *call, void *ctx);

/* A Template message of a version (strings point into it: keep the
 * reference until the message is sent). */
struct template_version;
struct template_view {
    Airlock__Vmhost__V1__Template msg;
    Airlock__Vmhost__V1__Template__EnvEntry *env;
    Airlock__Vmhost__V1__Template__EnvEntry **env_ptrs;
    char **packages;
};
void template_view_take(struct vmhost *vh, struct template_version *t, struct template_view *v);
void template_view_free(struct template_view *v);

#endif
