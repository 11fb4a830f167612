/* vmhost nodes as the scheduler sees them over NATS: heartbeats into the
 * nodes table, placement of a sandbox on a live node, and request/reply
 * work on airlock.node.<id>.<op> (protos/node.proto). */
#ifndef AIRLOCK_SCHEDULER_NODES_H
#define AIRLOCK_SCHEDULER_NODES_H

#include <grpc/status.h>

#include "node.pb-c.h"
#include "scheduler.h"

/* Subscribes to airlock.node.*.heartbeat; each heartbeat upserts its row. */
int nodes_follow_heartbeats(struct scheduler *s, char *err, size_t errlen);

/* Assigns sandbox_id to the live node (heard from within
 * cfg.node_dead_after_s) with the most free slots, then the most free
 * memory; node_id gets its id. RESOURCE_EXHAUSTED when none has room. */
grpc_status_code nodes_place(struct scheduler *s, const char *sandbox_id, char *node_id,
                             size_t idlen, char *err, size_t errlen);

/* One request to a node; the reply's own status, or UNAVAILABLE when no
 * node answers (NATS "no responders": the node is down) and
 * DEADLINE_EXCEEDED when it answered too late. On OK *reply is set (free
 * with protobuf_c_message_free_unpacked); otherwise err says why. */
grpc_status_code nodes_call(struct scheduler *s, const char *node_id, const char *op,
                            const ProtobufCMessage *req, int timeout_ms,
                            Airlock__Node__V1__NodeReply **reply, char *err, size_t errlen);

/* A NodeReply in msg (destroyed here), as nodes_call answers it: OK with
 * *reply, or its status with err. op names the request in errors. */
grpc_status_code nodes_reply_take(const char *node_id, const char *op, natsMsg *msg,
                                  Airlock__Node__V1__NodeReply **reply, char *err, size_t errlen);

#endif
