/* The checkpoint operations (ops.h; checkpoint.h): create, list, delete,
 * restore, fork. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

grpc_status_code op_checkpoint_create(struct vmhost *vh, const ProtobufCMessage *msg,
                                      struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__CreateCheckpointRequest *req = (const void *)msg;
    if (req->kind != AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK &&
        req->kind != AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL) {
        snprintf(err, errlen, "kind: required (DISK or FULL)");
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    struct sandbox *sb;
    grpc_status_code st = op_lookup(vh, req->sandbox_id, &sb, err, errlen);
    if (st != GRPC_STATUS_OK)
        return st;
    out->checkpoints = malloc(sizeof(*out->checkpoints));
    if (!out->checkpoints) {
        sandbox_put(sb);
        snprintf(err, errlen, "out of memory");
        return GRPC_STATUS_RESOURCE_EXHAUSTED;
    }
    enum checkpoint_kind kind =
        req->kind == AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL ? CHECKPOINT_FULL
                                                                                : CHECKPOINT_DISK;
    enum airlock_err rc = checkpoint_create(sb, req->name, kind, out->checkpoints, err, errlen);
    snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", sandbox_id(sb));
    sandbox_put(sb);
    if (rc != AIRLOCK_OK)
        return airlock_err_status(rc);
    out->n_checkpoints = 1;
    return GRPC_STATUS_OK;
}

grpc_status_code op_checkpoint_list(struct vmhost *vh, const ProtobufCMessage *msg,
                                    struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__ListCheckpointsRequest *req = (const void *)msg;
    struct sandbox *sb;
    grpc_status_code st = op_lookup(vh, req->sandbox_id, &sb, err, errlen);
    if (st != GRPC_STATUS_OK)
        return st;
    enum airlock_err rc = checkpoint_list(sb, &out->checkpoints, &out->n_checkpoints, err,
                                            errlen);
    snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", sandbox_id(sb));
    sandbox_put(sb);
    if (rc != AIRLOCK_OK)
        return airlock_err_status(rc);
    return GRPC_STATUS_OK;
}

grpc_status_code op_checkpoint_delete(struct vmhost *vh, const ProtobufCMessage *msg,
                                      struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__CheckpointRequest *req = (const void *)msg;
    (void)out;
    struct sandbox *sb;
    grpc_status_code st = op_lookup(vh, req->sandbox_id, &sb, err, errlen);
    if (st != GRPC_STATUS_OK)
        return st;
    enum airlock_err rc = checkpoint_delete(sb, req->name, err, errlen);
    sandbox_put(sb);
    return airlock_err_status(rc);
}

grpc_status_code op_checkpoint_restore(struct vmhost *vh, const ProtobufCMessage *msg,
                                       struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__CheckpointRequest *req = (const void *)msg;
    struct sandbox *sb;
    grpc_status_code st = op_lookup(vh, req->sandbox_id, &sb, err, errlen);
    if (st != GRPC_STATUS_OK)
        return st;
    enum airlock_err rc = checkpoint_restore(sb, req->name, err, errlen);
    if (rc != AIRLOCK_OK) {
        sandbox_put(sb);
        return airlock_err_status(rc);
    }
    return op_answer_sandbox(out, sb, err, errlen);
}

grpc_status_code op_sandbox_fork(struct vmhost *vh, const ProtobufCMessage *msg,
                                 struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__ForkSandboxRequest *req = (const void *)msg;
    struct sandbox *sb;
    grpc_status_code st = op_lookup(vh, req->sandbox_id, &sb, err, errlen);
    if (st != GRPC_STATUS_OK)
        return st;
    enum airlock_err rc =
        sandbox_fork(sb, req->checkpoint, req->count, req->policy, &out->sandboxes, err, errlen);
    sandbox_put(sb);
    if (rc != AIRLOCK_OK)
        return airlock_err_status(rc);
    out->n_sandboxes = req->count;
    return GRPC_STATUS_OK;
}
