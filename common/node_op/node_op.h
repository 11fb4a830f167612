/* The NATS subjects of node operations (protos/node.proto, enum NodeOp):
 * airlock.node.<node>.<op>, <op> the enum value's name in lower case
 * without NODE_OP_. The scheduler names them from the enum, vmhost reads
 * them back, so a subject is spelled in one place. */
#ifndef AIRLOCK_NODE_OP_H
#define AIRLOCK_NODE_OP_H

#include <stddef.h>

#include "node.pb-c.h"

typedef Airlock__Node__V1__NodeOp node_op;

/* A template build's events (protos/node.proto TemplateBuild) go to
 * airlock.builds.<node>.<unique>.log/.done: under the node's own prefix,
 * the only one its NATS user may publish to besides its heartbeat. */
#define NODE_BUILDS_SUBJECT_PREFIX "airlock.builds."

/* NODE_OP(CREATE) for AIRLOCK__NODE__V1__NODE_OP__NODE_OP_CREATE. */
#define NODE_OP(name) AIRLOCK__NODE__V1__NODE_OP__NODE_OP_##name

/* "create" for NODE_OP_CREATE; NULL for a value the enum does not have. */
const char *node_op_name(node_op op);

/* The operation a subject's last part names; NODE_OP_UNSPECIFIED when none. */
node_op node_op_from_name(const char *name);

/* airlock.node.<node_id>.<op> in out: 0, or -1 when it does not fit or op
 * is not a NodeOp. */
int node_op_subject(const char *node_id, node_op op, char *out, size_t outlen);

#endif
