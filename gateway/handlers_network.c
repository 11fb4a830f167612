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
    struct airlock_error e;
    if (json_input_object(r->body.data, r->body.len, &network, &e) < 0)
        return reply_airlock_error(r, &e);
    Airlock__Egress__V1__Policy policy;
    if (policy_json_to_proto(network, "network", &policy, AIRLOCK_ERROR_MSG(&e)) < 0) {
        json_decref(network);
        return reply_error(r, 400, "invalid_argument", "%s", e.message);
    }
    struct gw_caller caller = gw_request_caller(r);
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    int set = gw_sandbox_set_network(r->gw, &caller, r->path_id, &policy, &sb, &e);
    policy_json_release(&policy);
    json_decref(network);
    enum MHD_Result rc;
    if (set < 0) {
        rc = reply_airlock_error(r, &e);
    } else {
        json_t *stored = sb->network
                             ? policy_json_from_proto(sb->network, "network", AIRLOCK_ERROR_MSG(&e))
                             : NULL;
        rc = reply_json(r, 200, json_pack("{s:s,s:o}", "id", sb->id, "network",
                                          stored ? stored : json_object()));
    }
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}
