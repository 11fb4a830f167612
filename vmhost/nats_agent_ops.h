/* Inside the NATS agent: the reply every node request gets, and the
 * checkpoint ops (nats_agent_checkpoint.c) next to the lifecycle ones in
 * nats_agent.c. */
#ifndef AIRLOCK_VMHOST_NATS_AGENT_OPS_H
#define AIRLOCK_VMHOST_NATS_AGENT_OPS_H

#include <nats/nats.h>
#include <stdbool.h>

#include "node.pb-c.h"
#include "vmhost.h"

/* Packs r and publishes it on msg's reply subject. */
void node_reply_send(natsConnection *nc, natsMsg *msg, const Airlock__Node__V1__NodeReply *r);

/* Serves checkpoint, checkpoint_delete, restore and fork; false when op is
 * none of them. */
bool node_checkpoint_op(struct vmhost *vh, natsConnection *nc, natsMsg *msg, const char *op);

#endif
