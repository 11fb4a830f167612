/* One call of the public gRPC API as its handler sees it (grpc_api.c
 * authenticates it and reads the request first), and the handlers, one
 * file per group: grpc_sandboxes.c (lifecycle, network policy),
 * grpc_exec.c (exec, background processes), grpc_files.c,
 * grpc_checkpoints.c (checkpoints, restore, fork), grpc_events.c,
 * grpc_logs.c (console and connection logs), grpc_templates.c
 * (templates and their warm pools), grpc_projects.c (quotas), grpc_nodes.c
 * (nodes and their drain state). */
#ifndef AIRLOCK_GATEWAY_GRPC_CALL_H
#define AIRLOCK_GATEWAY_GRPC_CALL_H

#include <grpc/status.h>
#include <protobuf-c/protobuf-c.h>

#include "airlock/v1/events.pb-c.h"
#include "airlock/v1/nodes.pb-c.h"
#include "airlock/v1/projects.pb-c.h"
#include "airlock/v1/sandboxes.pb-c.h"
#include "airlock/v1/templates.pb-c.h"
#include "airlock/v1/volumes.pb-c.h"
#include "gateway.h"
#include "grpc_arena.h"
#include "rpc_server.h"
#include "sandbox_access.h"

struct grpc_request {
    struct gateway *gw;
    struct rpc_call *call;
    char id[40];                 /* req_…: logs, scheduler calls */
    char key_id[64];
    char project_id[64];
    bool admin;                  /* the key is the admin's */
    struct gw_caller caller;     /* the three above */
    ProtobufCMessage *msg;       /* the request; NULL for a client stream */
    grpc_status_code status;     /* how the call ended, for the log line */
};

/* Ends the call OK, after sending msg when it is not NULL. */
void grpc_reply(struct grpc_request *r, const ProtobufCMessage *msg);
/* Ends the call with an error status; the message names what is wrong. */
void grpc_fail(struct grpc_request *r, grpc_status_code st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Ends the call with e: the public gRPC API's one mapping of a class to a
 * status (airlock_error_status). */
void grpc_fail_error(struct grpc_request *r, const struct airlock_error *e);
/* Ends the call OK with msg, built in arena a (RESOURCE_EXHAUSTED when
 * an allocation failed or msg is NULL), then frees a and the upstream
 * answer it was built from (may be NULL). */
void grpc_reply_built(struct grpc_request *r, struct grpc_arena *a, const ProtobufCMessage *msg,
                      ProtobufCMessage *upstream);
/* One message of a response stream; -1 when the client went away. */
int grpc_send(struct grpc_request *r, const ProtobufCMessage *msg);

/* rpc_unary on ch (the scheduler or a vmhost): true with *resp (free it),
 * false after failing the call with the upstream status. */
bool grpc_unary(struct grpc_request *r, struct rpc_channel *ch, const char *method,
                const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                int timeout_ms, ProtobufCMessage **resp);
/* The caller's sandbox id, running, with its vmhost channel; false after
 * failing the call (INVALID_ARGUMENT for a malformed id, NOT_FOUND for an
 * unknown or foreign one, FAILED_PRECONDITION naming the state and what). */
bool grpc_open_sandbox(struct grpc_request *r, const char *id, const char *what,
                       Airlock__Scheduler__V1__Sandbox **sb, struct rpc_channel **ch);
/* The unary vmhost call `method` for the caller's running sandbox id
 * (req names it already): true with *resp (free it), false after failing
 * the call. */
bool grpc_vmhost_unary(struct grpc_request *r, const char *id, const char *what, const char *method,
                       const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                       ProtobufCMessage **resp);
/* The same for a call answered by Empty, and ends the call. */
void grpc_vmhost_call_empty(struct grpc_request *r, const char *id, const char *what,
                            const char *method, const ProtobufCMessage *req);
/* Whether id is well-formed; false after failing the call. */
bool grpc_check_id(struct grpc_request *r, const char *id);

void grpc_create_sandbox(struct grpc_request *r);
void grpc_get_sandbox(struct grpc_request *r);
void grpc_list_sandboxes(struct grpc_request *r);
void grpc_delete_sandbox(struct grpc_request *r);
void grpc_pause_sandbox(struct grpc_request *r);
void grpc_resume_sandbox(struct grpc_request *r);
void grpc_suspend_sandbox(struct grpc_request *r);
void grpc_set_network_policy(struct grpc_request *r);
void grpc_exec(struct grpc_request *r);
void grpc_start_process(struct grpc_request *r);
void grpc_list_processes(struct grpc_request *r);
void grpc_list_ports(struct grpc_request *r);      /* grpc_ports.c */
void grpc_get_port_url(struct grpc_request *r);
void grpc_attach_process(struct grpc_request *r);
void grpc_write_process_stdin(struct grpc_request *r);
void grpc_signal_process(struct grpc_request *r);
void grpc_read_file(struct grpc_request *r);
void grpc_write_file(struct grpc_request *r);
void grpc_list_dir(struct grpc_request *r);
void grpc_stat_file(struct grpc_request *r);
void grpc_make_dir(struct grpc_request *r);
void grpc_remove_file(struct grpc_request *r);
void grpc_rename_file(struct grpc_request *r);
void grpc_watch_dir(struct grpc_request *r); /* grpc_watch.c */
void grpc_create_checkpoint(struct grpc_request *r);
void grpc_list_checkpoints(struct grpc_request *r);
void grpc_delete_checkpoint(struct grpc_request *r);
void grpc_restore_checkpoint(struct grpc_request *r);
void grpc_fork_sandbox(struct grpc_request *r);
void grpc_subscribe_events(struct grpc_request *r);
void grpc_get_console_log(struct grpc_request *r);
void grpc_list_connections(struct grpc_request *r);
void grpc_build_template(struct grpc_request *r);
void grpc_list_templates(struct grpc_request *r);
void grpc_get_template(struct grpc_request *r);
void grpc_delete_template(struct grpc_request *r);
void grpc_set_warm_pool(struct grpc_request *r);
void grpc_get_warm_pool(struct grpc_request *r);
void grpc_get_quotas(struct grpc_request *r);
void grpc_set_quotas(struct grpc_request *r);
void grpc_list_nodes(struct grpc_request *r);
void grpc_get_node(struct grpc_request *r);
void grpc_drain_node(struct grpc_request *r);
void grpc_undrain_node(struct grpc_request *r);
void grpc_create_volume(struct grpc_request *r); /* grpc_volumes.c */
void grpc_list_volumes(struct grpc_request *r);
void grpc_get_volume(struct grpc_request *r);
void grpc_grow_volume(struct grpc_request *r);
void grpc_delete_volume(struct grpc_request *r);
void grpc_create_volume_snapshot(struct grpc_request *r);
void grpc_list_volume_snapshots(struct grpc_request *r);
void grpc_delete_volume_snapshot(struct grpc_request *r);

#endif
