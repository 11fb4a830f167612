/* The NodeReply every node request gets (nats_agent_ops.h): a leaf the
 * operation files and the agent share, so neither calls back into the
 * other. */
#include <stdlib.h>

#include "nats_agent_ops.h"
#include "service.h"

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

void node_reply_sandboxes(natsConnection *nc, natsMsg *msg, struct sandbox **sbs, size_t n,
                          bool as_forks)
{
    struct sandbox_snapshot *views = calloc(n ? n : 1, sizeof(*views));
    Airlock__Vmhost__V1__Sandbox **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    if (!views || !ptrs) {
        node_reply_status(nc, msg, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        sandbox_snapshot_take(sbs[i], &views[i]);
        ptrs[i] = &views[i].msg;
    }
    Airlock__Node__V1__NodeReply r = AIRLOCK__NODE__V1__NODE_REPLY__INIT;
    r.message = "";
    if (as_forks) {
        r.n_forks = n;
        r.forks = ptrs;
    } else {
        r.n_sandboxes = n;
        r.sandboxes = ptrs;
    }
    node_reply_send(nc, msg, &r);
out:
    for (size_t i = 0; i < n; i++)
        sandbox_put(sbs[i]);
    free(views);
    free(ptrs);
}
