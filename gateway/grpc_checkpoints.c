/* Sandboxes.CreateCheckpoint, ListCheckpoints, DeleteCheckpoint,
 * RestoreCheckpoint and ForkSandbox: control calls on the scheduler, which
 * has the node do them. */
#include <stdlib.h>

#include "grpc_call.h"
#include "grpc_convert.h"

/* One scheduler call for the sandbox id; true with *resp (free it), false
 * after failing the call. */
static bool scheduler_call(struct grpc_request *r, const char *id, const char *method,
                           const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                           int timeout_ms, ProtobufCMessage **resp)
{
    *resp = NULL;
    return grpc_check_id(r, id) &&
           grpc_unary(r, r->gw->scheduler, method, req, resp_desc, timeout_ms, resp);
}

void grpc_create_checkpoint(struct grpc_request *r)
{
    const Airlock__V1__CreateCheckpointRequest *in = (const void *)r->msg;
    Airlock__Scheduler__V1__CheckpointRequest req = gw_checkpoint_request(&r->caller, in->id, in->name);
    req.kind = *in->kind ? in->kind : "disk";
    Airlock__Scheduler__V1__Checkpoint *c;
    if (!scheduler_call(r, in->id, SCHEDULER_METHOD("CreateCheckpoint"), &req.base,
                        &airlock__scheduler__v1__checkpoint__descriptor, GW_CREATE_TIMEOUT_MS,
                        (ProtobufCMessage **)&c))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__Checkpoint *msg = grpc_checkpoint_msg(&a, c);
    grpc_reply_built(r, &a, msg ? &msg->base : NULL, &c->base);
}

void grpc_list_checkpoints(struct grpc_request *r)
{
    const Airlock__V1__SandboxRequest *in = (const void *)r->msg;
    if (!grpc_check_id(r, in->id))
        return;
    Airlock__Scheduler__V1__ListCheckpointsResponse *resp = NULL;
    struct airlock_error e;
    if (gw_sandbox_ref_call(r->gw, &r->caller, SCHEDULER_METHOD("ListCheckpoints"), in->id,
                            &airlock__scheduler__v1__list_checkpoints_response__descriptor,
                            (ProtobufCMessage **)&resp, &e) < 0) {
        grpc_fail_error(r, &e);
        return;
    }
    struct grpc_arena a = { 0 };
    Airlock__V1__ListCheckpointsResponse out = AIRLOCK__V1__LIST_CHECKPOINTS_RESPONSE__INIT;
    out.checkpoints = grpc_checkpoint_list(&a, resp->checkpoints, resp->n_checkpoints);
    out.n_checkpoints = resp->n_checkpoints;
    grpc_reply_built(r, &a, &out.base, &resp->base);
}

void grpc_delete_checkpoint(struct grpc_request *r)
{
    const Airlock__V1__DeleteCheckpointRequest *in = (const void *)r->msg;
    Airlock__Scheduler__V1__CheckpointRequest req = gw_checkpoint_request(&r->caller, in->id, in->name);
    ProtobufCMessage *c;
    if (!scheduler_call(r, in->id, SCHEDULER_METHOD("DeleteCheckpoint"), &req.base,
                        &airlock__scheduler__v1__checkpoint__descriptor, GW_SCHEDULER_TIMEOUT_MS, &c))
        return;
    protobuf_c_message_free_unpacked(c, NULL);
    Airlock__V1__Empty nothing = AIRLOCK__V1__EMPTY__INIT;
    grpc_reply(r, &nothing.base);
}

void grpc_restore_checkpoint(struct grpc_request *r)
{
    const Airlock__V1__RestoreCheckpointRequest *in = (const void *)r->msg;
    Airlock__Scheduler__V1__CheckpointRequest req =
        gw_checkpoint_request(&r->caller, in->id, in->checkpoint);
    Airlock__Scheduler__V1__Sandbox *sb;
    if (!scheduler_call(r, in->id, SCHEDULER_METHOD("RestoreCheckpoint"), &req.base,
                        &airlock__scheduler__v1__sandbox__descriptor, GW_CREATE_TIMEOUT_MS,
                        (ProtobufCMessage **)&sb))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__Sandbox *msg = grpc_sandbox_msg(&a, sb);
    grpc_reply_built(r, &a, msg ? &msg->base : NULL, &sb->base);
}

void grpc_fork_sandbox(struct grpc_request *r)
{
    const Airlock__V1__ForkSandboxRequest *in = (const void *)r->msg;
    Airlock__Scheduler__V1__ForkSandboxRequest req = AIRLOCK__SCHEDULER__V1__FORK_SANDBOX_REQUEST__INIT;
    GW_CALLER_FILL(req, &r->caller);
    req.sandbox_id = in->id;
    req.count = in->count; /* the scheduler: 0 = 1, at most 16 */
    req.checkpoint = in->checkpoint;
    Airlock__Scheduler__V1__ForkSandboxResponse *resp;
    if (!scheduler_call(r, in->id, SCHEDULER_METHOD("ForkSandbox"), &req.base,
                        &airlock__scheduler__v1__fork_sandbox_response__descriptor,
                        GW_CREATE_TIMEOUT_MS, (ProtobufCMessage **)&resp))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__ForkSandboxResponse out = AIRLOCK__V1__FORK_SANDBOX_RESPONSE__INIT;
    out.sandboxes = grpc_sandbox_list(&a, resp->sandboxes, resp->n_sandboxes);
    out.n_sandboxes = resp->n_sandboxes;
    grpc_reply_built(r, &a, &out.base, &resp->base);
}
