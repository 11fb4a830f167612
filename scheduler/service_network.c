/* SetSandboxNetwork: the policy (egress.proto's, as the gateway sends it)
 * goes to the node, then into the sandbox's row (sandboxes.network, JSON). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rpc_client.h"
#include "scheduler_service.h"

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
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    /* Checked before the node gets it: what the row cannot hold is refused. */
    char *policy_text = NULL;
    if (!req->network)
        snprintf(err, sizeof(err), "network: required");
    else
        policy_text = store_policy_text(req->network, err, sizeof(err));
    if (!policy_text)
        goto out;
    st = service_sandbox_for_op(s, req->project_id, req->id, SANDBOX_OP_SET_NETWORK, &row, &plan,
                                &from, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    Airlock__Vmhost__V1__SetSandboxPolicyRequest nreq =
        AIRLOCK__VMHOST__V1__SET_SANDBOX_POLICY_REQUEST__INIT;
    nreq.id = req->id;
    nreq.policy = req->network;
    st = service_call_node(s, row, NODE_OP(SET_POLICY), &nreq.base, NULL, err, sizeof(err));
    if (st != GRPC_STATUS_OK)
        goto out;
    PQclear(row);
    row = NULL;
    st = store_sandbox_set_network(&s->db, req->project_id, req->id, policy_text, err,
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
    free(policy_text);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
