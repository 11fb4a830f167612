/* Every one-request, one-answer operation of the node (ops.h), once. */
#include "ops.h"

#include <string.h>

#define OP(node, method, type, fn, answer) \
    { NODE_OP(node), method, &type##__descriptor, fn, OP_ANSWER_##answer }
#define GRPC_ONLY UNSPECIFIED /* expanded before NODE_OP pastes it */

const struct vmhost_op vmhost_ops[] = {
    /* The API's create makes an id when none is given and answers
     * ALREADY_EXISTS for one in use; the scheduler's names every sandbox
     * and, retried, answers the sandbox its first attempt made. */
    OP(GRPC_ONLY, "CreateSandbox", airlock__vmhost__v1__create_sandbox_request,
       op_sandbox_create, SANDBOX),
    OP(CREATE, NULL, airlock__vmhost__v1__create_sandbox_request, op_sandbox_create_named,
       SANDBOX),
    OP(GET, "GetSandbox", airlock__vmhost__v1__sandbox_ref, op_sandbox_get, SANDBOX),
    OP(LIST, "ListSandboxes", airlock__vmhost__v1__list_sandboxes_request, op_sandbox_list,
       SANDBOXES),
    OP(DELETE, "DeleteSandbox", airlock__vmhost__v1__sandbox_ref, op_sandbox_delete, EMPTY),
    OP(PAUSE, "PauseSandbox", airlock__vmhost__v1__sandbox_ref, op_sandbox_pause, SANDBOX),
    OP(RESUME, "ResumeSandbox", airlock__vmhost__v1__sandbox_ref, op_sandbox_resume, SANDBOX),
    OP(SUSPEND, "SuspendSandbox", airlock__vmhost__v1__sandbox_ref, op_sandbox_suspend, SANDBOX),
    OP(TAKE, "TakeSandbox", airlock__vmhost__v1__sandbox_ref, op_sandbox_take, SANDBOX),
    OP(MIGRATE_BEGIN, "MigrateBegin", airlock__vmhost__v1__sandbox_ref, op_migrate_begin,
       MIGRATION),
    OP(MIGRATE_PREPARE, "MigratePrepare", airlock__vmhost__v1__migration, op_migrate_prepare,
       MIGRATION),
    OP(MIGRATE_SEND, "MigrateSend", airlock__vmhost__v1__migration, op_migrate_send, MIGRATION),
    OP(MIGRATE_FINISH, "MigrateFinish", airlock__vmhost__v1__sandbox_ref, op_migrate_finish,
       SANDBOX),
    OP(MIGRATE_ABORT, "MigrateAbort", airlock__vmhost__v1__sandbox_ref, op_migrate_abort, EMPTY),
    OP(SET_POLICY, "SetSandboxPolicy", airlock__vmhost__v1__set_sandbox_policy_request,
       op_sandbox_set_policy, SANDBOX),
    OP(CHECKPOINT, "CreateCheckpoint", airlock__vmhost__v1__create_checkpoint_request,
       op_checkpoint_create, CHECKPOINT),
    OP(GRPC_ONLY, "ListCheckpoints", airlock__vmhost__v1__list_checkpoints_request,
       op_checkpoint_list, CHECKPOINTS),
    OP(CHECKPOINT_DELETE, "DeleteCheckpoint", airlock__vmhost__v1__checkpoint_request,
       op_checkpoint_delete, EMPTY),
    OP(RESTORE, "RestoreCheckpoint", airlock__vmhost__v1__checkpoint_request,
       op_checkpoint_restore, SANDBOX),
    OP(FORK, "ForkSandbox", airlock__vmhost__v1__fork_sandbox_request, op_sandbox_fork, FORKS),
    OP(SET_POOL, NULL, airlock__node__v1__warm_pool, op_pool_set, EMPTY),
    OP(TEMPLATE_DELETE, "DeleteTemplate", airlock__vmhost__v1__template_ref, op_template_delete,
       EMPTY),
    OP(VOLUME_GET, "GetVolume", airlock__vmhost__v1__volume_ref, op_volume_get, VOLUME),
    OP(VOLUME_SNAPSHOT, "SnapshotVolume", airlock__vmhost__v1__volume_ref, op_volume_snapshot,
       VOLUME),
    OP(VOLUME_CLONE, "CloneVolume", airlock__vmhost__v1__volume_ref, op_volume_clone, VOLUME),
    OP(VOLUME_GROW, "GrowVolume", airlock__vmhost__v1__volume_ref, op_volume_grow, VOLUME),
    OP(VOLUME_DELETE, "DeleteVolume", airlock__vmhost__v1__volume_ref, op_volume_delete, EMPTY),
    OP(VOLUME_SNAPSHOT_DELETE, "DeleteVolumeSnapshot", airlock__vmhost__v1__volume_ref,
       op_volume_snapshot_delete, EMPTY),
};

const size_t vmhost_ops_count = sizeof(vmhost_ops) / sizeof(*vmhost_ops);

const struct vmhost_op *vmhost_op_for_node(node_op node)
{
    if (node == AIRLOCK__NODE__V1__NODE_OP__NODE_OP_UNSPECIFIED)
        return NULL;
    for (size_t i = 0; i < vmhost_ops_count; i++)
        if (vmhost_ops[i].node == node)
            return &vmhost_ops[i];
    return NULL;
}

const struct vmhost_op *vmhost_op_for_grpc(const char *method)
{
    for (size_t i = 0; i < vmhost_ops_count; i++)
        if (vmhost_ops[i].grpc_method && strcmp(vmhost_ops[i].grpc_method, method) == 0)
            return &vmhost_ops[i];
    return NULL;
}
