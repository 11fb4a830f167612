/* What the sandbox operations share (service_node_call.c, a leaf): the
 * actor of their transitions, the caller's sandbox checked against the
 * state machine, and one request to its node. Apart from service.h so
 * that the operations' pipeline (service_op.c) needs nothing above it. */
#ifndef AIRLOCK_SCHEDULER_SERVICE_NODE_CALL_H
#define AIRLOCK_SCHEDULER_SERVICE_NODE_CALL_H

#include <libpq-fe.h>
#include <protobuf-c/protobuf-c.h>

#include "airlock_error.h"
#include "node.pb-c.h"
#include "node_op.h"
#include "sandbox_state.h"
#include "scheduler.h"

/* The actor recorded as "who" of a transition ("scheduler" when none). */
const char *service_actor(const char *actor);

/* The caller's sandbox (row 0 of *row) if op may proceed from its state
 * (*plan, *from): not found for a foreign one, state naming
 * the state, or when it was never placed on a node. */
int service_sandbox_for_op(struct scheduler *s, const char *project_id, const char *id,
                           enum sandbox_op op, PGresult **row, struct sandbox_plan *plan,
                           enum sandbox_state *from, struct airlock_error *e);
/* One request to the node of sandbox row 0 of `row`; the reply is freed
 * unless wanted (then the caller frees it, when set). */
int service_call_node(struct scheduler *s, PGresult *row, node_op op, const ProtobufCMessage *req,
                      Airlock__Node__V1__NodeReply **wanted, struct airlock_error *e);

#endif
