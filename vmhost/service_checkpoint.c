/* CreateCheckpoint, ListCheckpoints, DeleteCheckpoint, RestoreCheckpoint,
 * ForkSandbox (checkpoint.h). */
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "service.h"

typedef Airlock__Vmhost__V1__Checkpoint checkpoint_msg;

static void checkpoint_to_msg(const char *sandbox_id, struct checkpoint_info *ci,
                              checkpoint_msg *m)
{
    airlock__vmhost__v1__checkpoint__init(m);
    m->sandbox_id = (char *)sandbox_id;
    m->name = ci->name;
    m->kind = ci->kind == CHECKPOINT_FULL ? AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL
                                          : AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK;
    m->created_unix_ms = ci->created_unix_ms;
}

void service_checkpoint_create(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__CreateCheckpointRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__create_checkpoint_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = NULL;
    if (req->kind != AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK &&
        req->kind != AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL) {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "kind: required (DISK or FULL)");
        goto out;
    }
    sb = service_lookup_sandbox(call, ctx, req->sandbox_id);
    if (!sb)
        goto out;
    struct checkpoint_info ci;
    char err[1024];
    enum checkpoint_kind kind =
        req->kind == AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL ? CHECKPOINT_FULL
                                                                                : CHECKPOINT_DISK;
    enum sandbox_error rc = checkpoint_create(sb, req->name, kind, &ci, err, sizeof(err));
    if (rc != SANDBOX_OK) {
        rpc_call_finish(call, service_status_from_sandbox_error(rc), err);
        goto out;
    }
    checkpoint_msg m;
    checkpoint_to_msg(sb->id, &ci, &m);
    rpc_call_send(call, &m.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    sandbox_put(sb);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_checkpoint_list(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__ListCheckpointsRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__list_checkpoints_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = service_lookup_sandbox(call, ctx, req->sandbox_id);
    struct checkpoint_info *all = NULL;
    checkpoint_msg *msgs = NULL, **ptrs = NULL;
    size_t n = 0;
    char err[1024];
    if (!sb)
        goto out;
    enum sandbox_error rc = checkpoint_list(sb, &all, &n, err, sizeof(err));
    if (rc != SANDBOX_OK) {
        rpc_call_finish(call, service_status_from_sandbox_error(rc), err);
        goto out;
    }
    msgs = calloc(n ? n : 1, sizeof(*msgs));
    ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    if (!msgs || !ptrs) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        checkpoint_to_msg(sb->id, &all[i], &msgs[i]);
        ptrs[i] = &msgs[i];
    }
    Airlock__Vmhost__V1__ListCheckpointsResponse resp =
        AIRLOCK__VMHOST__V1__LIST_CHECKPOINTS_RESPONSE__INIT;
    resp.n_checkpoints = n;
    resp.checkpoints = ptrs;
    rpc_call_send(call, &resp.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
out:
    free(all);
    free(msgs);
    free(ptrs);
    sandbox_put(sb);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* DeleteCheckpoint (answers Empty) and RestoreCheckpoint (the Sandbox). */
static void on_checkpoint(struct rpc_call *call, struct vmhost *vh,
                          enum sandbox_error (*op)(struct sandbox *, const char *, char *, size_t),
                          bool answer_sandbox)
{
    Airlock__Vmhost__V1__CheckpointRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__checkpoint_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = service_lookup_sandbox(call, vh, req->sandbox_id);
    if (sb) {
        char err[4096];
        enum sandbox_error rc = op(sb, req->name, err, sizeof(err));
        if (rc != SANDBOX_OK) {
            rpc_call_finish(call, service_status_from_sandbox_error(rc), err);
        } else if (answer_sandbox) {
            service_finish_with_sandbox(call, sb);
        } else {
            Airlock__Vmhost__V1__Empty empty = AIRLOCK__VMHOST__V1__EMPTY__INIT;
            rpc_call_send(call, &empty.base);
            rpc_call_finish(call, GRPC_STATUS_OK, NULL);
        }
        sandbox_put(sb);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_checkpoint_delete(struct rpc_call *call, void *ctx)
{
    on_checkpoint(call, ctx, checkpoint_delete, false);
}

void service_checkpoint_restore(struct rpc_call *call, void *ctx)
{
    on_checkpoint(call, ctx, checkpoint_restore, true);
}

/* Answers with the forks' views; drops their references. */
static void finish_with_forks(struct rpc_call *call, struct sandbox **forks, unsigned n)
{
    struct sandbox_snapshot *snaps = calloc(n, sizeof(*snaps));
    Airlock__Vmhost__V1__Sandbox **ptrs = calloc(n, sizeof(*ptrs));
    if (!snaps || !ptrs) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        for (unsigned i = 0; i < n; i++) {
            sandbox_snapshot_take(forks[i], &snaps[i]);
            ptrs[i] = &snaps[i].msg;
        }
        Airlock__Vmhost__V1__ForkSandboxResponse resp =
            AIRLOCK__VMHOST__V1__FORK_SANDBOX_RESPONSE__INIT;
        resp.n_sandboxes = n;
        resp.sandboxes = ptrs;
        rpc_call_send(call, &resp.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    }
    for (unsigned i = 0; i < n; i++)
        sandbox_put(forks[i]);
    free(snaps);
    free(ptrs);
}

void service_sandbox_fork(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__ForkSandboxRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__fork_sandbox_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = service_lookup_sandbox(call, ctx, req->sandbox_id);
    if (sb) {
        struct sandbox **forks;
        char err[4096];
        enum sandbox_error rc =
            sandbox_fork(sb, req->checkpoint, req->count, req->policy, &forks, err, sizeof(err));
        if (rc == SANDBOX_OK) {
            finish_with_forks(call, forks, req->count);
            free(forks);
        } else {
            rpc_call_finish(call, service_status_from_sandbox_error(rc), err);
        }
        sandbox_put(sb);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
