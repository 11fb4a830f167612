/* Inside the NATS agent: the reply every node request gets, and the node
 * operations, one file per group (sandbox, checkpoint, controller,
 * template), listed once in nats_agent.c's table. */
#ifndef AIRLOCK_VMHOST_NATS_AGENT_OPS_H
#define AIRLOCK_VMHOST_NATS_AGENT_OPS_H

#include <grpc/status.h>
#include <nats/nats.h>
#include <stdbool.h>

#include "node.pb-c.h"
#include "vmhost.h"

#define UNPACK(type, msg) \
    type##__unpack(NULL, (size_t)natsMsg_GetDataLength(msg), (const uint8_t *)natsMsg_GetData(msg))

/* Packs r and publishes it on msg's reply subject. */
void node_reply_send(natsConnection *nc, natsMsg *msg, const Airlock__Node__V1__NodeReply *r);
/* A reply with only a status (and err unless OK). */
void node_reply_status(natsConnection *nc, natsMsg *msg, grpc_status_code st, const char *err);
/* Answers with the views of sbs (as forks, or as the node's sandboxes) and
 * drops their references. */
void node_reply_sandboxes(natsConnection *nc, natsMsg *msg, struct sandbox **sbs, size_t n,
                          bool as_forks);

/* One node operation: unpacks msg's request, serves it, answers on msg's
 * reply subject. The table of them is nats_agent.c's node_ops. */
typedef void (*node_op_fn)(struct vmhost *vh, natsConnection *nc, natsMsg *msg);

/* nats_agent_sandbox.c */
void node_op_create(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_get(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_delete(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_pause(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_resume(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_suspend(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_set_policy(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
/* nats_agent_checkpoint.c */
void node_op_checkpoint(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_checkpoint_delete(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_restore(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_fork(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
/* nats_agent_controller.c */
void node_op_list(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_set_pool(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
/* nats_agent_template.c */
void node_op_template_build(struct vmhost *vh, natsConnection *nc, natsMsg *msg);
void node_op_template_delete(struct vmhost *vh, natsConnection *nc, natsMsg *msg);

/* A heartbeat's templates and warm pools (every template version's), with
 * references held until heartbeat_templates_free. */
struct heartbeat_templates {
    struct template_version **all;
    size_t n;
    char **refs;
    Airlock__Node__V1__WarmPool *pools;
    Airlock__Node__V1__WarmPool **pool_ptrs;
};
void heartbeat_templates_fill(struct vmhost *vh, Airlock__Node__V1__Heartbeat *hb,
                              struct heartbeat_templates *h);
void heartbeat_templates_free(struct heartbeat_templates *h);

#endif
