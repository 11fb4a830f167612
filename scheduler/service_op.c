/* Every operation that one request to the sandbox's node carries out,
 * once, and the one pipeline that runs them (service_op.h). */
#include "service_op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rpc_client.h"
#include "rpc_err.h"
#include "service_node_call.h"

/* request: scheduler.proto's message; node_request: vmhost.proto's. */
#define OP(method_, name_, request_, node_, node_request_, ...)                              \
    { .method = method_, .name = name_,                                                     \
      .request = &airlock__scheduler__v1__##request_##__descriptor, .node = NODE_OP(node_), \
      .node_request_type = &airlock__vmhost__v1__##node_request_##__descriptor, __VA_ARGS__ }

const struct service_op service_ops[] = {
    OP("CreateCheckpoint", "checkpoint", checkpoint_request, CHECKPOINT,
       create_checkpoint_request, .plan = SANDBOX_OP_CHECKPOINT,
       .valid = checkpoint_create_valid, .admit = checkpoint_create_admit,
       .node_request = checkpoint_create_request, .done = checkpoint_create_done),
    /* Any state, the sandbox only has to exist: a checkpoint outlives a
     * pause or a suspend. */
    OP("DeleteCheckpoint", "checkpoint_delete", checkpoint_request, CHECKPOINT_DELETE,
       checkpoint_request, .lookup = checkpoint_delete_lookup, .valid = checkpoint_named_valid,
       .node_request = checkpoint_named_request, .refused = checkpoint_delete_refused,
       .done = checkpoint_delete_done),
    OP("RestoreCheckpoint", "restore", checkpoint_request, RESTORE, checkpoint_request,
       .plan = SANDBOX_OP_RESTORE, .valid = checkpoint_restore_valid,
       .node_request = checkpoint_restore_request, .refused = checkpoint_restore_refused,
       .done = checkpoint_restore_done, .lost = checkpoint_restore_lost),
    OP("ForkSandbox", "fork", fork_sandbox_request, FORK, fork_sandbox_request,
       .plan = SANDBOX_OP_FORK, .valid = fork_valid, .admit = fork_admit,
       .node_request = fork_request, .done = fork_done),
    /* The node first, the row after: a policy egress refuses
     * (INVALID_ARGUMENT naming the field) is never recorded. */
    OP("SetSandboxNetwork", "set_network", set_sandbox_network_request, SET_POLICY,
       set_sandbox_policy_request, .plan = SANDBOX_OP_SET_NETWORK, .valid = network_valid,
       .node_request = network_request, .done = network_done),
};

const size_t service_ops_count = sizeof(service_ops) / sizeof(*service_ops);

/* request_id = 1, project_id = 2, actor = 3, the sandbox's id = 4. */
enum { FIELD_REQUEST_ID = 1, FIELD_PROJECT_ID, FIELD_ACTOR, FIELD_SANDBOX_ID };

/* Field `number` of a desc message if it is one string, else NULL. */
static const ProtobufCFieldDescriptor *string_field(const ProtobufCMessageDescriptor *desc,
                                                    unsigned number)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(desc, number);
    return f && f->type == PROTOBUF_C_TYPE_STRING && f->label != PROTOBUF_C_LABEL_REPEATED ? f
                                                                                          : NULL;
}

/* String field `number` of msg, read through its descriptor: the requests
 * are different messages that begin alike, and none of them is cast to
 * another's type. service_ops_check made sure it is there. */
static const char *request_string(const ProtobufCMessage *msg, unsigned number)
{
    const ProtobufCFieldDescriptor *f = string_field(msg->descriptor, number);
    return f ? *(char *const *)((const char *)msg + f->offset) : "";
}

bool service_ops_check(char *err, size_t errlen)
{
    for (size_t i = 0; i < service_ops_count; i++) {
        const struct service_op *op = &service_ops[i];
        if (op->node_request_type->sizeof_message > sizeof(union op_node_request)) {
            snprintf(err, errlen, "%s: %s is no member of union op_node_request", op->method,
                     op->node_request_type->name);
            return false;
        }
        const ProtobufCMethodDescriptor *m = protobuf_c_service_descriptor_get_method_by_name(
            &airlock__scheduler__v1__scheduler__descriptor, op->method);
        if (!m || m->input != op->request) {
            snprintf(err, errlen, "%s: no Scheduler method of that name takes %s", op->method,
                     op->request->name);
            return false;
        }
        for (unsigned number = FIELD_REQUEST_ID; number <= FIELD_SANDBOX_ID; number++)
            if (!string_field(op->request, number)) {
                snprintf(err, errlen, "%s: field %u of %s is not a string", op->method, number,
                         op->request->name);
                return false;
            }
    }
    return true;
}

static const struct service_op *op_for_method(const char *method)
{
    for (size_t i = 0; i < service_ops_count; i++)
        if (strcmp(service_ops[i].method, method) == 0)
            return &service_ops[i];
    return NULL;
}

/* Validate → the sandbox → the quotas → the node → record and answer: 0
 * (done has answered), or -1 with r->err, what the call ends with. */
static int op_run_stages(const struct service_op *op, struct op_run *r)
{
    if (!op->valid(r))
        return -1;
    int rc = op->lookup ? op->lookup(r)
                        : service_sandbox_for_op(r->s, r->project_id, r->sandbox_id, op->plan,
                                                 &r->row, &r->plan, &r->from, &r->err);
    if (rc == 0 && op->lost && r->from == SANDBOX_LOST)
        return op->lost(r);
    if (rc == 0 && op->admit)
        rc = op->admit(r);
    if (rc < 0)
        return rc;
    union op_node_request u;
    protobuf_c_message_init(op->node_request_type, &u);
    rc = op->node_request(r, &u);
    if (rc < 0)
        return rc;
    rc = service_call_node(r->s, r->row, op->node, &u.base, &r->reply, &r->err);
    if (rc < 0) {
        if (op->refused)
            op->refused(r);
        return rc;
    }
    return op->done(r);
}

void service_op(struct rpc_call *call, void *ctx)
{
    const char *method = strrchr(rpc_call_method(call), '/');
    const struct service_op *op = op_for_method(method ? method + 1 : "");
    if (!op) { /* scheduler_service.c registers only the table's methods here */
        rpc_call_finish(call, GRPC_STATUS_UNIMPLEMENTED, "no such operation");
        return;
    }
    ProtobufCMessage *req = rpc_call_recv_request(call, op->request);
    if (!req)
        return;
    struct op_run r = {
        .s = ctx,
        .call = call,
        .req = req,
        .request_id = request_string(req, FIELD_REQUEST_ID),
        .project_id = request_string(req, FIELD_PROJECT_ID),
        .sandbox_id = request_string(req, FIELD_SANDBOX_ID),
    };
    r.note = (struct transition_note){ service_actor(request_string(req, FIELD_ACTOR)), op->name,
                                       r.request_id };
    int rc = op_run_stages(op, &r);
    if (rc == 0) {
        log_info("sandbox op", "request=%s sandbox=%s op=%s", r.request_id, r.sandbox_id,
                 op->name);
    } else {
        log_info("sandbox op refused", "request=%s sandbox=%s op=%s status=%s error=\"%s\"",
                 r.request_id, r.sandbox_id, op->name, airlock_error_status_name(&r.err),
                 r.err.message);
        rpc_call_finish_error(call, &r.err);
    }
    if (r.reply)
        protobuf_c_message_free_unpacked(&r.reply->base, NULL);
    store_sandbox_msg_free(&r.parent);
    fork_volumes_free(&r.fork_volumes);
    free(r.policy_text);
    PQclear(r.row);
    protobuf_c_message_free_unpacked(req, NULL);
}
