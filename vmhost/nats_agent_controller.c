/* The node's ops for the scheduler's controllers (protos/node.proto):
 * list, so reconciliation can compare the node's registry with the
 * database, and set_pool, the warm-pool target of a template. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nats_agent_ops.h"
#include "sandbox.h"
#include "service.h"
#include "template_registry.h"

void node_op_list(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    size_t n = 0;
    struct sandbox **all = sandbox_list(vh, &n);
    if (!all) { /* never an empty list instead: reconciliation would believe it */
        node_reply_status(nc, msg, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    node_reply_sandboxes(nc, msg, all, n, false);
    free(all);
}

void node_op_set_pool(struct vmhost *vh, natsConnection *nc, natsMsg *msg)
{
    Airlock__Node__V1__WarmPool *req = UNPACK(airlock__node__v1__warm_pool, msg);
    char err[512] = "set_pool: a WarmPool request";
    grpc_status_code st = GRPC_STATUS_INVALID_ARGUMENT;
    if (!req)
        goto out;
    /* "default", or a named template (its newest version, or name:N). */
    st = service_status_from_sandbox_error(
        template_set_pool(vh, req->template_, req->target, err, sizeof(err)));
out:
    node_reply_status(nc, msg, st, err);
    if (req)
        airlock__node__v1__warm_pool__free_unpacked(req, NULL);
}
