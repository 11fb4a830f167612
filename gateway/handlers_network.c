/* A sandbox's egress policy ("network", docs/api.md): checked for shape
 * in the gateway (policy_json_to_proto), judged by egress on the
 * sandbox's node, recorded by the scheduler. */
#include <stdlib.h>

#include "policy_json.h"
#include "reply.h"
#include "route_handlers.h"

/* PUT /v1/sandboxes/{id}/network: the body is the whole new policy. */
enum MHD_Result handle_sandbox_network_put(struct gw_request *r)
{
    json_t *network;
    char err[1024];
    if (json_input_object(r->body.data, r->body.len, &network, err, sizeof(err)) < 0)
        return reply_error(r, 400, "invalid_argument", "%s", err);
    Airlock__Egress__V1__Policy policy;
    if (policy_json_to_proto(network, "network", &policy, err, sizeof(err)) < 0) {
        json_decref(network);
        return reply_error(r, 400, "invalid_argument", "%s", err);
    }
    struct gw_caller caller = gw_request_caller(r);
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    grpc_status_code st = gw_sandbox_set_network(r->gw, &caller, r->path_id, &policy, &sb, err,
                                                 sizeof(err));
    policy_json_release(&policy);
    json_decref(network);
    enum MHD_Result rc;
    if (st != GRPC_STATUS_OK) {
        rc = reply_grpc_error(r, st, err);
    } else {
        json_t *stored = sb->network ? policy_json_from_proto(sb->network, "network", err,
                                                              sizeof(err))
                                     : NULL;
        rc = reply_json(r, 200, json_pack("{s:s,s:o}", "id", sb->id, "network",
                                          stored ? stored : json_object()));
    }
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}
