#include "node_access.h"

#include <string.h>

static const char *const node_methods[] = {
    [GW_NODE_GET] = SCHEDULER_METHOD("GetNode"),
    [GW_NODE_DRAIN] = SCHEDULER_METHOD("DrainNode"),
    [GW_NODE_UNDRAIN] = SCHEDULER_METHOD("UndrainNode"),
};

int gw_nodes_list(struct gateway *gw, const struct gw_caller *c,
                  Airlock__V1__ListNodesResponse **out, struct airlock_error *e)
{
    *out = NULL;
    Airlock__Scheduler__V1__ListNodesRequest req = AIRLOCK__SCHEDULER__V1__LIST_NODES_REQUEST__INIT;
    req.request_id = (char *)c->request_id;
    return gw_unary(gw->scheduler, SCHEDULER_METHOD("ListNodes"), &req.base,
                    &airlock__v1__list_nodes_response__descriptor, (ProtobufCMessage **)out,
                    GW_SCHEDULER_TIMEOUT_MS, e);
}

int gw_node_call(struct gateway *gw, const struct gw_caller *c, enum gw_node_call call,
                 const char *id, Airlock__V1__Node **out, struct airlock_error *e)
{
    *out = NULL;
    /* Node ids are NATS subject tokens (scripts/nats-users.sh). */
    if (!*id || strlen(id) > 128)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "id: required, at most 128 bytes");
    Airlock__Scheduler__V1__NodeRef req = AIRLOCK__SCHEDULER__V1__NODE_REF__INIT;
    req.request_id = (char *)c->request_id;
    req.actor = (char *)c->key_id;
    req.id = (char *)id;
    return gw_unary(gw->scheduler, node_methods[call], &req.base, &airlock__v1__node__descriptor,
                    (ProtobufCMessage **)out, GW_SCHEDULER_TIMEOUT_MS, e);
}
