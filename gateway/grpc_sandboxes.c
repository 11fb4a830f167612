/* Sandboxes.CreateSandbox, GetSandbox, ListSandboxes, DeleteSandbox, the
 * lifecycle calls and SetNetworkPolicy: control calls on the scheduler,
 * through the same functions as the REST routes (sandbox_access.h). */
#include <stdlib.h>

#include "grpc_call.h"
#include "grpc_convert.h"
#include "string_map_json.h"

typedef Airlock__Scheduler__V1__Sandbox SchedulerSandbox;

/* Answers with the public form of sb (NULL: Empty), or, rc -1, with e. */
static void reply_sandbox(struct grpc_request *r, int rc, const struct airlock_error *e,
                          SchedulerSandbox *sb, bool empty)
{
    if (rc < 0) {
        grpc_fail_error(r, e);
        return;
    }
    struct grpc_arena a = { 0 };
    Airlock__V1__Empty nothing = AIRLOCK__V1__EMPTY__INIT;
    Airlock__V1__Sandbox *msg = empty ? NULL : grpc_sandbox_msg(&a, sb);
    grpc_reply_built(r, &a, empty ? &nothing.base : msg ? &msg->base : NULL, &sb->base);
}

void grpc_create_sandbox(struct grpc_request *r)
{
    const Airlock__V1__CreateSandboxRequest *in = (const void *)r->msg;
    Airlock__Scheduler__V1__CreateSandboxRequest req =
        AIRLOCK__SCHEDULER__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.template_ = in->template_;
    req.cpus = in->cpus;
    req.memory_mb = in->memory_mb;
    req.idle_timeout_s = in->idle_timeout_s;
    req.ttl_s = in->ttl_s;
    req.checkpoint_every_s = in->checkpoint_every_s;
    req.public_ports = in->public_ports;
    req.idempotency_key = in->idempotency_key;
    req.volumes = in->volumes; /* VolumeMount on both sides; the scheduler judges them */
    req.n_volumes = in->n_volumes;
    req.n_env = in->n_env;
    req.n_metadata = in->n_metadata;
    struct airlock_error e;
    SchedulerSandbox *sb = NULL;
    Airlock__Egress__V1__Policy policy;
    int rc;
    /* The entries and the policy borrow in's strings. */
    req.env = (void *)string_map_copy(
        (ProtobufCMessage **)in->env, in->n_env,
        &airlock__scheduler__v1__create_sandbox_request__env_entry__descriptor, "env",
        AIRLOCK_ERROR_MSG(&e));
    if (req.env)
        req.metadata = (void *)string_map_copy(
            (ProtobufCMessage **)in->metadata, in->n_metadata,
            &airlock__scheduler__v1__create_sandbox_request__metadata_entry__descriptor, "metadata",
            AIRLOCK_ERROR_MSG(&e));
    if (req.metadata &&
        (!in->network || grpc_network_policy(in->network, &policy, AIRLOCK_ERROR_MSG(&e)) == 0)) {
        req.network = in->network ? &policy : NULL;
        rc = gw_sandbox_create(r->gw, &r->caller, &req, &sb, &e);
    } else {
        rc = airlock_error_classify(&e, AIRLOCK_ERR_INVALID);
    }
    free(req.env);
    free(req.metadata);
    reply_sandbox(r, rc, &e, sb, false);
}

/* One SandboxRef call on the scheduler, answered with the sandbox (or
 * Empty). */
static void sandbox_op(struct grpc_request *r, const char *method, bool empty)
{
    const Airlock__V1__SandboxRequest *in = (const void *)r->msg;
    if (!grpc_check_id(r, in->id))
        return;
    struct airlock_error e;
    SchedulerSandbox *sb = NULL;
    int rc = gw_sandbox_ref_call(r->gw, &r->caller, method, in->id,
                                 &airlock__scheduler__v1__sandbox__descriptor,
                                 (ProtobufCMessage **)&sb, &e);
    reply_sandbox(r, rc, &e, sb, empty);
}

void grpc_get_sandbox(struct grpc_request *r)
{
    sandbox_op(r, SCHEDULER_METHOD("GetSandbox"), false);
}

void grpc_delete_sandbox(struct grpc_request *r)
{
    sandbox_op(r, SCHEDULER_METHOD("DeleteSandbox"), true);
}

void grpc_pause_sandbox(struct grpc_request *r)
{
    sandbox_op(r, SCHEDULER_METHOD("PauseSandbox"), false);
}

void grpc_resume_sandbox(struct grpc_request *r)
{
    sandbox_op(r, SCHEDULER_METHOD("ResumeSandbox"), false);
}

void grpc_suspend_sandbox(struct grpc_request *r)
{
    sandbox_op(r, SCHEDULER_METHOD("SuspendSandbox"), false);
}

void grpc_list_sandboxes(struct grpc_request *r)
{
    Airlock__Scheduler__V1__ListSandboxesRequest req =
        AIRLOCK__SCHEDULER__V1__LIST_SANDBOXES_REQUEST__INIT;
    req.request_id = r->id;
    req.project_id = r->project_id;
    Airlock__Scheduler__V1__ListSandboxesResponse *resp = NULL;
    if (!grpc_unary(r, r->gw->scheduler, SCHEDULER_METHOD("ListSandboxes"), &req.base,
                    &airlock__scheduler__v1__list_sandboxes_response__descriptor,
                    GW_SCHEDULER_TIMEOUT_MS, (ProtobufCMessage **)&resp))
        return;
    struct grpc_arena a = { 0 };
    Airlock__V1__ListSandboxesResponse out = AIRLOCK__V1__LIST_SANDBOXES_RESPONSE__INIT;
    out.sandboxes = grpc_sandbox_list(&a, resp->sandboxes, resp->n_sandboxes);
    out.n_sandboxes = resp->n_sandboxes;
    grpc_reply_built(r, &a, &out.base, &resp->base);
}

void grpc_set_network_policy(struct grpc_request *r)
{
    const Airlock__V1__SetNetworkPolicyRequest *in = (const void *)r->msg;
    if (!grpc_check_id(r, in->id))
        return;
    struct airlock_error e;
    /* Unset: the empty policy, which denies everything. */
    Airlock__Egress__V1__Policy policy = AIRLOCK__EGRESS__V1__POLICY__INIT;
    SchedulerSandbox *sb = NULL;
    int rc;
    if (!in->network || grpc_network_policy(in->network, &policy, AIRLOCK_ERROR_MSG(&e)) == 0)
        rc = gw_sandbox_set_network(r->gw, &r->caller, in->id, &policy, &sb, &e);
    else
        rc = airlock_error_classify(&e, AIRLOCK_ERR_INVALID);
    reply_sandbox(r, rc, &e, sb, false);
}
