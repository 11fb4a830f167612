#include "egress_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_client.h"

#define EGRESS_CLIENT_METHOD(name) "/airlock.egress.v1.Egress/" name
/* Attach opens sockets in a namespace: milliseconds. The bound keeps a
 * wedged or dead egress (gRPC waits for a server that is down until the
 * deadline) from holding a sandbox's create for long: it fails within
 * seconds, naming egress (scheduler/README.md "Faults"). */
#define EGRESS_CLIENT_TIMEOUT_MS 5000

struct egress_client {
    struct rpc_channel *ch;
};

struct egress_client *egress_client_open(const char *addr, const struct rpc_channel_auth *auth)
{
    struct egress_client *ec = calloc(1, sizeof(*ec));
    if (!ec)
        return NULL;
    ec->ch = rpc_channel_open(addr, auth);
    if (!ec->ch) {
        free(ec);
        return NULL;
    }
    return ec;
}

void egress_client_close(struct egress_client *ec)
{
    if (!ec)
        return;
    rpc_channel_close(ec->ch);
    free(ec);
}

/* One call; the answer goes to *out when out is not NULL (else it is
 * dropped). */
static grpc_status_code egress_call_for(struct egress_client *ec, const char *method,
                                        const ProtobufCMessage *req,
                                        const ProtobufCMessageDescriptor *resp_desc,
                                        ProtobufCMessage **out, char *err, size_t errlen)
{
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(ec->ch, method, req, resp_desc, &resp, &details,
                                    EGRESS_CLIENT_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        snprintf(err, errlen, "egress %s: %s: %s", method + sizeof(EGRESS_CLIENT_METHOD("")) - 1,
                 rpc_status_name(st), details ? details : "");
    if (out && st == GRPC_STATUS_OK)
        *out = resp;
    else if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    free(details);
    return st;
}

static grpc_status_code egress_call(struct egress_client *ec, const char *method,
                                    const ProtobufCMessage *req,
                                    const ProtobufCMessageDescriptor *resp_desc, char *err,
                                    size_t errlen)
{
    return egress_call_for(ec, method, req, resp_desc, NULL, err, errlen);
}

/* An unset policy is an empty one: default deny, no rules. */
static Airlock__Egress__V1__Policy *policy_or_deny_all(const Airlock__Egress__V1__Policy *p,
                                                       Airlock__Egress__V1__Policy *empty)
{
    *empty = (Airlock__Egress__V1__Policy)AIRLOCK__EGRESS__V1__POLICY__INIT;
    return p ? (Airlock__Egress__V1__Policy *)p : empty;
}

/* The sandbox CA egress answered with (AttachSandbox, SetPolicy) into
 * *ca_pem (ca_pem may be NULL; NULL when there is none). */
static grpc_status_code keep_ca(grpc_status_code st, const char *pem, char **ca_pem, char *err,
                                size_t errlen)
{
    if (ca_pem)
        *ca_pem = NULL;
    if (st == GRPC_STATUS_OK && ca_pem && pem && pem[0] && !(*ca_pem = strdup(pem))) {
        snprintf(err, errlen, "egress: out of memory for the sandbox CA");
        return GRPC_STATUS_INTERNAL;
    }
    return st;
}

grpc_status_code egress_client_attach(struct egress_client *ec, const char *sandbox_id,
                                      const char *netns_path,
                                      const Airlock__Egress__V1__Policy *policy,
                                      const char *project_id, char **ca_pem, char *err,
                                      size_t errlen)
{
    Airlock__Egress__V1__Policy empty;
    Airlock__Egress__V1__AttachSandboxRequest req =
        AIRLOCK__EGRESS__V1__ATTACH_SANDBOX_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
    req.netns_path = (char *)netns_path;
    req.policy = policy_or_deny_all(policy, &empty);
    req.project_id = (char *)(project_id ? project_id : "");
    Airlock__Egress__V1__AttachSandboxResponse *resp = NULL;
    grpc_status_code st = egress_call_for(
        ec, EGRESS_CLIENT_METHOD("AttachSandbox"), &req.base,
        &airlock__egress__v1__attach_sandbox_response__descriptor, (ProtobufCMessage **)&resp,
        err, errlen);
    st = keep_ca(st, resp ? resp->ca_certificate_pem : NULL, ca_pem, err, errlen);
    if (resp)
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    return st;
}

grpc_status_code egress_client_set_policy(struct egress_client *ec, const char *sandbox_id,
                                          const Airlock__Egress__V1__Policy *policy,
                                          const char *project_id, char **ca_pem, char *err,
                                          size_t errlen)
{
    Airlock__Egress__V1__Policy empty;
    Airlock__Egress__V1__SetPolicyRequest req = AIRLOCK__EGRESS__V1__SET_POLICY_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
    req.policy = policy_or_deny_all(policy, &empty);
    req.project_id = (char *)(project_id ? project_id : "");
    Airlock__Egress__V1__SetPolicyResponse *resp = NULL;
    grpc_status_code st = egress_call_for(
        ec, EGRESS_CLIENT_METHOD("SetPolicy"), &req.base,
        &airlock__egress__v1__set_policy_response__descriptor, (ProtobufCMessage **)&resp, err,
        errlen);
    st = keep_ca(st, resp ? resp->ca_certificate_pem : NULL, ca_pem, err, errlen);
    if (resp)
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    return st;
}

grpc_status_code egress_client_detach(struct egress_client *ec, const char *sandbox_id, char *err,
                                      size_t errlen)
{
    Airlock__Egress__V1__DetachSandboxRequest req =
        AIRLOCK__EGRESS__V1__DETACH_SANDBOX_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
    grpc_status_code st =
        egress_call(ec, EGRESS_CLIENT_METHOD("DetachSandbox"), &req.base,
                    &airlock__egress__v1__detach_sandbox_response__descriptor, err, errlen);
    return st == GRPC_STATUS_NOT_FOUND ? GRPC_STATUS_OK : st;
}

grpc_status_code egress_client_connections(struct egress_client *ec, const char *sandbox_id,
                                           uint64_t after_seq,
                                           Airlock__Egress__V1__ListConnectionsResponse **out,
                                           char *err, size_t errlen)
{
    Airlock__Egress__V1__ListConnectionsRequest req =
        AIRLOCK__EGRESS__V1__LIST_CONNECTIONS_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
    req.after_seq = after_seq;
    *out = NULL;
    return egress_call_for(ec, EGRESS_CLIENT_METHOD("ListConnections"), &req.base,
                           &airlock__egress__v1__list_connections_response__descriptor,
                           (ProtobufCMessage **)out, err, errlen);
}

grpc_status_code egress_client_status(struct egress_client *ec, int timeout_ms, char *instance_id,
                                      char *err, size_t errlen)
{
    Airlock__Egress__V1__GetStatusRequest req = AIRLOCK__EGRESS__V1__GET_STATUS_REQUEST__INIT;
    Airlock__Egress__V1__GetStatusResponse *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(ec->ch, EGRESS_CLIENT_METHOD("GetStatus"), &req.base,
                                    &airlock__egress__v1__get_status_response__descriptor,
                                    (ProtobufCMessage **)&resp, &details, timeout_ms);
    if (st == GRPC_STATUS_OK)
        snprintf(instance_id, 33, "%s", resp->instance_id);
    else
        snprintf(err, errlen, "egress GetStatus: %s: %s", rpc_status_name(st),
                 details ? details : "");
    if (resp)
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    free(details);
    return st;
}
