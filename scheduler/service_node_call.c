/* What the sandbox operations share (service_node_call.h): the caller's
 * sandbox checked against the state machine, and one request to its
 * node. A leaf: the service_*.c files call it and it calls none of them. */
#include "service_node_call.h"

#include <stdio.h>

#include "nodes.h"
#include "sandbox_store.h"

const char *service_actor(const char *actor)
{
    return actor && *actor ? actor : "scheduler";
}

int service_sandbox_for_op(struct scheduler *s, const char *project_id, const char *id,
                           enum sandbox_op op, PGresult **row, struct sandbox_plan *plan,
                           enum sandbox_state *from, struct airlock_error *e)
{
    int rc = store_sandbox_get(&s->db, project_id, id, row, e);
    if (rc < 0)
        return rc;
    if (sandbox_state_parse(store_sandbox_state(*row, 0), from) < 0) {
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "sandbox %s has an unknown state %s", id,
                               store_sandbox_state(*row, 0));
    } else if (sandbox_op_plan(op, *from, id, plan, AIRLOCK_ERROR_MSG(e)) < 0) {
        rc = airlock_error_classify(e, AIRLOCK_ERR_STATE);
    } else if (!*store_sandbox_node(*row, 0)) {
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE, "sandbox %s is on no node", id);
    }
    if (rc < 0) {
        PQclear(*row);
        *row = NULL;
    }
    return rc;
}

int service_call_node(struct scheduler *s, PGresult *row, node_op op, const ProtobufCMessage *req,
                      Airlock__Node__V1__NodeReply **wanted, struct airlock_error *e)
{
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc = nodes_call(s, store_sandbox_node(row, 0), op, req, s->cfg.node_timeout_ms, &reply, e);
    if (wanted)
        *wanted = reply;
    else if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    return rc;
}
