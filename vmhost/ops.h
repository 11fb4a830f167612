/* The node's operations on sandboxes, checkpoints, warm pools and
 * templates that take one request and give one answer, each declared once
 * in ops.c's table with what it is called on both APIs: the NATS subject
 * the scheduler sends it on (protos/node.proto, NodeOp) and the VmHost
 * gRPC method (protos/vmhost.proto). The gRPC service (service_op.c) and
 * the NATS agent (nats_agent.c) only decode the request, run the
 * operation and encode its answer their way; neither implements one.
 * Streams (exec, files, template builds) stay with their transport. */
#ifndef AIRLOCK_VMHOST_OPS_H
#define AIRLOCK_VMHOST_OPS_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

#include "airlock_error.h"
#include "checkpoint.h"
#include "migration_channel.h"
#include "node_op.h"
#include "sandbox.h"
#include "vmhost.h"
#include "vmhost.pb-c.h"
#include "volume_store.h"

enum op_answer_kind {
    OP_ANSWER_EMPTY,
    OP_ANSWER_SANDBOX,       /* sandboxes[0] */
    OP_ANSWER_SANDBOXES,     /* the node's, a listing */
    OP_ANSWER_FORKS,         /* made by a fork */
    OP_ANSWER_CHECKPOINT,    /* checkpoints[0] of sandbox_id */
    OP_ANSWER_CHECKPOINTS,   /* of sandbox_id, a listing */
    OP_ANSWER_MIGRATION,     /* migration: a live migration's step */
    OP_ANSWER_VOLUME,        /* volume */
};

/* What an operation answered, before an API encodes it as its table
 * entry's answer kind says. */
struct op_answer {
    struct sandbox **sandboxes;          /* references */
    size_t n_sandboxes;
    char sandbox_id[65];
    struct checkpoint_info *checkpoints;
    size_t n_checkpoints;
    struct {
        char store_object[SANDBOX_STORE_OBJECT_SIZE];
        char address[MIGRATION_ADDR_SIZE];
        char token[MIGRATION_TOKEN_SIZE];
        int64_t stopped_ms;
    } migration;
    struct volume_info volume;           /* has_volume */
    bool has_volume;
};

/* Drops the answer's references and frees what it holds. */
void op_answer_release(struct op_answer *a);

/* *out answers sb, taking its reference (dropped when out of memory):
 * 0, or -1 with CAPACITY. */
int op_answer_sandbox(struct op_answer *out, struct sandbox *sb, struct airlock_error *e);

/* Runs the operation on req (a message of the op's request type): 0 with
 * *out filled, or -1 with e saying what failed (each API turns it into its
 * status and message). */
typedef int (*op_fn)(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                     struct airlock_error *e);

struct vmhost_op {
    node_op node;                        /* NODE_OP_UNSPECIFIED: not on NATS */
    const char *grpc_method;             /* "CreateSandbox"; NULL: not on gRPC */
    const ProtobufCMessageDescriptor *request;
    op_fn run;
    enum op_answer_kind answer;          /* what an OK answer carries */
};

/* The sandbox named id with a reference: 0, or -1 with INVALID when id
 * is empty, NOT_FOUND naming it when there is none. */
int op_lookup(struct vmhost *vh, const char *id, struct sandbox **out, struct airlock_error *e);

extern const struct vmhost_op vmhost_ops[];
extern const size_t vmhost_ops_count;

/* The operation served on NATS as node, or NULL. */
const struct vmhost_op *vmhost_op_for_node(node_op node);
/* The operation served as VmHost method ("CreateSandbox"), or NULL. */
const struct vmhost_op *vmhost_op_for_grpc(const char *method);

/* The operations (ops_sandbox.c, ops_checkpoint.c, ops_node.c). */
int op_sandbox_create(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                      struct airlock_error *e);
int op_sandbox_create_named(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                            struct airlock_error *e);
int op_sandbox_get(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                   struct airlock_error *e);
int op_sandbox_list(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                    struct airlock_error *e);
int op_sandbox_delete(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                      struct airlock_error *e);
int op_sandbox_pause(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                     struct airlock_error *e);
int op_sandbox_resume(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                      struct airlock_error *e);
int op_sandbox_suspend(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                       struct airlock_error *e);
int op_sandbox_take(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                    struct airlock_error *e);
int op_sandbox_set_policy(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                          struct airlock_error *e);
int op_checkpoint_create(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                         struct airlock_error *e);
int op_checkpoint_list(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                       struct airlock_error *e);
int op_checkpoint_delete(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                         struct airlock_error *e);
int op_checkpoint_restore(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                          struct airlock_error *e);
int op_sandbox_fork(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                    struct airlock_error *e);
int op_migrate_begin(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                     struct airlock_error *e);
int op_migrate_prepare(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                       struct airlock_error *e);
int op_migrate_send(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                    struct airlock_error *e);
int op_migrate_finish(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                      struct airlock_error *e);
int op_migrate_abort(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                     struct airlock_error *e);
int op_pool_set(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                struct airlock_error *e);
int op_template_delete(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                       struct airlock_error *e);
int op_volume_get(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                  struct airlock_error *e);
int op_volume_snapshot(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                       struct airlock_error *e);
int op_volume_clone(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                    struct airlock_error *e);
int op_volume_grow(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                   struct airlock_error *e);
int op_volume_delete(struct vmhost *vh, const ProtobufCMessage *req, struct op_answer *out,
                     struct airlock_error *e);
int op_volume_snapshot_delete(struct vmhost *vh, const ProtobufCMessage *req,
                              struct op_answer *out, struct airlock_error *e);

/* A Sandbox message over a view of sb (sandbox.h), so it can be sent after
 * the sandbox's locks are gone: vmhost's states mapped to the API's here
 * only (ops_answer.c). */
struct sandbox_snapshot {
    Airlock__Vmhost__V1__Sandbox msg;
    struct sandbox_view view;
    Airlock__Vmhost__V1__VolumeAttachment volume_msgs[VM_VOLUME_SLOTS];
    Airlock__Vmhost__V1__VolumeAttachment *volumes[VM_VOLUME_SLOTS];
};

void sandbox_snapshot_take(struct sandbox *sb, struct sandbox_snapshot *out);

/* An answer as vmhost.proto messages, for either API to put in its own
 * envelope: views of its sandboxes and its checkpoints, valid until
 * op_encoded_free(). */
struct op_encoded {
    struct sandbox_snapshot *snapshots;
    Airlock__Vmhost__V1__Sandbox **sandboxes;
    size_t n_sandboxes;
    Airlock__Vmhost__V1__Checkpoint *checkpoint_msgs;
    Airlock__Vmhost__V1__Checkpoint **checkpoints;
    size_t n_checkpoints;
    Airlock__Vmhost__V1__Migration migration;
    Airlock__Vmhost__V1__Volume volume;
    char **volume_snapshots;
};

/* 0, or -1 when out of memory (e freed). */
int op_answer_encode(const struct op_answer *a, struct op_encoded *e);
void op_encoded_free(struct op_encoded *e);

#endif
