/* The NodeReply every node request gets (nats_agent_ops.h): a leaf the
 * operation files and the agent share, so neither calls back into the
 * other. */
#include <stdlib.h>

#include "nats_agent_ops.h"

void node_reply_send(natsConnection *nc, natsMsg *msg, const Airlock__Node__V1__NodeReply *r)
{
    size_t len = airlock__node__v1__node_reply__get_packed_size(r);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return; /* the scheduler's request times out and is retried */
    airlock__node__v1__node_reply__pack(r, buf);
    natsConnection_Publish(nc, natsMsg_GetReply(msg), buf, (int)len);
    free(buf);
}

void node_reply_status(natsConnection *nc, natsMsg *msg, grpc_status_code st, const char *err)
{
    Airlock__Node__V1__NodeReply r = AIRLOCK__NODE__V1__NODE_REPLY__INIT;
    r.status = st;
    r.message = (char *)(st == GRPC_STATUS_OK ? "" : err);
    node_reply_send(nc, msg, &r);
}

void node_reply_error(natsConnection *nc, natsMsg *msg, const struct airlock_error *e)
{
    node_reply_status(nc, msg, airlock_error_status(e), e->message);
}

void node_reply_answer(natsConnection *nc, natsMsg *msg, enum op_answer_kind kind,
                       const struct op_answer *a)
{
    struct op_encoded e;
    if (op_answer_encode(a, &e) < 0) {
        node_reply_status(nc, msg, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    Airlock__Node__V1__NodeReply r = AIRLOCK__NODE__V1__NODE_REPLY__INIT;
    r.message = "";
    switch (kind) {
    case OP_ANSWER_SANDBOX:
        r.sandbox = e.sandboxes[0];
        break;
    case OP_ANSWER_SANDBOXES:
        r.n_sandboxes = e.n_sandboxes;
        r.sandboxes = e.sandboxes;
        break;
    case OP_ANSWER_FORKS:
        r.n_forks = e.n_sandboxes;
        r.forks = e.sandboxes;
        break;
    case OP_ANSWER_CHECKPOINT:
        r.checkpoint = e.checkpoints[0];
        break;
    case OP_ANSWER_MIGRATION:
        r.migration = &e.migration;
        break;
    case OP_ANSWER_VOLUME:
        r.volume = &e.volume;
        break;
    case OP_ANSWER_EMPTY:
    case OP_ANSWER_CHECKPOINTS: /* no node operation lists checkpoints */
        break;
    }
    node_reply_send(nc, msg, &r);
    op_encoded_free(&e);
}
