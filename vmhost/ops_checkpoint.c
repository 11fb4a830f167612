/* The checkpoint operations (ops.h; checkpoint.h): create, list, delete,
 * restore, fork. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

int op_checkpoint_create(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                         struct airlock_error *e)
{
    const Airlock__Vmhost__V1__CreateCheckpointRequest *req = (const void *)msg;
    if (req->kind != AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK &&
        req->kind != AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "kind: required (DISK or FULL)");
    struct sandbox *sb;
    if (op_lookup(vh, req->sandbox_id, &sb, e) < 0)
        return -1;
    out->checkpoints = malloc(sizeof(*out->checkpoints));
    if (!out->checkpoints) {
        sandbox_put(sb);
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    }
    enum checkpoint_kind kind =
        req->kind == AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL ? CHECKPOINT_FULL
                                                                                : CHECKPOINT_DISK;
    int rc = checkpoint_create(sb, req->name, kind, out->checkpoints, e);
    snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", sandbox_id(sb));
    sandbox_put(sb);
    if (rc == 0)
        out->n_checkpoints = 1;
    return rc;
}

int op_checkpoint_list(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                       struct airlock_error *e)
{
    const Airlock__Vmhost__V1__ListCheckpointsRequest *req = (const void *)msg;
    struct sandbox *sb;
    if (op_lookup(vh, req->sandbox_id, &sb, e) < 0)
        return -1;
    int rc = checkpoint_list(sb, &out->checkpoints, &out->n_checkpoints, e);
    snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", sandbox_id(sb));
    sandbox_put(sb);
    return rc;
}

int op_checkpoint_delete(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                         struct airlock_error *e)
{
    const Airlock__Vmhost__V1__CheckpointRequest *req = (const void *)msg;
    (void)out;
    struct sandbox *sb;
    if (op_lookup(vh, req->sandbox_id, &sb, e) < 0)
        return -1;
    int rc = checkpoint_delete(sb, req->name, e);
    sandbox_put(sb);
    return rc;
}

int op_checkpoint_restore(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                          struct airlock_error *e)
{
    const Airlock__Vmhost__V1__CheckpointRequest *req = (const void *)msg;
    struct sandbox *sb;
    if (op_lookup(vh, req->sandbox_id, &sb, e) < 0)
        return -1;
    if (checkpoint_restore(sb, req->name, e) < 0) {
        sandbox_put(sb);
        return -1;
    }
    return op_answer_sandbox(out, sb, e);
}

int op_sandbox_fork(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                    struct airlock_error *e)
{
    const Airlock__Vmhost__V1__ForkSandboxRequest *req = (const void *)msg;
    struct sandbox *sb;
    if (op_lookup(vh, req->sandbox_id, &sb, e) < 0)
        return -1;
    int rc = sandbox_fork(sb, req->checkpoint, req->count, req->policy, req->volume_ids,
                          req->n_volume_ids, &out->sandboxes, e);
    sandbox_put(sb);
    if (rc == 0)
        out->n_sandboxes = req->count;
    return rc;
}
