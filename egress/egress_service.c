#include "egress_service.h"

#include <stdio.h>
#include <stdlib.h>

#include "cidr.h"
#include "egress.pb-c.h"
#include "rpc_err.h"

/* The response and OK, or e's status and message. */
static void finish(struct rpc_call *call, int rc, const struct airlock_error *e,
                   const ProtobufCMessage *ok_response)
{
    if (rc < 0)
        rpc_call_finish_error(call, e);
    else if (rpc_call_send(call, ok_response) == 0)
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
}

/* The request's policy, or INVALID naming what is wrong with it. */
static int policy_from_request(const Airlock__Egress__V1__Policy *msg, struct egress_policy **out,
                               struct airlock_error *e)
{
    *out = egress_policy_from_proto(msg, e->message, sizeof(e->message));
    return *out ? 0 : airlock_error_classify(e, AIRLOCK_ERR_INVALID);
}

static void handle_get_status(struct rpc_call *call, void *ctx)
{
    Airlock__Egress__V1__GetStatusRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__egress__v1__get_status_request__descriptor);
    if (!req)
        return;
    char instance_id[33];
    unsigned sandboxes;
    egress_status(ctx, instance_id, &sandboxes);
    Airlock__Egress__V1__GetStatusResponse resp = AIRLOCK__EGRESS__V1__GET_STATUS_RESPONSE__INIT;
    resp.instance_id = instance_id;
    resp.sandboxes = sandboxes;
    finish(call, 0, NULL, &resp.base);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_attach(struct rpc_call *call, void *ctx)
{
    Airlock__Egress__V1__AttachSandboxRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__egress__v1__attach_sandbox_request__descriptor);
    if (!req)
        return;
    struct airlock_error e = { 0 };
    struct egress_policy *p;
    char *ca_pem = NULL;
    int rc = policy_from_request(req->policy, &p, &e);
    if (rc == 0)
        rc = egress_attach(ctx, req->sandbox_id, req->netns_path, p, req->project_id, &ca_pem,
                           &e);
    Airlock__Egress__V1__AttachSandboxResponse resp =
        AIRLOCK__EGRESS__V1__ATTACH_SANDBOX_RESPONSE__INIT;
    if (ca_pem)
        resp.ca_certificate_pem = ca_pem;
    finish(call, rc, &e, &resp.base);
    free(ca_pem);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_set_policy(struct rpc_call *call, void *ctx)
{
    Airlock__Egress__V1__SetPolicyRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__egress__v1__set_policy_request__descriptor);
    if (!req)
        return;
    struct airlock_error e = { 0 };
    struct egress_policy *p;
    char *ca_pem = NULL;
    int rc = policy_from_request(req->policy, &p, &e);
    if (rc == 0)
        rc = egress_set_policy(ctx, req->sandbox_id, p, req->project_id, &ca_pem, &e);
    Airlock__Egress__V1__SetPolicyResponse resp = AIRLOCK__EGRESS__V1__SET_POLICY_RESPONSE__INIT;
    resp.ca_certificate_pem = ca_pem ? ca_pem : "";
    finish(call, rc, &e, &resp.base);
    free(ca_pem);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_detach(struct rpc_call *call, void *ctx)
{
    Airlock__Egress__V1__DetachSandboxRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__egress__v1__detach_sandbox_request__descriptor);
    if (!req)
        return;
    struct airlock_error e = { 0 };
    int rc = egress_detach(ctx, req->sandbox_id, &e);
    Airlock__Egress__V1__DetachSandboxResponse resp =
        AIRLOCK__EGRESS__V1__DETACH_SANDBOX_RESPONSE__INIT;
    finish(call, rc, &e, &resp.base);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void handle_list_connections(struct rpc_call *call, void *ctx)
{
    Airlock__Egress__V1__ListConnectionsRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__egress__v1__list_connections_request__descriptor);
    if (!req)
        return;
    struct airlock_error e = { 0 };
    struct conn_entry *entries = NULL;
    size_t n = 0;
    int rc = egress_connections(ctx, req->sandbox_id, req->after_seq, &entries, &n, &e);
    Airlock__Egress__V1__Connection *conns = calloc(n ? n : 1, sizeof(*conns));
    Airlock__Egress__V1__Connection **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    char (*addrs)[16] = calloc(n ? n : 1, sizeof(*addrs));
    if (rc == 0 && (!conns || !ptrs || !addrs))
        rc = airlock_error_set(&e, AIRLOCK_ERR_INTERNAL, "out of memory");
    Airlock__Egress__V1__ListConnectionsResponse resp =
        AIRLOCK__EGRESS__V1__LIST_CONNECTIONS_RESPONSE__INIT;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            Airlock__Egress__V1__Connection *c = &conns[i];
            airlock__egress__v1__connection__init(c);
            c->seq = entries[i].seq;
            c->time_unix_ms = entries[i].time_unix_ms;
            c->protocol = (char *)entries[i].protocol;
            c->dest_ip = entries[i].addr ? (char *)addr_format(entries[i].addr, addrs[i]) : "";
            c->dest_port = entries[i].port;
            c->name = entries[i].name;
            c->decision = entries[i].allowed ? AIRLOCK__EGRESS__V1__DECISION__DECISION_ALLOW
                                             : AIRLOCK__EGRESS__V1__DECISION__DECISION_DENY;
            c->reason = (char *)entries[i].reason;
            c->bytes_sent = entries[i].bytes_sent;
            c->bytes_received = entries[i].bytes_received;
            ptrs[i] = c;
        }
        resp.connections = ptrs;
        resp.n_connections = n;
    }
    finish(call, rc, &e, &resp.base);
    free(addrs);
    free(ptrs);
    free(conns);
    free(entries);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* With mutual TLS only the vmhost of egress's own node drives it. */
#define OWN_VMHOST (PEER_VMHOST | RPC_CALLER_SAME_NODE)
static const struct rpc_method egress_methods[] = {
    { EGRESS_METHOD("GetStatus"), handle_get_status, OWN_VMHOST },
    { EGRESS_METHOD("AttachSandbox"), handle_attach, OWN_VMHOST },
    { EGRESS_METHOD("SetPolicy"), handle_set_policy, OWN_VMHOST },
    { EGRESS_METHOD("DetachSandbox"), handle_detach, OWN_VMHOST },
    { EGRESS_METHOD("ListConnections"), handle_list_connections, OWN_VMHOST },
};

struct rpc_server *egress_service_start(struct egress *eg, const char *addr,
                                        const struct rpc_security *sec, char *err, size_t errlen)
{
    return rpc_server_start(addr, egress_methods, sizeof(egress_methods) / sizeof(*egress_methods),
                            eg, sec, err, errlen);
}
