/* CreateSandbox, GetSandbox, ListSandboxes, DeleteSandbox, PauseSandbox,
 * ResumeSandbox, SuspendSandbox, SetSandboxPolicy. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "sandbox_network.h"
#include "service.h"

/* vmhost's own state as the API names it (vmhost.proto). */
static Airlock__Vmhost__V1__SandboxState state_msg(enum sb_state s)
{
#define MAP(x) case SB_##x: return AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##x
    switch (s) {
    MAP(CREATING);
    MAP(RUNNING);
    MAP(PAUSED);
    MAP(SUSPENDING);
    MAP(SUSPENDED);
    MAP(RESUMING);
    MAP(CHECKPOINTING);
    MAP(RESTORING);
    MAP(ERROR);
    MAP(DELETING);
    MAP(DELETED);
    case SB_NONE: break;
    }
#undef MAP
    return AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_UNSPECIFIED;
}

void sandbox_snapshot_take(struct sandbox *sb, struct sandbox_snapshot *out)
{
    airlock__vmhost__v1__sandbox__init(&out->msg);
    pthread_mutex_lock(&sb->lock);
    memcpy(out->id, sb->id, sizeof(out->id));
    memcpy(out->template_name, sb->template_name, sizeof(out->template_name));
    memcpy(out->error, sb->error, sizeof(out->error));
    out->msg.state = state_msg(sb->state);
    out->msg.qemu_pid = sb->vm ? vm_pid(sb->vm) : 0;
    out->msg.last_activity_unix_ms = sb->last_activity_unix_ms;
    pthread_mutex_unlock(&sb->lock);
    /* An exec still streaming is activity now, however quiet its output
     * (the scheduler's idle controller reads this). */
    pthread_mutex_lock(&sb->exec_lock);
    if (sb->execs)
        out->msg.last_activity_unix_ms = clock_realtime_ms();
    pthread_mutex_unlock(&sb->exec_lock);
    snprintf(out->accel, sizeof(out->accel), "%s", vm_accel_name(sb->vh->accel));
    memcpy(out->image_hash, sb->vh->image.hash, sizeof(out->image_hash));
    out->msg.id = out->id;
    out->msg.template_ = out->template_name;
    out->msg.vcpus = sb->vcpus;
    out->msg.memory_mb = sb->memory_mb;
    out->msg.created_unix_ms = sb->created_unix_ms;
    out->msg.accel = out->accel;
    out->msg.error = out->error;
    out->msg.image_hash = out->image_hash;
    out->msg.restored = sb->restored;
    out->msg.from_pool = sb->from_pool;
}

void service_finish_with_sandbox(struct rpc_call *call, struct sandbox *sb)
{
    struct sandbox_snapshot *snap = malloc(sizeof(*snap));
    if (!snap) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    sandbox_snapshot_take(sb, snap);
    rpc_call_send(call, &snap->msg.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    free(snap);
}

struct sandbox *service_lookup_sandbox(struct rpc_call *call, struct vmhost *vh, const char *id)
{
    if (!*id) {
        rpc_call_finish(call, GRPC_STATUS_INVALID_ARGUMENT, "id: required");
        return NULL;
    }
    struct sandbox *sb = sandbox_get(vh, id);
    if (!sb)
        rpc_call_finishf(call, GRPC_STATUS_NOT_FOUND, "sandbox %.80s not found", id);
    return sb;
}

struct sandbox_create_params
service_create_params(const Airlock__Vmhost__V1__CreateSandboxRequest *req)
{
    return (struct sandbox_create_params){
        .id = req->id,
        .template_name = req->template_,
        .vcpus = req->vcpus,
        .memory_mb = req->memory_mb,
        .policy = req->policy,
        .project_id = req->project_id, /* whose secrets egress injects */
    };
}

void service_sandbox_create(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__CreateSandboxRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__create_sandbox_request__descriptor);
    if (!req)
        return;
    struct sandbox_create_params p = service_create_params(req);
    struct sandbox *sb;
    char err[4096];
    enum sandbox_error rc = sandbox_create(vh, &p, &sb, err, sizeof(err));
    protobuf_c_message_free_unpacked(&req->base, NULL);
    if (rc != SANDBOX_OK) {
        rpc_call_finish(call, service_status_from_sandbox_error(rc), err);
        return;
    }
    service_finish_with_sandbox(call, sb);
    sandbox_put(sb);
}

void service_sandbox_get(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__GetSandboxRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__get_sandbox_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = service_lookup_sandbox(call, vh, req->id);
    protobuf_c_message_free_unpacked(&req->base, NULL);
    if (!sb)
        return;
    service_finish_with_sandbox(call, sb);
    sandbox_put(sb);
}

void service_sandbox_list(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    ProtobufCMessage *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__list_sandboxes_request__descriptor);
    if (!req)
        return;
    protobuf_c_message_free_unpacked(req, NULL);
    size_t n;
    struct sandbox **all = sandbox_list(vh, &n);
    struct sandbox_snapshot *snaps = calloc(n ? n : 1, sizeof(*snaps));
    Airlock__Vmhost__V1__Sandbox **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    if (!all || !snaps || !ptrs) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        for (size_t i = 0; i < n; i++) {
            sandbox_snapshot_take(all[i], &snaps[i]);
            ptrs[i] = &snaps[i].msg;
        }
        Airlock__Vmhost__V1__ListSandboxesResponse resp =
            AIRLOCK__VMHOST__V1__LIST_SANDBOXES_RESPONSE__INIT;
        resp.n_sandboxes = n;
        resp.sandboxes = ptrs;
        rpc_call_send(call, &resp.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    }
    for (size_t i = 0; all && i < n; i++)
        sandbox_put(all[i]);
    free(all);
    free(snaps);
    free(ptrs);
}

void service_sandbox_delete(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__DeleteSandboxRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__delete_sandbox_request__descriptor);
    if (!req)
        return;
    char err[512];
    enum sandbox_error rc = SANDBOX_ERR_INVALID;
    if (*req->id)
        rc = sandbox_delete(vh, req->id, err, sizeof(err));
    else
        snprintf(err, sizeof(err), "id: required");
    protobuf_c_message_free_unpacked(&req->base, NULL);
    if (rc != SANDBOX_OK) {
        rpc_call_finish(call, service_status_from_sandbox_error(rc), err);
        return;
    }
    Airlock__Vmhost__V1__DeleteSandboxResponse resp = AIRLOCK__VMHOST__V1__DELETE_SANDBOX_RESPONSE__INIT;
    rpc_call_send(call, &resp.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
}

/* Pause and Resume: look up, transition, answer with the new view. */
static void change_state(struct rpc_call *call, struct vmhost *vh, const char *id,
                         enum sandbox_error (*op)(struct sandbox *, char *, size_t))
{
    struct sandbox *sb = service_lookup_sandbox(call, vh, id);
    if (!sb)
        return;
    char err[1024];
    enum sandbox_error rc = op(sb, err, sizeof(err));
    if (rc == SANDBOX_OK)
        service_finish_with_sandbox(call, sb);
    else
        rpc_call_finish(call, service_status_from_sandbox_error(rc), err);
    sandbox_put(sb);
}

void service_sandbox_pause(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__PauseSandboxRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__pause_sandbox_request__descriptor);
    if (!req)
        return;
    change_state(call, ctx, req->id, sandbox_pause);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_sandbox_resume(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__ResumeSandboxRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__resume_sandbox_request__descriptor);
    if (!req)
        return;
    change_state(call, ctx, req->id, sandbox_resume);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_sandbox_suspend(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__SuspendSandboxRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__suspend_sandbox_request__descriptor);
    if (!req)
        return;
    change_state(call, ctx, req->id, sandbox_suspend);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_sandbox_set_policy(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__SetSandboxPolicyRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__set_sandbox_policy_request__descriptor);
    if (!req)
        return;
    struct sandbox *sb = service_lookup_sandbox(call, ctx, req->id);
    if (sb) {
        char err[1024];
        enum sandbox_error rc = sandbox_set_policy(sb, req->policy, err, sizeof(err));
        if (rc == SANDBOX_OK) {
            Airlock__Vmhost__V1__Empty empty = AIRLOCK__VMHOST__V1__EMPTY__INIT;
            rpc_call_send(call, &empty.base);
            rpc_call_finish(call, GRPC_STATUS_OK, NULL);
        } else {
            rpc_call_finish(call, service_status_from_sandbox_error(rc), err);
        }
        sandbox_put(sb);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
