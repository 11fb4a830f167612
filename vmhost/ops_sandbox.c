/* The sandbox operations (ops.h): create, get, list, delete, pause,
 * resume, suspend, set_policy. */
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "ops.h"
#include "sandbox_network.h"
#include "sandbox_shared_store.h"

/* How long a repeated create waits for the first one's VM to boot. */
#define DUPLICATE_CREATE_WAIT_MS 120000

static struct sandbox_create_params
create_params(const Airlock__Vmhost__V1__CreateSandboxRequest *req)
{
    return (struct sandbox_create_params){
        .id = req->id,
        .template_name = req->template_,
        .template_store_object = req->template_store_object,
        .vcpus = req->vcpus,
        .memory_mb = req->memory_mb,
        .policy = req->policy,
        .project_id = req->project_id, /* whose secrets egress injects */
        .volumes = req->volumes,
        .n_volumes = req->n_volumes,
    };
}

int op_sandbox_create(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                      struct airlock_error *e)
{
    struct sandbox_create_params p = create_params((const void *)msg);
    struct sandbox *sb;
    if (sandbox_create(vh, &p, &sb, e) < 0)
        return -1;
    return op_answer_sandbox(out, sb, e);
}

/* The sandbox of a create that found its id taken, once it is no longer
 * being created (or the wait is over): never a second VM. */
static int existing(struct vmhost *vh, const char *id, struct op_answer *out,
                    struct airlock_error *e)
{
    int64_t deadline = clock_monotonic_ms() + DUPLICATE_CREATE_WAIT_MS;
    for (;;) {
        struct sandbox *sb = sandbox_get(vh, id);
        if (!sb)
            return airlock_error_set(e, AIRLOCK_ERR_ABORTED,
                                     "sandbox vanished while being created");
        if (sandbox_state(sb) != SB_CREATING || clock_monotonic_ms() > deadline)
            return op_answer_sandbox(out, sb, e);
        sandbox_put(sb);
        usleep(50 * 1000);
    }
}

int op_sandbox_create_named(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                            struct airlock_error *e)
{
    const Airlock__Vmhost__V1__CreateSandboxRequest *req = (const void *)msg;
    if (!*req->id)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "id: required (the scheduler names every sandbox)");
    struct sandbox_create_params p = create_params(req);
    struct sandbox *sb;
    if (sandbox_create(vh, &p, &sb, e) < 0) {
        if (e->class != AIRLOCK_ERR_EXISTS)
            return -1;
        airlock_error_clear(e);
        return existing(vh, req->id, out, e);
    }
    log_info("sandbox created for scheduler", "sandbox=%s", sandbox_id(sb));
    return op_answer_sandbox(out, sb, e);
}

int op_sandbox_get(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                   struct airlock_error *e)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    struct sandbox *sb;
    if (op_lookup(vh, req->id, &sb, e) < 0)
        return -1;
    return op_answer_sandbox(out, sb, e);
}

int op_sandbox_list(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                    struct airlock_error *e)
{
    (void)msg;
    out->sandboxes = sandbox_list(vh, &out->n_sandboxes);
    if (!out->sandboxes) /* never an empty list instead: reconciliation would believe it */
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    return 0;
}

int op_sandbox_delete(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                      struct airlock_error *e)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    (void)out;
    if (!*req->id)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "id: required");
    return sandbox_delete(vh, req->id, req->store_object, req->keep_checkpoints,
                          req->moved_volume_ids, req->n_moved_volume_ids, e);
}

int op_sandbox_take(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                    struct airlock_error *e)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    if (!*req->id || !req->store_object || !*req->store_object)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "id and store_object: required");
    struct sandbox *sb;
    if (sandbox_shared_store_take(vh, req->id, req->store_object, &sb, e) < 0)
        return -1;
    return op_answer_sandbox(out, sb, e);
}

/* pause, resume, suspend, set_policy: fn on the sandbox, answered with it. */
static int change(struct vmhost *vh, const char *id,
                  int (*fn)(struct sandbox *, const void *, struct airlock_error *),
                  const void *arg, struct op_answer *out, struct airlock_error *e)
{
    struct sandbox *sb;
    if (op_lookup(vh, id, &sb, e) < 0)
        return -1;
    if (fn(sb, arg, e) < 0) {
        sandbox_put(sb);
        return -1;
    }
    return op_answer_sandbox(out, sb, e);
}

static int pause_fn(struct sandbox *sb, const void *arg, struct airlock_error *e)
{
    (void)arg;
    return sandbox_pause(sb, e);
}

static int resume_fn(struct sandbox *sb, const void *arg, struct airlock_error *e)
{
    (void)arg;
    return sandbox_resume(sb, e);
}

static int suspend_fn(struct sandbox *sb, const void *arg, struct airlock_error *e)
{
    (void)arg;
    return sandbox_suspend(sb, e);
}

/* Live: new connections use it at once. */
static int policy_fn(struct sandbox *sb, const void *arg, struct airlock_error *e)
{
    return sandbox_set_policy(sb, arg, e);
}

int op_sandbox_pause(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                     struct airlock_error *e)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    return change(vh, req->id, pause_fn, NULL, out, e);
}

int op_sandbox_resume(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                      struct airlock_error *e)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    /* A sandbox held here resumes its own copy; another is taken from
     * its suspend in the shared store. */
    struct sandbox *sb = sandbox_get(vh, req->id);
    if (sb || !req->store_object || !*req->store_object) {
        sandbox_put(sb);
        return change(vh, req->id, resume_fn, NULL, out, e);
    }
    if (sandbox_shared_store_resume(vh, req->id, req->store_object, &sb, e) < 0)
        return -1;
    return op_answer_sandbox(out, sb, e);
}

int op_sandbox_suspend(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                       struct airlock_error *e)
{
    const Airlock__Vmhost__V1__SandboxRef *req = (const void *)msg;
    return change(vh, req->id, suspend_fn, NULL, out, e);
}

int op_sandbox_set_policy(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                          struct airlock_error *e)
{
    const Airlock__Vmhost__V1__SetSandboxPolicyRequest *req = (const void *)msg;
    return change(vh, req->id, policy_fn, req->policy, out, e);
}
