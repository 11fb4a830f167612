/* A sandbox's egress policy ("network", docs/api.md): checked for shape
 * here, judged by egress on the sandbox's node, recorded by the
 * scheduler. */
#include <stdlib.h>

#include "handlers.h"
#include "policy_json.h"
#include "reply.h"

int gw_network_check(json_t *network, char *err, size_t errlen)
{
    Airlock__Egress__V1__Policy policy;
    if (policy_json_to_proto(network, "network", &policy, err, errlen) < 0)
        return -1;
    policy_json_release(&policy);
    return 0;
}

/* PUT /v1/sandboxes/{id}/network: the body is the whole new policy. */
enum MHD_Result handle_sandbox_network_put(struct gw_request *r)
{
    json_t *network;
    char err[512];
    if (json_input_object(r->body.data, r->body.len, &network, err, sizeof(err)) < 0 ||
        gw_network_check(network, err, sizeof(err)) < 0) {
        json_decref(network);
        return reply_error(r, 400, "invalid_argument", "%s", err);
    }
    char *network_json = json_dumps(network, JSON_COMPACT);
    json_decref(network);
    if (!network_json)
        return reply_error(r, 500, "internal", "out of memory");
    Airlock__Scheduler__V1__SetSandboxNetworkRequest req =
        AIRLOCK__SCHEDULER__V1__SET_SANDBOX_NETWORK_REQUEST__INIT;
    req.request_id = r->id;
    req.project_id = r->project_id;
    req.actor = r->key_id;
    req.id = r->path_id;
    req.network_json = network_json;
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(r->gw->scheduler, SCHEDULER_METHOD("SetSandboxNetwork"),
                                    &req.base, &airlock__scheduler__v1__sandbox__descriptor,
                                    (ProtobufCMessage **)&sb, &details, GW_SCHEDULER_TIMEOUT_MS);
    free(network_json);
    enum MHD_Result rc;
    if (st != GRPC_STATUS_OK) {
        rc = reply_grpc_error(r, st, details);
    } else {
        json_t *stored = json_loads(sb->network_json, 0, NULL);
        rc = reply_json(r, 200, json_pack("{s:s,s:o}", "id", sb->id, "network",
                                          stored ? stored : json_object()));
    }
    free(details);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}
