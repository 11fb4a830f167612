/* Inside the NATS agent: the reply every node request gets, and the
 * checkpoint ops (nats_agent_checkpoint.c) and the controllers' ops
 * (nats_agent_controller.c) next to the lifecycle ones in nats_agent.c. */
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

/* Serves checkpoint, checkpoint_delete, restore and fork; false when op is
 * none of them. */
bool node_checkpoint_op(struct vmhost *vh, natsConnection *nc, natsMsg *msg, const char *op);

/* Serves list and set_pool; false when op is neither. */
bool node_controller_op(struct vmhost *vh, natsConnection *nc, natsMsg *msg, const char *op);

/* Serves template_build and template_delete (nats_agent_template.c);
 * false when op is neither. */
bool node_template_op(struct vmhost *vh, natsConnection *nc, natsMsg *msg, const char *op);

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
