/* ListNodes, GetNode, DrainNode and UndrainNode: the nodes as the admin
 * sees them (airlock/v1/nodes.proto) and their drain state
 * (node_state.h). Only the admin key reaches them: the gateway decides. */
#include <stdio.h>

#include "log.h"
#include "node_drain.h"
#include "node_store.h"
#include "rpc_err.h"
#include "scheduler.pb-c.h"
#include "scheduler_service.h"

/* Answers with node_id (NULL: every node) as it is now: a Node, or a
 * ListNodesResponse. -1 with e when it cannot be read (nothing answered). */
static int reply_nodes(struct rpc_call *call, struct scheduler *s, const char *node_id,
                       struct airlock_error *e)
{
    struct node_msgs read;
    int rc = store_nodes_read(&s->db, node_id, s->cfg.node_dead_after_s, &read, e);
    if (rc == 0 && node_id) {
        rpc_call_reply(call, &read.nodes[0].msg.base);
    } else if (rc == 0) {
        Airlock__V1__ListNodesResponse resp = AIRLOCK__V1__LIST_NODES_RESPONSE__INIT;
        resp.n_nodes = read.n;
        resp.nodes = read.ptrs;
        rpc_call_reply(call, &resp.base);
    }
    node_msgs_free(&read);
    return rc;
}

void service_nodes_list(struct rpc_call *call, void *ctx)
{
    Airlock__Scheduler__V1__ListNodesRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__list_nodes_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    if (reply_nodes(call, ctx, NULL, &e) < 0)
        rpc_call_finish_error(call, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_node_get(struct rpc_call *call, void *ctx)
{
    Airlock__Scheduler__V1__NodeRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__node_ref__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    int rc = *req->id ? reply_nodes(call, ctx, req->id, &e)
                      : airlock_error_set(&e, AIRLOCK_ERR_INVALID, "id: required");
    if (rc < 0)
        rpc_call_finish_error(call, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* Moves node_id by op (drain or undrain) as node_drain_next says: nothing
 * when it is there already; a drain keeps a live active node, and a
 * draining node takes its first drain_step at once (drained when empty). */
static int node_drain_op(struct scheduler *s, const Airlock__Scheduler__V1__NodeRef *req,
                         enum node_drain_op op, struct airlock_error *e)
{
    if (!*req->id)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "id: required");
    struct node_msgs read;
    int rc = store_nodes_read(&s->db, req->id, s->cfg.node_dead_after_s, &read, e);
    enum node_drain from = rc == 0 ? read.nodes[0].drain : NODE_ACTIVE;
    bool holds = rc == 0 && read.nodes[0].holds;
    node_msgs_free(&read);
    if (rc < 0)
        return rc;
    enum node_drain to = node_drain_next(op, from, holds);
    if (to != from) {
        rc = store_node_drain_set(&s->db, req->id, from, to, service_actor(req->actor),
                                  from == NODE_ACTIVE, s->cfg.node_dead_after_s, e);
        if (rc < 0)
            return rc;
        log_info("node drain state", "request=%s node=%s op=%s from=%s to=%s actor=%s",
                 req->request_id, req->id, node_drain_op_name(op), node_drain_name(from),
                 node_drain_name(to), service_actor(req->actor));
    }
    if (to == NODE_DRAINING && drain_step(s, req->id, false, e) < 0)
        log_warn("drain step failed", "node=%s error=\"%s\"", req->id, e->message);
    return 0;
}

static void node_drain_call(struct rpc_call *call, struct scheduler *s, enum node_drain_op op)
{
    Airlock__Scheduler__V1__NodeRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__node_ref__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    int rc = node_drain_op(s, req, op, &e);
    if (rc == 0)
        rc = reply_nodes(call, s, req->id, &e);
    if (rc < 0) {
        log_info("node drain refused", "request=%s node=%s op=%s status=%s error=\"%s\"",
                 req->request_id, req->id, node_drain_op_name(op), airlock_error_status_name(&e),
                 e.message);
        rpc_call_finish_error(call, &e);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_node_drain(struct rpc_call *call, void *ctx)
{
    node_drain_call(call, ctx, NODE_OP_DRAIN);
}

void service_node_undrain(struct rpc_call *call, void *ctx)
{
    node_drain_call(call, ctx, NODE_OP_UNDRAIN);
}
