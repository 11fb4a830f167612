/* SetSandboxNetwork, stages of service_op.c's pipeline: the policy
 * (egress.proto's, as the gateway sends it) goes to the node, then into
 * the sandbox's row (sandboxes.network, JSON). */
#include <stdio.h>

#include "sandbox_store.h"
#include "scheduler_service.h"
#include "service_op.h"

static const Airlock__Scheduler__V1__SetSandboxNetworkRequest *network_req(const struct op_run *r)
{
    return (const void *)r->req; /* the table gives SetSandboxNetwork this request */
}

/* Checked before the node gets it: what the row cannot hold is refused. */
bool network_valid(struct op_run *r)
{
    const Airlock__Scheduler__V1__SetSandboxNetworkRequest *req = network_req(r);
    if (!req->network)
        snprintf(r->err, sizeof(r->err), "network: required");
    else
        r->policy_text = store_policy_text(req->network, r->err, sizeof(r->err));
    return r->policy_text != NULL;
}

grpc_status_code network_request(struct op_run *r, union op_node_request *u)
{
    const Airlock__Scheduler__V1__SetSandboxNetworkRequest *req = network_req(r);
    u->policy.id = req->id;
    u->policy.policy = req->network;
    return GRPC_STATUS_OK;
}

/* The policy the node took recorded, answered with the sandbox as it is
 * now. */
grpc_status_code network_done(struct op_run *r)
{
    grpc_status_code st = store_sandbox_set_network(&r->s->db, r->project_id, r->sandbox_id,
                                                    r->policy_text, r->err, sizeof(r->err));
    if (st == GRPC_STATUS_OK)
        st = service_reply_sandbox_now(r->call, r->s, r->project_id, r->sandbox_id, r->err,
                                       sizeof(r->err));
    return st;
}
