/* The node's checkpoint ops for the scheduler (protos/node.proto): the
 * same checkpoint.h functions the gRPC API serves (service_checkpoint.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "log.h"
#include "nats_agent_ops.h"
#include "service.h"

/* The sandbox named id with a reference, or NULL with err naming it. */
static struct sandbox *lookup(struct vmhost *vh, const char *id, char *err, size_t errlen)
{
    struct sandbox *sb = *id ? sandbox_get(vh, id) : NULL;
    if (!sb)
        snprintf(err, errlen, "sandbox %.80s not found", id);
    return sb;
}

void node_op_checkpoint(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    Airlock__Vmhost__V1__CreateCheckpointRequest *req =
        UNPACK(airlock__vmhost__v1__create_checkpoint_request, msg);
    char err[1024] = "checkpoint: a CreateCheckpointRequest";
    struct sandbox *sb = NULL;
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    if (!req)
        goto out;
    st = GRPC_STATUS_NOT_FOUND;
    sb = lookup(vh, req->sandbox_id, err, sizeof(err));
    if (!sb)
        goto out;
    enum checkpoint_kind kind =
        req->kind == AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL ? CHECKPOINT_FULL
                                                                                : CHECKPOINT_DISK;
    struct checkpoint_info ci;
    enum sandbox_error rc = checkpoint_create(sb, req->name, kind, &ci, err, sizeof(err));
    st = service_status_from_sandbox_error(rc);
    if (rc != SANDBOX_OK)
        goto out;
    Airlock__Vmhost__V1__Checkpoint c = AIRLOCK__VMHOST__V1__CHECKPOINT__INIT;
    c.sandbox_id = sb->id;
    c.name = ci.name;
    c.kind = kind == CHECKPOINT_FULL ? AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL
                                     : AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK;
    c.created_unix_ms = ci.created_unix_ms;
    Airlock__Node__V1__NodeReply r = AIRLOCK__NODE__V1__NODE_REPLY__INIT;
    r.message = "";
    r.checkpoint = &c;
    node_reply_send(nc, msg, &r);
out:
    if (st != GRPC_STATUS_OK)
        node_reply_status(nc, msg, st, err);
    sandbox_put(sb);
    if (req)
        airlock__vmhost__v1__create_checkpoint_request__free_unpacked(req, NULL);
}

/* checkpoint_delete, and restore (which answers the sandbox). */
static void op_by_checkpoint(struct vmhost *vh, natsConnection *nc, natsMsg *msg, bool restore)
{
    Airlock__Vmhost__V1__CheckpointRequest *req = UNPACK(airlock__vmhost__v1__checkpoint_request, msg);
    char err[4096] = "a CheckpointRequest";
    struct sandbox *sb = NULL;
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    if (!req)
        goto out;
    st = GRPC_STATUS_NOT_FOUND;
    sb = lookup(vh, req->sandbox_id, err, sizeof(err));
    if (!sb)
        goto out;
    enum sandbox_error rc = restore ? checkpoint_restore(sb, req->name, err, sizeof(err))
                                    : checkpoint_delete(sb, req->name, err, sizeof(err));
    st = service_status_from_sandbox_error(rc);
    if (rc != SANDBOX_OK || !restore)
        goto out;
    struct sandbox_snapshot view;
    sandbox_snapshot_take(sb, &view);
    Airlock__Node__V1__NodeReply r = AIRLOCK__NODE__V1__NODE_REPLY__INIT;
    r.message = "";
    r.sandbox = &view.msg;
    node_reply_send(nc, msg, &r);
out:
    if (st != GRPC_STATUS_OK || !restore)
        node_reply_status(nc, msg, st, err);
    sandbox_put(sb);
    if (req)
        airlock__vmhost__v1__checkpoint_request__free_unpacked(req, NULL);
}

void node_op_fork(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    Airlock__Vmhost__V1__ForkSandboxRequest *req = UNPACK(airlock__vmhost__v1__fork_sandbox_request, msg);
    char err[4096] = "fork: a ForkSandboxRequest";
    struct sandbox *sb = NULL;
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    if (!req)
        goto out;
    st = GRPC_STATUS_NOT_FOUND;
    sb = lookup(vh, req->sandbox_id, err, sizeof(err));
    if (!sb)
        goto out;
    struct sandbox **forks = NULL;
    enum sandbox_error rc =
        sandbox_fork(sb, req->checkpoint, req->count, req->policy, &forks, err, sizeof(err));
    st = service_status_from_sandbox_error(rc);
    if (rc == SANDBOX_OK) {
        node_reply_sandboxes(nc, msg, forks, req->count, true);
        free(forks);
    }
out:
    if (st != GRPC_STATUS_OK)
        node_reply_status(nc, msg, st, err);
    sandbox_put(sb);
    if (req)
        airlock__vmhost__v1__fork_sandbox_request__free_unpacked(req, NULL);
}

void node_op_checkpoint_delete(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    op_by_checkpoint(vh, nc, msg, false);
}

void node_op_restore(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    op_by_checkpoint(vh, nc, msg, true);
}
