#include "sandbox_access.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "key_revocations.h"
#include "sandbox_id.h"

/* key_cache_fetch_fn: the scheduler's Authenticate. */
static grpc_status_code scheduler_authenticate(void *ctx, const char *key,
                                               struct key_principal *who, char *err, size_t errlen)
{
    struct gateway *gw = ctx;
    Airlock__Scheduler__V1__AuthenticateRequest req =
        AIRLOCK__SCHEDULER__V1__AUTHENTICATE_REQUEST__INIT;
    req.api_key = (char *)key;
    Airlock__Scheduler__V1__Principal *p = NULL;
    grpc_status_code st = gw_unary(gw->scheduler, SCHEDULER_METHOD("Authenticate"), &req.base,
                                   &airlock__scheduler__v1__principal__descriptor,
                                   (ProtobufCMessage **)&p, GW_SCHEDULER_TIMEOUT_MS, err, errlen);
    if (st != GRPC_STATUS_OK)
        return st;
    snprintf(who->key_id, sizeof(who->key_id), "%s", p->key_id);
    snprintf(who->project_id, sizeof(who->project_id), "%s", p->project_id);
    who->admin = p->admin;
    protobuf_c_message_free_unpacked(&p->base, NULL);
    return st;
}

grpc_status_code gw_authenticate(struct gateway *gw, const char *authorization, const char *missing,
                                 struct key_principal *who, char *err, size_t errlen)
{
    memset(who, 0, sizeof(*who));
    if (!authorization || strncmp(authorization, "Bearer ", 7) != 0 || !authorization[7]) {
        snprintf(err, errlen, "%s", missing);
        return GRPC_STATUS_UNAUTHENTICATED;
    }
    return key_cache_authenticate(&gw->keys, authorization + 7, key_revocations_live(gw->nats),
                                  scheduler_authenticate, gw, who, err, errlen);
}

int gw_id_check(const char *id, char *err, size_t errlen)
{
    if (!*id) {
        snprintf(err, errlen, "id: required");
        return -1;
    }
    if (!sandbox_id_valid(id)) {
        snprintf(err, errlen, "id \"%.80s\" is malformed (1..64 of a-z 0-9 _ -)", id);
        return -1;
    }
    return 0;
}

int gw_path_check(const char *path, const char *name, char *err, size_t errlen)
{
    if (!path || !*path)
        snprintf(err, errlen, "%s: required, an absolute path", name);
    else if (path[0] != '/')
        snprintf(err, errlen, "%s: must be absolute", name);
    else
        return 0;
    return -1;
}

void gw_copy_details(grpc_status_code st, const char *details, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", details && *details ? details : rpc_status_name(st));
}

grpc_status_code gw_unary(struct rpc_channel *ch, const char *method, const ProtobufCMessage *req,
                          const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                          int timeout_ms, char *err, size_t errlen)
{
    char *details = NULL;
    grpc_status_code st = rpc_unary(ch, method, req, resp_desc, resp, &details, timeout_ms);
    if (st != GRPC_STATUS_OK)
        gw_copy_details(st, details, err, errlen);
    free(details);
    return st;
}

grpc_status_code gw_sandbox_ref_call(struct gateway *gw, const struct gw_caller *c,
                                     const char *method, const char *id,
                                     const ProtobufCMessageDescriptor *resp_desc,
                                     ProtobufCMessage **resp, char *err, size_t errlen)
{
    Airlock__Scheduler__V1__SandboxRef ref = AIRLOCK__SCHEDULER__V1__SANDBOX_REF__INIT;
    GW_CALLER_FILL(ref, c);
    ref.id = (char *)id;
    return gw_unary(gw->scheduler, method, &ref.base, resp_desc, resp, GW_SCHEDULER_TIMEOUT_MS, err,
                           errlen);
}

grpc_status_code gw_sandbox_channel(struct gateway *gw, const Airlock__Scheduler__V1__Sandbox *sb,
                                    const char *what, struct rpc_channel **ch, char *err,
                                    size_t errlen)
{
    *ch = NULL;
    if (strcmp(sb->state, "running") != 0) {
        snprintf(err, errlen, "sandbox %s is %s; %s needs running", sb->id, sb->state, what);
        return GRPC_STATUS_FAILED_PRECONDITION;
    }
    return gw_sandbox_node_channel(gw, sb, ch, err, errlen);
}

grpc_status_code gw_sandbox_node_channel(struct gateway *gw, const Airlock__Scheduler__V1__Sandbox *sb,
                                         struct rpc_channel **ch, char *err, size_t errlen)
{
    *ch = *sb->vmhost_addr ? vmhost_pool_get(&gw->vmhosts, sb->vmhost_addr) : NULL;
    if (!*ch) {
        snprintf(err, errlen, "node %s of sandbox %s is not reachable", sb->node_id, sb->id);
        return GRPC_STATUS_UNAVAILABLE;
    }
    return GRPC_STATUS_OK;
}

grpc_status_code gw_sandbox_node_unary(struct gateway *gw, const struct gw_caller *c,
                                       const char *id, const char *method,
                                       const ProtobufCMessage *req,
                                       const ProtobufCMessageDescriptor *resp_desc,
                                       ProtobufCMessage **resp, char *err, size_t errlen)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct rpc_channel *ch = NULL;
    grpc_status_code st = gw_sandbox_ref_call(gw, c, SCHEDULER_METHOD("GetSandbox"), id,
                                              &airlock__scheduler__v1__sandbox__descriptor,
                                              (ProtobufCMessage **)&sb, err, errlen);
    if (st == GRPC_STATUS_OK)
        st = gw_sandbox_node_channel(gw, sb, &ch, err, errlen);
    if (st == GRPC_STATUS_OK)
        st = gw_unary(ch, method, req, resp_desc, resp, GW_SCHEDULER_TIMEOUT_MS, err, errlen);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return st;
}

grpc_status_code gw_sandbox_open(struct gateway *gw, const struct gw_caller *c, const char *id,
                                 const char *what, Airlock__Scheduler__V1__Sandbox **sb,
                                 struct rpc_channel **ch, char *err, size_t errlen)
{
    *ch = NULL;
    grpc_status_code st = gw_sandbox_ref_call(gw, c, SCHEDULER_METHOD("GetSandbox"), id,
                                              &airlock__scheduler__v1__sandbox__descriptor,
                                              (ProtobufCMessage **)sb, err, errlen);
    if (st == GRPC_STATUS_OK)
        st = gw_sandbox_channel(gw, *sb, what, ch, err, errlen);
    if (st != GRPC_STATUS_OK && *sb) {
        protobuf_c_message_free_unpacked(&(*sb)->base, NULL);
        *sb = NULL;
    }
    return st;
}

grpc_status_code gw_sandbox_create(struct gateway *gw, const struct gw_caller *c,
                                   Airlock__Scheduler__V1__CreateSandboxRequest *req,
                                   Airlock__Scheduler__V1__Sandbox **out, char *err, size_t errlen)
{
    *out = NULL;
    if (req->idle_timeout_s > GW_IDLE_TIMEOUT_MAX_S || req->ttl_s > GW_IDLE_TIMEOUT_MAX_S) {
        bool idle = req->idle_timeout_s > GW_IDLE_TIMEOUT_MAX_S;
        snprintf(err, errlen, "%s: %u is more than %u", idle ? "idle_timeout_s" : "ttl_s",
                 idle ? req->idle_timeout_s : req->ttl_s, GW_IDLE_TIMEOUT_MAX_S);
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    GW_CALLER_FILL(*req, c);
    return gw_unary(gw->scheduler, SCHEDULER_METHOD("CreateSandbox"), &req->base,
                    &airlock__scheduler__v1__sandbox__descriptor, (ProtobufCMessage **)out,
                    GW_CREATE_TIMEOUT_MS, err, errlen);
}

grpc_status_code gw_sandbox_set_network(struct gateway *gw, const struct gw_caller *c, const char *id,
                                        Airlock__Egress__V1__Policy *network,
                                        Airlock__Scheduler__V1__Sandbox **out, char *err,
                                        size_t errlen)
{
    *out = NULL;
    Airlock__Scheduler__V1__SetSandboxNetworkRequest req =
        AIRLOCK__SCHEDULER__V1__SET_SANDBOX_NETWORK_REQUEST__INIT;
    GW_CALLER_FILL(req, c);
    req.id = (char *)id;
    req.network = network;
    return gw_unary(gw->scheduler, SCHEDULER_METHOD("SetSandboxNetwork"), &req.base,
                    &airlock__scheduler__v1__sandbox__descriptor, (ProtobufCMessage **)out,
                    GW_SCHEDULER_TIMEOUT_MS, err, errlen);
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
