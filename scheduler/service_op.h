/* The scheduler's operations that one request to the sandbox's node
 * carries out (CreateCheckpoint, DeleteCheckpoint, RestoreCheckpoint,
 * ForkSandbox, SetSandboxNetwork), each declared once in service_op.c's
 * table: its method, its request, what the state machine must allow and
 * what the node is asked (protos/node.proto, NodeOp). One pipeline runs
 * them all:
 *
 *   the request's own checks → the caller's sandbox, checked → the
 *   project's quotas → the node's request → the node → what the op
 *   records, and its answer
 *
 * and logs the outcome, ends a refused call with its error and frees what
 * the run held. The operations' stages stand beside their stores' other
 * handlers (service_checkpoint.c, service_fork.c, service_network.c) and
 * call nothing here. Not here: the lifecycle ops, which the controllers
 * run too (service_sandbox_op), and the ones that ask no node. */
#ifndef AIRLOCK_SCHEDULER_SERVICE_OP_H
#define AIRLOCK_SCHEDULER_SERVICE_OP_H

#include <stdbool.h>

#include "airlock_error.h"
#include "node.pb-c.h"
#include "node_op.h"
#include "rpc_server.h"
#include "fork_volumes.h"
#include "sandbox_store.h"
#include "scheduler.h"

/* One run of an operation, from its request to its answer. The pipeline
 * owns all of it and frees it once the call is answered. */
struct op_run {
    struct scheduler *s;
    struct rpc_call *call;
    const ProtobufCMessage *req;        /* of the op's request type */
    /* The fields every sandbox request of scheduler.proto begins with
     * (numbers 1, 2 and 4; the id is named id or sandbox_id). */
    const char *request_id, *project_id, *sandbox_id;
    struct transition_note note;        /* the actor, the op's name, request_id */
    PGresult *row;                      /* the sandbox, once looked up */
    struct sandbox_plan plan;           /* what the state machine planned from `from` */
    enum sandbox_state from;
    Airlock__Node__V1__NodeReply *reply; /* the node's answer, once it gave one */
    /* What an operation's stage hands on to a later one. */
    char *policy_text;                  /* SetSandboxNetwork: the policy as its row holds it */
    struct sandbox_msg parent;          /* ForkSandbox: the sandbox as stored (its policy) */
    struct fork_volumes fork_volumes;   /* ForkSandbox: the clones of its volumes */
    struct airlock_error err;           /* why, when a stage fails */
};

/* The node's request: the pipeline makes it an empty message of the op's
 * node_request type, an operation's node_request stage fills the member
 * of that type. */
union op_node_request {
    ProtobufCMessage base; /* each member's first, so &u points at its base too */
    Airlock__Vmhost__V1__CreateCheckpointRequest checkpoint;
    Airlock__Vmhost__V1__CheckpointRequest named_checkpoint;
    Airlock__Vmhost__V1__ForkSandboxRequest fork;
    Airlock__Vmhost__V1__SetSandboxPolicyRequest policy;
};

struct service_op {
    const char *method;                       /* "CreateCheckpoint" (scheduler.proto) */
    const char *name;                         /* in the log and the transitions' notes */
    const ProtobufCMessageDescriptor *request;
    enum sandbox_op plan;                     /* what the state machine must allow */
    node_op node;                             /* what the node is asked */
    const ProtobufCMessageDescriptor *node_request_type; /* and with what (vmhost.proto) */
    /* The request's own checks, before anything is looked up: false with
     * r->err naming the field (invalid). */
    bool (*valid)(struct op_run *r);
    /* Each stage below returns 0, or -1 with r->err set. */
    /* The sandbox into r->row; NULL: service_sandbox_for_op with plan. */
    int (*lookup)(struct op_run *r);
    /* Asks the project's quotas for what done will record, before the
     * node works for it (store_quota_admits; done's record is admitted
     * again, atomically); NULL: the op takes no quota. */
    int (*admit)(struct op_run *r);
    /* Fills the node's request (its strings point into r). */
    int (*node_request)(struct op_run *r, union op_node_request *u);
    /* What a refusal of the node (r->err) leaves to record; NULL:
     * nothing. The call ends with r->err either way. */
    void (*refused)(struct op_run *r);
    /* Once the node has done it: records it and answers the call. */
    int (*done)(struct op_run *r);
    /* A lost sandbox (its node silent: the node stages cannot run): the
     * whole op elsewhere, answering the call; NULL when the state machine
     * refuses the op on a lost sandbox anyway. */
    int (*lost)(struct op_run *r);
};

extern const struct service_op service_ops[];
extern const size_t service_ops_count;

/* The gRPC handler of every operation of the table, found by the call's
 * method. */
void service_op(struct rpc_call *call, void *ctx);

/* Whether each row agrees with the protos: its method is a Scheduler
 * method taking its request, the request begins as the pipeline reads it,
 * and its node request fits union op_node_request. False with err naming
 * the first that does not (after a change of scheduler.proto or of the
 * table). */
bool service_ops_check(char *err, size_t errlen);

/* The stages (service_checkpoint.c, service_fork.c, service_network.c). */
bool checkpoint_create_valid(struct op_run *r);
int checkpoint_create_admit(struct op_run *r);
int checkpoint_create_request(struct op_run *r, union op_node_request *u);
int checkpoint_create_done(struct op_run *r);
bool checkpoint_named_valid(struct op_run *r);
int checkpoint_delete_lookup(struct op_run *r);
int checkpoint_named_request(struct op_run *r, union op_node_request *u);
void checkpoint_delete_refused(struct op_run *r);
int checkpoint_delete_done(struct op_run *r);
bool checkpoint_restore_valid(struct op_run *r);
int checkpoint_restore_request(struct op_run *r, union op_node_request *u);
int checkpoint_restore_lost(struct op_run *r);
void checkpoint_restore_refused(struct op_run *r);
int checkpoint_restore_done(struct op_run *r);
bool fork_valid(struct op_run *r);
int fork_admit(struct op_run *r);
int fork_request(struct op_run *r, union op_node_request *u);
int fork_done(struct op_run *r);
bool network_valid(struct op_run *r);
int network_request(struct op_run *r, union op_node_request *u);
int network_done(struct op_run *r);

#endif
