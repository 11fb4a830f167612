/* The nodes as REST and the public gRPC API share them
 * (protos/airlock/v1/nodes.proto): the scheduler's ListNodes, GetNode,
 * DrainNode and UndrainNode, whose answers are the public messages. For
 * the admin key only: its routes and methods say so (routes.c,
 * grpc_api.c). 0, or -1 with e, as sandbox_access.h's functions; *out:
 * free with protobuf_c_message_free_unpacked. */
#ifndef AIRLOCK_GATEWAY_NODE_ACCESS_H
#define AIRLOCK_GATEWAY_NODE_ACCESS_H

#include "airlock/v1/nodes.pb-c.h"
#include "sandbox_access.h"

int gw_nodes_list(struct gateway *gw, const struct gw_caller *c,
                  Airlock__V1__ListNodesResponse **out, struct airlock_error *e);

/* What can be done to one node (node_access.c names each's scheduler
 * method). */
enum gw_node_call { GW_NODE_GET, GW_NODE_DRAIN, GW_NODE_UNDRAIN };

/* The call on node id, answered with the node as it is then (not found
 * naming an unknown id; a refused drain: state, nothing changed). */
int gw_node_call(struct gateway *gw, const struct gw_caller *c, enum gw_node_call call,
                 const char *id, Airlock__V1__Node **out, struct airlock_error *e);

#endif
