/* SetSandboxNetwork and the stored policy's way to the node: the scheduler
 * keeps the policy as JSON (sandboxes.network) and hands nodes egress.proto's
 * Policy built from it. */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "policy_json.h"
#include "rpc_client.h"
#include "service.h"

grpc_status_code node_policy_load(struct node_policy *p, const char *text, char *err, size_t errlen)
{
    p->json = NULL;
    airlock__egress__v1__policy__init(&p->msg);
    if (!*text)
        return GRPC_STATUS_OK;
    json_error_t jerr;
    p->json = json_loads(text, 0, &jerr);
    if (!p->json) {
        snprintf(err, errlen, "network: not JSON: %s", jerr.text);
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    if (policy_json_to_proto(p->json, "network", &p->msg, err, errlen) < 0) {
        json_decref(p->json);
        p->json = NULL;
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    return GRPC_STATUS_OK;
}

Airlock__Egress__V1__Policy *node_policy_msg(struct node_policy *p)
{
    return p->json ? &p->msg : NULL;
}

void node_policy_free(struct node_policy *p)
{
    policy_json_release(&p->msg);
    json_decref(p->json);
    p->json = NULL;
}

/* The node first, the row after: a policy egress refuses (INVALID_ARGUMENT
 * naming the field) is never recorded. */
void service_sandbox_set_network(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__SetSandboxNetworkRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__set_sandbox_network_request__descriptor);
    if (!req)
        return;
    PGresult *row = NULL;
    char err[2048];
    struct sandbox_plan plan;
    enum sandbox_state from;
    struct node_policy policy;
    grpc_status_code st = node_policy_load(&policy, req->network_json, err, sizeof(err));
    if (st == GRPC_STATUS_OK && !node_policy_msg(&policy)) {
        snprintf(err, sizeof(err), "network: required");
        st = GRPC_STATUS_INVALID_ARGUMENT;
    }
    if (st != GRPC_STATUS_OK)
        goto out;
    st = service_sandbox_for_op(s, req->project_id, req->id, SANDBOX_OP_SET_NETWORK, &row, &plan,
                                &from, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    Airlock__Vmhost__V1__SetSandboxPolicyRequest nreq =
        AIRLOCK__VMHOST__V1__SET_SANDBOX_POLICY_REQUEST__INIT;
    nreq.id = req->id;
    nreq.policy = node_policy_msg(&policy);
    st = service_call_node(s, row, "set_policy", &nreq.base, NULL, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    PQclear(row);
    row = NULL;
    st = store_sandbox_set_network(&s->db, req->project_id, req->id, req->network_json, err,
                                   sizeof(err));
    if (st == GRPC_STATUS_OK)
        st = store_sandbox_get(&s->db, req->project_id, req->id, &row, err, sizeof(err));
out:
    if (st == GRPC_STATUS_OK) {
        log_info("sandbox network set", "request=%s sandbox=%s", req->request_id, req->id);
        service_reply_sandbox(call, row);
    } else {
        log_info("sandbox network refused", "request=%s sandbox=%s status=%s error=\"%s\"",
                 req->request_id, req->id, rpc_status_name(st), err);
        rpc_call_finish(call, st, err);
    }
    node_policy_free(&policy);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
