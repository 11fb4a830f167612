/* The gRPC face of ops.h: one handler serves every operation of the
 * table that has a VmHost method, found by the method's name. */
#include <string.h>

#include "vmhost_service.h"

static void send_answer(struct rpc_call *call, enum op_answer_kind kind, const struct op_answer *a)
{
    struct op_encoded e;
    if (op_answer_encode(a, &e) < 0) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    switch (kind) {
    case OP_ANSWER_EMPTY: {
        Airlock__Vmhost__V1__Empty m = AIRLOCK__VMHOST__V1__EMPTY__INIT;
        rpc_call_send(call, &m.base);
        break;
    }
    case OP_ANSWER_SANDBOX:
        rpc_call_send(call, &e.sandboxes[0]->base);
        break;
    case OP_ANSWER_MIGRATION:
        rpc_call_send(call, &e.migration.base);
        break;
    case OP_ANSWER_SANDBOXES: {
        Airlock__Vmhost__V1__ListSandboxesResponse m =
            AIRLOCK__VMHOST__V1__LIST_SANDBOXES_RESPONSE__INIT;
        m.n_sandboxes = e.n_sandboxes;
        m.sandboxes = e.sandboxes;
        rpc_call_send(call, &m.base);
        break;
    }
    case OP_ANSWER_FORKS: {
        Airlock__Vmhost__V1__ForkSandboxResponse m = AIRLOCK__VMHOST__V1__FORK_SANDBOX_RESPONSE__INIT;
        m.n_sandboxes = e.n_sandboxes;
        m.sandboxes = e.sandboxes;
        rpc_call_send(call, &m.base);
        break;
    }
    case OP_ANSWER_CHECKPOINT:
        rpc_call_send(call, &e.checkpoints[0]->base);
        break;
    case OP_ANSWER_VOLUME:
        rpc_call_send(call, &e.volume.base);
        break;
    case OP_ANSWER_CHECKPOINTS: {
        Airlock__Vmhost__V1__ListCheckpointsResponse m =
            AIRLOCK__VMHOST__V1__LIST_CHECKPOINTS_RESPONSE__INIT;
        m.n_checkpoints = e.n_checkpoints;
        m.checkpoints = e.checkpoints;
        rpc_call_send(call, &m.base);
        break;
    }
    }
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    op_encoded_free(&e);
}

void service_op(struct rpc_call *call, void *ctx)
{
    const char *method = strrchr(rpc_call_method(call), '/');
    const struct vmhost_op *op = vmhost_op_for_grpc(method ? method + 1 : "");
    if (!op) { /* vmhost_service.c registers only the table's methods here */
        rpc_call_finish(call, GRPC_STATUS_UNIMPLEMENTED, "no such operation");
        return;
    }
    ProtobufCMessage *req = rpc_call_recv_request(call, op->request);
    if (!req)
        return;
    struct op_answer a = { 0 };
    struct airlock_error e = { 0 };
    int rc = op->run(ctx, req, &a, &e);
    protobuf_c_message_free_unpacked(req, NULL);
    if (rc == 0)
        send_answer(call, op->answer, &a);
    else
        rpc_call_finish_error(call, &e);
    op_answer_release(&a);
}
