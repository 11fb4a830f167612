/* The node calls the sandbox operations share (scheduler_service.h): the
 * caller's sandbox checked against the state machine, and one request to
 * its node. A leaf: the service_*.c files call it and it calls none of them. */
#include <stdio.h>

#include "nodes.h"
#include "sandbox_store.h"
#include "scheduler_service.h"

grpc_status_code service_sandbox_for_op(struct scheduler *s, const char *project_id, const char *id,
                                       enum sandbox_op op, PGresult **row,
                                       struct sandbox_plan *plan, enum sandbox_state *from,
                                       char *err, size_t errlen)
{
    grpc_status_code st = store_sandbox_get(&s->db, project_id, id, row, err, errlen);
    if (st != GRPC_STATUS_OK)
        return st;
    if (sandbox_state_parse(store_sandbox_state(*row, 0), from) < 0) {
        snprintf(err, errlen, "sandbox %s has an unknown state %s", id, store_sandbox_state(*row, 0));
        st = GRPC_STATUS_INTERNAL;
    } else if (sandbox_op_plan(op, *from, id, plan, err, errlen) < 0) {
        st = GRPC_STATUS_FAILED_PRECONDITION;
    } else if (!*store_sandbox_node(*row, 0)) {
        snprintf(err, errlen, "sandbox %s is on no node", id);
        st = GRPC_STATUS_FAILED_PRECONDITION;
    }
    if (st != GRPC_STATUS_OK) {
        PQclear(*row);
        *row = NULL;
    }
    return st;
}

grpc_status_code service_call_node(struct scheduler *s, PGresult *row, node_op op,
                                  const ProtobufCMessage *req, Airlock__Node__V1__NodeReply **wanted,
                                  char *err, size_t errlen)
{
    Airlock__Node__V1__NodeReply *reply = NULL;
    grpc_status_code st = nodes_call(s, store_sandbox_node(row, 0), op, req,
                                     s->cfg.node_timeout_ms, &reply, err, errlen);
    if (wanted)
        *wanted = reply;
    else if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    return st;
}
