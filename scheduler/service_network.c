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
        airlock_error_set(&r->err, AIRLOCK_ERR_INVALID, "network: required");
    else
        r->policy_text = store_policy_text(req->network, &r->err);
    return r->policy_text != NULL;
}

int network_request(struct op_run *r, union op_node_request *u)
{
    const Airlock__Scheduler__V1__SetSandboxNetworkRequest *req = network_req(r);
    u->policy.id = req->id;
    u->policy.policy = req->network;
    return 0;
}

/* The policy the node took recorded, answered with the sandbox as it is
 * now. */
int network_done(struct op_run *r)
{
    int rc =
        store_sandbox_set_network(&r->s->db, r->project_id, r->sandbox_id, r->policy_text, &r->err);
    if (rc == 0)
        rc = service_reply_sandbox_now(r->call, r->s, r->project_id, r->sandbox_id, &r->err);
    return rc;
}
