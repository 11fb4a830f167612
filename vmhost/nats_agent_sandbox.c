/* The node's sandbox ops for the scheduler (protos/node.proto): create,
 * get, delete, pause, resume, suspend, set_policy — the same sandbox.h
 * functions the gRPC API serves (service_sandbox.c). */
#include <stdio.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "nats_agent_ops.h"
#include "sandbox_network.h"
#include "service.h"

/* How long a duplicate create waits for the first one's VM to boot. */
#define DUPLICATE_CREATE_WAIT_MS 120000

static void reply(natsConnection *nc, natsMsg *msg, grpc_status_code status, const char *message,
                  struct sandbox *sb)
{
    Airlock__Node__V1__NodeReply r = AIRLOCK__NODE__V1__NODE_REPLY__INIT;
    r.status = status;
    r.message = (char *)(message ? message : "");
    struct sandbox_snapshot view;
    if (sb) {
        sandbox_snapshot_take(sb, &view);
        r.sandbox = &view.msg;
    }
    node_reply_send(nc, msg, &r);
}

/* A create for an id that exists: the scheduler retried. Answer with the
 * sandbox once the first attempt's VM is up, never with a second VM. */
static void reply_existing(struct vmhost *vh, natsConnection *nc, natsMsg *msg, const char *id)
{
    int64_t deadline = clock_monotonic_ms() + DUPLICATE_CREATE_WAIT_MS;
    for (;;) {
        struct sandbox *sb = sandbox_get(vh, id);
        if (!sb) {
            reply(nc, msg, GRPC_STATUS_ABORTED, "sandbox vanished while being created", NULL);
            return;
        }
        pthread_mutex_lock(&sb->lock);
        bool creating = sb->state == SB_CREATING;
        pthread_mutex_unlock(&sb->lock);
        if (!creating || clock_monotonic_ms() > deadline) {
            reply(nc, msg, GRPC_STATUS_OK, NULL, sb);
            sandbox_put(sb);
            return;
        }
        sandbox_put(sb);
        usleep(50 * 1000);
    }
}

void node_op_create(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    Airlock__Vmhost__V1__CreateSandboxRequest *req =
        UNPACK(airlock__vmhost__v1__create_sandbox_request, msg);
    if (!req || !*req->id) {
        reply(nc, msg, GRPC_STATUS_INVALID_ARGUMENT, "create: a CreateSandboxRequest with an id",
              NULL);
        goto out;
    }
    struct sandbox_create_params p = service_create_params(req);
    struct sandbox *sb = NULL;
    char err[4096];
    enum sandbox_error rc = sandbox_create(vh, &p, &sb, err, sizeof(err));
    if (rc == SANDBOX_ERR_EXISTS) {
        reply_existing(vh, nc, msg, req->id);
    } else if (rc != SANDBOX_OK) {
        reply(nc, msg, service_status_from_sandbox_error(rc), err, NULL);
    } else {
        log_info("sandbox created for scheduler", "sandbox=%s", sb->id);
        reply(nc, msg, GRPC_STATUS_OK, NULL, sb);
        sandbox_put(sb);
    }
out:
    if (req)
        airlock__vmhost__v1__create_sandbox_request__free_unpacked(req, NULL);
}

/* Live, like the VmHost API's SetSandboxPolicy: new connections use it. */
void node_op_set_policy(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    Airlock__Vmhost__V1__SetSandboxPolicyRequest *req =
        UNPACK(airlock__vmhost__v1__set_sandbox_policy_request, msg);
    struct sandbox *sb = NULL;
    char err[1024];
    enum sandbox_error rc = SANDBOX_ERR_INVALID;
    snprintf(err, sizeof(err), "set_policy: a SetSandboxPolicyRequest with an id");
    if (!req || !*req->id)
        goto out;
    sb = sandbox_get(vh, req->id);
    rc = SANDBOX_ERR_NOT_FOUND;
    snprintf(err, sizeof(err), "sandbox %.80s not found", req->id);
    if (sb)
        rc = sandbox_set_policy(sb, req->policy, err, sizeof(err));
out:
    reply(nc, msg, service_status_from_sandbox_error(rc), rc == SANDBOX_OK ? NULL : err,
          rc == SANDBOX_OK ? sb : NULL);
    if (sb)
        sandbox_put(sb);
    if (req)
        airlock__vmhost__v1__set_sandbox_policy_request__free_unpacked(req, NULL);
}

/* The request of get, delete, pause, resume and suspend: its id, or NULL
 * after answering INVALID_ARGUMENT. */
static Airlock__Vmhost__V1__GetSandboxRequest *by_id(natsConnection *nc, natsMsg *msg,
                                                     const char *op)
{
    Airlock__Vmhost__V1__GetSandboxRequest *req = UNPACK(airlock__vmhost__v1__get_sandbox_request,
                                                         msg);
    if (req && *req->id)
        return req;
    char err[128];
    snprintf(err, sizeof(err), "%s: a request with an id", op);
    reply(nc, msg, GRPC_STATUS_INVALID_ARGUMENT, err, NULL);
    if (req)
        airlock__vmhost__v1__get_sandbox_request__free_unpacked(req, NULL);
    return NULL;
}

void node_op_get(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    Airlock__Vmhost__V1__GetSandboxRequest *req = by_id(nc, msg, "get");
    if (!req)
        return;
    struct sandbox *sb = sandbox_get(vh, req->id);
    char err[512];
    snprintf(err, sizeof(err), "sandbox %.80s not found", req->id);
    reply(nc, msg, sb ? GRPC_STATUS_OK : GRPC_STATUS_NOT_FOUND, sb ? NULL : err, sb);
    if (sb)
        sandbox_put(sb);
    airlock__vmhost__v1__get_sandbox_request__free_unpacked(req, NULL);
}

void node_op_delete(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    Airlock__Vmhost__V1__GetSandboxRequest *req = by_id(nc, msg, "delete");
    if (!req)
        return;
    char err[512];
    enum sandbox_error rc = sandbox_delete(vh, req->id, err, sizeof(err));
    reply(nc, msg, service_status_from_sandbox_error(rc), rc == SANDBOX_OK ? NULL : err, NULL);
    airlock__vmhost__v1__get_sandbox_request__free_unpacked(req, NULL);
}

/* pause, resume, suspend: fn on the sandbox, answered with it. */
static void lifecycle(struct vmhost *vh, natsConnection *nc, natsMsg *msg, const char *op,
                      enum sandbox_error (*fn)(struct sandbox *sb, char *err, size_t errlen))
{
    Airlock__Vmhost__V1__GetSandboxRequest *req = by_id(nc, msg, op);
    if (!req)
        return;
    struct sandbox *sb = sandbox_get(vh, req->id);
    enum sandbox_error rc = SANDBOX_ERR_NOT_FOUND;
    char err[4096];
    snprintf(err, sizeof(err), "sandbox %.80s not found", req->id);
    if (sb)
        rc = fn(sb, err, sizeof(err));
    reply(nc, msg, service_status_from_sandbox_error(rc), rc == SANDBOX_OK ? NULL : err,
          rc == SANDBOX_OK ? sb : NULL);
    if (sb)
        sandbox_put(sb);
    airlock__vmhost__v1__get_sandbox_request__free_unpacked(req, NULL);
}

void node_op_pause(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    lifecycle(vh, nc, msg, "pause", sandbox_pause);
}

void node_op_resume(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    lifecycle(vh, nc, msg, "resume", sandbox_resume);
}

void node_op_suspend(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    lifecycle(vh, nc, msg, "suspend", sandbox_suspend);
}
