#include "sandbox_access.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "key_revocations.h"
#include "rpc_err.h"
#include "sandbox_id.h"

/* key_cache_fetch_fn: the scheduler's Authenticate. */
static int scheduler_authenticate(void *ctx, const char *key, struct key_principal *who,
                                  struct airlock_error *e)
{
    struct gateway *gw = ctx;
    Airlock__Scheduler__V1__AuthenticateRequest req =
        AIRLOCK__SCHEDULER__V1__AUTHENTICATE_REQUEST__INIT;
    req.api_key = (char *)key;
    Airlock__Scheduler__V1__Principal *p = NULL;
    if (gw_unary(gw->scheduler, SCHEDULER_METHOD("Authenticate"), &req.base,
                 &airlock__scheduler__v1__principal__descriptor, (ProtobufCMessage **)&p,
                 GW_SCHEDULER_TIMEOUT_MS, e) < 0)
        return -1;
    snprintf(who->key_id, sizeof(who->key_id), "%s", p->key_id);
    snprintf(who->project_id, sizeof(who->project_id), "%s", p->project_id);
    who->admin = p->admin;
    protobuf_c_message_free_unpacked(&p->base, NULL);
    return 0;
}

int gw_authenticate(struct gateway *gw, const char *authorization, const char *missing,
                    struct key_principal *who, struct airlock_error *e)
{
    memset(who, 0, sizeof(*who));
    if (!authorization || strncmp(authorization, "Bearer ", 7) != 0 || !authorization[7])
        return airlock_error_set(e, AIRLOCK_ERR_UNAUTHENTICATED, "%s", missing);
    return key_cache_authenticate(&gw->keys, authorization + 7, key_revocations_live(gw->nats),
                                  scheduler_authenticate, gw, who, e);
}

int gw_id_check(const char *id, struct airlock_error *e)
{
    if (!*id)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "id: required");
    if (!sandbox_id_valid(id))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "id \"%s\" is malformed (1..64 of a-z 0-9 _ -)", id);
    return 0;
}

int gw_path_check(const char *path, const char *name, struct airlock_error *e)
{
    if (!path || !*path)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: required, an absolute path", name);
    if (path[0] != '/')
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: must be absolute", name);
    return 0;
}

/* "scheduler" of "/airlock.scheduler.v1.Scheduler/GetSandbox": the
 * service's name in messages. */
static void service_of(const char *method, char *name, size_t namelen)
{
    const char *dot = strchr(method, '.');
    const char *from = dot ? dot + 1 : method;
    snprintf(name, namelen, "%.*s", (int)strcspn(from, "./"), from);
}

int gw_unary(struct rpc_channel *ch, const char *method, const ProtobufCMessage *req,
             const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp, int timeout_ms,
             struct airlock_error *e)
{
    char service[32];
    service_of(method, service, sizeof(service));
    if (rpc_channel_wait_ready(ch, GW_CONNECT_WAIT_MS) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                                 "the %s is not reachable (no connection within %d s): it is "
                                 "down or restarting; try again",
                                 service, GW_CONNECT_WAIT_MS / 1000);
    char *details = NULL;
    grpc_status_code st = rpc_unary(ch, method, req, resp_desc, resp, &details, timeout_ms);
    int rc = st == GRPC_STATUS_OK ? 0 : airlock_error_from_status(e, st, details);
    free(details);
    return rc;
}

int gw_sandbox_ref_call(struct gateway *gw, const struct gw_caller *c, const char *method,
                        const char *id, const ProtobufCMessageDescriptor *resp_desc,
                        ProtobufCMessage **resp, struct airlock_error *e)
{
    Airlock__Scheduler__V1__SandboxRef ref = AIRLOCK__SCHEDULER__V1__SANDBOX_REF__INIT;
    GW_CALLER_FILL(ref, c);
    ref.id = (char *)id;
    return gw_unary(gw->scheduler, method, &ref.base, resp_desc, resp, GW_SCHEDULER_TIMEOUT_MS, e);
}

int gw_sandbox_channel(struct gateway *gw, const Airlock__Scheduler__V1__Sandbox *sb,
                       const char *what, struct rpc_channel **ch, struct airlock_error *e)
{
    *ch = NULL;
    /* A migrating guest runs on its source until the switchover. */
    if (strcmp(sb->state, "running") != 0 && strcmp(sb->state, "migrating") != 0)
        return airlock_error_set(e, AIRLOCK_ERR_STATE, "sandbox %s is %s; %s needs running", sb->id,
                                 sb->state, what);
    return gw_sandbox_node_channel(gw, sb, ch, e);
}

int gw_sandbox_node_channel(struct gateway *gw, const Airlock__Scheduler__V1__Sandbox *sb,
                            struct rpc_channel **ch, struct airlock_error *e)
{
    *ch = *sb->vmhost_addr ? vmhost_pool_get(&gw->vmhosts, sb->node_id, sb->vmhost_addr) : NULL;
    if (!*ch)
        return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                                 "node %s of sandbox %s is not reachable", sb->node_id, sb->id);
    /* Streams (exec, files) have no deadline to end a wait for a vmhost
     * that is down. */
    if (rpc_channel_wait_ready(*ch, GW_CONNECT_WAIT_MS) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                                 "the vmhost of node %s (sandbox %s's) is not reachable (no "
                                 "connection within %d s): it is down or restarting; try again",
                                 sb->node_id, sb->id, GW_CONNECT_WAIT_MS / 1000);
    return 0;
}

int gw_sandbox_node_unary(struct gateway *gw, const struct gw_caller *c, const char *id,
                          const char *method, const ProtobufCMessage *req,
                          const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                          struct airlock_error *e)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct rpc_channel *ch = NULL;
    int rc = gw_sandbox_ref_call(gw, c, SCHEDULER_METHOD("GetSandbox"), id,
                                 &airlock__scheduler__v1__sandbox__descriptor,
                                 (ProtobufCMessage **)&sb, e);
    if (rc == 0)
        rc = gw_sandbox_node_channel(gw, sb, &ch, e);
    if (rc == 0)
        rc = gw_unary(ch, method, req, resp_desc, resp, GW_SCHEDULER_TIMEOUT_MS, e);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

int gw_sandbox_open(struct gateway *gw, const struct gw_caller *c, const char *id, const char *what,
                    Airlock__Scheduler__V1__Sandbox **sb, struct rpc_channel **ch,
                    struct airlock_error *e)
{
    *ch = NULL;
    int rc = gw_sandbox_ref_call(gw, c, SCHEDULER_METHOD("GetSandbox"), id,
                                 &airlock__scheduler__v1__sandbox__descriptor,
                                 (ProtobufCMessage **)sb, e);
    if (rc == 0)
        rc = gw_sandbox_channel(gw, *sb, what, ch, e);
    if (rc < 0 && *sb) {
        protobuf_c_message_free_unpacked(&(*sb)->base, NULL);
        *sb = NULL;
    }
    return rc;
}

int gw_sandbox_create(struct gateway *gw, const struct gw_caller *c,
                      Airlock__Scheduler__V1__CreateSandboxRequest *req,
                      Airlock__Scheduler__V1__Sandbox **out, struct airlock_error *e)
{
    *out = NULL;
    if (req->idle_timeout_s > GW_IDLE_TIMEOUT_MAX_S || req->ttl_s > GW_IDLE_TIMEOUT_MAX_S) {
        bool idle = req->idle_timeout_s > GW_IDLE_TIMEOUT_MAX_S;
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: %u is more than %u",
                                 idle ? "idle_timeout_s" : "ttl_s",
                                 idle ? req->idle_timeout_s : req->ttl_s, GW_IDLE_TIMEOUT_MAX_S);
    }
    GW_CALLER_FILL(*req, c);
    return gw_unary(gw->scheduler, SCHEDULER_METHOD("CreateSandbox"), &req->base,
                    &airlock__scheduler__v1__sandbox__descriptor, (ProtobufCMessage **)out,
                    GW_CREATE_TIMEOUT_MS, e);
}

int gw_sandbox_set_network(struct gateway *gw, const struct gw_caller *c, const char *id,
                           Airlock__Egress__V1__Policy *network,
                           Airlock__Scheduler__V1__Sandbox **out, struct airlock_error *e)
{
    *out = NULL;
    Airlock__Scheduler__V1__SetSandboxNetworkRequest req =
        AIRLOCK__SCHEDULER__V1__SET_SANDBOX_NETWORK_REQUEST__INIT;
    GW_CALLER_FILL(req, c);
    req.id = (char *)id;
    req.network = network;
    return gw_unary(gw->scheduler, SCHEDULER_METHOD("SetSandboxNetwork"), &req.base,
                    &airlock__scheduler__v1__sandbox__descriptor, (ProtobufCMessage **)out,
                    GW_SCHEDULER_TIMEOUT_MS, e);
}

Airlock__Scheduler__V1__CheckpointRequest gw_checkpoint_request(const struct gw_caller *c,
                                                               const char *sandbox_id,
                                                               const char *name)
{
    Airlock__Scheduler__V1__CheckpointRequest req = AIRLOCK__SCHEDULER__V1__CHECKPOINT_REQUEST__INIT;
    GW_CALLER_FILL(req, c);
    req.sandbox_id = (char *)sandbox_id;
    req.name = (char *)name;
    return req;
}
