/* Service airlock.v1.Nodes (protos/airlock/v1/nodes.proto): ListNodes,
 * GetNode, DrainNode, UndrainNode, REST's /v1/nodes. The scheduler
 * answers the public messages itself, relayed as they are. The admin key
 * only (grpc_api.c). */
#include "grpc_call.h"
#include "node_access.h"

static void reply_upstream(struct grpc_request *r, int rc, ProtobufCMessage *msg,
                           const struct airlock_error *e)
{
    if (rc == 0)
        grpc_reply(r, msg);
    else
        grpc_fail_error(r, e);
    if (msg)
        protobuf_c_message_free_unpacked(msg, NULL);
}

void grpc_list_nodes(struct grpc_request *r)
{
    Airlock__V1__ListNodesResponse *list;
    struct airlock_error e;
    int rc = gw_nodes_list(r->gw, &r->caller, &list, &e);
    reply_upstream(r, rc, list ? &list->base : NULL, &e);
}

static void node_call(struct grpc_request *r, enum gw_node_call call)
{
    const Airlock__V1__NodeRequest *in = (const void *)r->msg;
    Airlock__V1__Node *node;
    struct airlock_error e;
    int rc = gw_node_call(r->gw, &r->caller, call, in->id, &node, &e);
    reply_upstream(r, rc, node ? &node->base : NULL, &e);
}

void grpc_get_node(struct grpc_request *r)
{
    node_call(r, GW_NODE_GET);
}

void grpc_drain_node(struct grpc_request *r)
{
    node_call(r, GW_NODE_DRAIN);
}

void grpc_undrain_node(struct grpc_request *r)
{
    node_call(r, GW_NODE_UNDRAIN);
}
