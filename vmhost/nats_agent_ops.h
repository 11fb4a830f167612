/* Inside the NATS agent: the reply every node request gets, and the one
 * operation it serves itself (the rest are ops.h's). */
#ifndef AIRLOCK_VMHOST_NATS_AGENT_OPS_H
#define AIRLOCK_VMHOST_NATS_AGENT_OPS_H

#include <grpc/status.h>
#include <nats/nats.h>
#include <stdbool.h>

#include "node.pb-c.h"
#include "ops.h"
#include "rpc_err.h"
#include "vmhost.h"

#define UNPACK(type, msg) \
    type##__unpack(NULL, (size_t)natsMsg_GetDataLength(msg), (const uint8_t *)natsMsg_GetData(msg))

/* Packs r and publishes it on msg's reply subject. */
void node_reply_send(natsConnection *nc, natsMsg *msg, const Airlock__Node__V1__NodeReply *r);
/* A reply with only a status (and err unless OK). */
void node_reply_status(natsConnection *nc, natsMsg *msg, grpc_status_code st, const char *err);
/* A failure's reply: e's status and message (common/rpc, rpc_err.h). */
void node_reply_error(natsConnection *nc, natsMsg *msg, const struct airlock_error *e);
/* Answers a's sandboxes and checkpoint (ops.h), as kind says, with
 * status OK. */
void node_reply_answer(natsConnection *nc, natsMsg *msg, enum op_answer_kind kind,
                       const struct op_answer *a);

/* An operation whose answer is not one reply (template_build's events),
 * served by the agent itself. */
typedef void (*node_op_fn)(struct vmhost *vh, natsConnection *nc, natsMsg *msg);

/* nats_agent_template.c */
void node_op_template_build(struct vmhost *vh, natsConnection *nc, natsMsg *msg);

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
