/* The sandbox operations (ops.h): create, get, list, delete, pause,
 * resume, suspend, set_policy. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "ops.h"
#include "sandbox_network.h"

/* How long a repeated create waits for the first one's VM to boot. */
#define DUPLICATE_CREATE_WAIT_MS 120000

static struct sandbox_create_params
create_params(const Airlock__Vmhost__V1__CreateSandboxRequest *req)
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

grpc_status_code op_sandbox_create(struct vmhost *vh, const ProtobufCMessage *msg,
                                   struct op_answer *out, char *err, size_t errlen)
{
    struct sandbox_create_params p = create_params((const void *)msg);
    struct sandbox *sb;
    enum airlock_err rc = sandbox_create(vh, &p, &sb, err, errlen);
    if (rc != AIRLOCK_OK)
        return airlock_err_status(rc);
    return op_answer_sandbox(out, sb, err, errlen);
}

/* The sandbox of a create that found its id taken, once it is no longer
 * being created (or the wait is over): never a second VM. */
static grpc_status_code existing(struct vmhost *vh, const char *id, struct op_answer *out,
                                 char *err, size_t errlen)
{
    int64_t deadline = clock_monotonic_ms() + DUPLICATE_CREATE_WAIT_MS;
    for (;;) {
        struct sandbox *sb = sandbox_get(vh, id);
        if (!sb) {
            snprintf(err, errlen, "sandbox vanished while being created");
            return GRPC_STATUS_ABORTED;
        }
        if (sandbox_state(sb) != SB_CREATING || clock_monotonic_ms() > deadline)
            return op_answer_sandbox(out, sb, err, errlen);
        sandbox_put(sb);
        usleep(50 * 1000);
    }
}

grpc_status_code op_sandbox_create_named(struct vmhost *vh, const ProtobufCMessage *msg,
                                         struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__CreateSandboxRequest *req = (const void *)msg;
    if (!*req->id) {
        snprintf(err, errlen, "id: required (the scheduler names every sandbox)");
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    struct sandbox_create_params p = create_params(req);
    struct sandbox *sb;
    enum airlock_err rc = sandbox_create(vh, &p, &sb, err, errlen);
    if (rc == AIRLOCK_ERR_EXISTS)
        return existing(vh, req->id, out, err, errlen);
    if (rc != AIRLOCK_OK)
        return airlock_err_status(rc);
    log_info("sandbox created for scheduler", "sandbox=%s", sandbox_id(sb));
    return op_answer_sandbox(out, sb, err, errlen);
}

grpc_status_code op_sandbox_get(struct vmhost *vh, const ProtobufCMessage *msg,
                                struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    struct sandbox *sb;
    grpc_status_code st = op_lookup(vh, req->id, &sb, err, errlen);
    return st == GRPC_STATUS_OK ? op_answer_sandbox(out, sb, err, errlen) : st;
}

grpc_status_code op_sandbox_list(struct vmhost *vh, const ProtobufCMessage *msg,
                                 struct op_answer *out, char *err, size_t errlen)
{
    (void)msg;
    out->sandboxes = sandbox_list(vh, &out->n_sandboxes);
    if (!out->sandboxes) { /* never an empty list instead: reconciliation would believe it */
        snprintf(err, errlen, "out of memory");
        return GRPC_STATUS_RESOURCE_EXHAUSTED;
    }
    return GRPC_STATUS_OK;
}

grpc_status_code op_sandbox_delete(struct vmhost *vh, const ProtobufCMessage *msg,
                                   struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    (void)out;
    if (!*req->id) {
        snprintf(err, errlen, "id: required");
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    return airlock_err_status(sandbox_delete(vh, req->id, err, errlen));
}

/* pause, resume, suspend, set_policy: fn on the sandbox, answered with it. */
static grpc_status_code change(struct vmhost *vh, const char *id,
                               enum airlock_err (*fn)(struct sandbox *, const void *, char *,
                                                        size_t),
                               const void *arg, struct op_answer *out, char *err, size_t errlen)
{
    struct sandbox *sb;
    grpc_status_code st = op_lookup(vh, id, &sb, err, errlen);
    if (st != GRPC_STATUS_OK)
        return st;
    enum airlock_err rc = fn(sb, arg, err, errlen);
    if (rc != AIRLOCK_OK) {
        sandbox_put(sb);
        return airlock_err_status(rc);
    }
    return op_answer_sandbox(out, sb, err, errlen);
}

static enum airlock_err pause_fn(struct sandbox *sb, const void *arg, char *err, size_t errlen)
{
    (void)arg;
    return sandbox_pause(sb, err, errlen);
}

static enum airlock_err resume_fn(struct sandbox *sb, const void *arg, char *err, size_t errlen)
{
    (void)arg;
    return sandbox_resume(sb, err, errlen);
}

static enum airlock_err suspend_fn(struct sandbox *sb, const void *arg, char *err,
                                     size_t errlen)
{
    (void)arg;
    return sandbox_suspend(sb, err, errlen);
}

/* Live: new connections use it at once. */
static enum airlock_err policy_fn(struct sandbox *sb, const void *arg, char *err, size_t errlen)
{
    return sandbox_set_policy(sb, arg, err, errlen);
}

grpc_status_code op_sandbox_pause(struct vmhost *vh, const ProtobufCMessage *msg,
                                  struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    return change(vh, req->id, pause_fn, NULL, out, err, errlen);
}

grpc_status_code op_sandbox_resume(struct vmhost *vh, const ProtobufCMessage *msg,
                                   struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    return change(vh, req->id, resume_fn, NULL, out, err, errlen);
}

grpc_status_code op_sandbox_suspend(struct vmhost *vh, const ProtobufCMessage *msg,
                                    struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    return change(vh, req->id, suspend_fn, NULL, out, err, errlen);
}

grpc_status_code op_sandbox_set_policy(struct vmhost *vh, const ProtobufCMessage *msg,
                                       struct op_answer *out, char *err, size_t errlen)
{
    const Airlock__Vmhost__V1__SetSandboxPolicyRequest *req = (const void *)msg;
    return change(vh, req->id, policy_fn, req->policy, out, err, errlen);
}
