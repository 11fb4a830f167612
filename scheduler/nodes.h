/* vmhost nodes as the scheduler sees them over NATS: heartbeats into the
 * nodes table, placement of a sandbox on a live node, and request/reply
 * work on airlock.node.<id>.<op> (protos/node.proto). */
#ifndef AIRLOCK_SCHEDULER_NODES_H
#define AIRLOCK_SCHEDULER_NODES_H

#include <stdbool.h>

#include "airlock_error.h"
#include "node.pb-c.h"
#include "node_op.h"
#include "scheduler.h"

/* Subscribes to airlock.node.*.heartbeat; each heartbeat upserts its row. */
int nodes_follow_heartbeats(struct scheduler *s, char *err, size_t errlen);

/* An SQL condition: node n takes new work — it is live (heard from within
 * the seconds in parameter dead_after) and active, not draining
 * (node_state.h). Every placement asks it: creates, template builds. */
#define NODES_TAKING_WORK(n, dead_after)                                        \
    "(" n ".last_seen > now() - make_interval(secs => " dead_after "::integer)" \
    " AND " n ".drain = 'active')"

/* An SQL condition, never NULL (it is also a sort key): node n has
 * template `tpl` (an SQL expression): it is "default", n built it, or n's
 * heartbeat lists it. */
#define NODES_HAS_TEMPLATE(n, tpl)                                                        \
    "coalesce(" tpl " = 'default' OR " tpl " = ANY(" n ".templates)"                      \
    " OR " n ".id = (SELECT t.node_id FROM templates t WHERE t.id = " tpl "), false)"

/* An SQL subquery: the id of the node taking work (NODES_TAKING_WORK)
 * whose budget (vmhost/node_budget.h)
 * has room for `cpus` vCPUs and `memory` MiB, with a free record slot,
 * that can serve template `tpl` (SQL expressions, the sizes integers), and is
 * not node `except` but is node `only` when that is not '' (text
 * expressions; '' for none; `only`: the node of the sandbox's volumes): nodes that have the
 * template first, then the one with the most memory left; NULL when none
 * has room. Creates in
 * flight count against a node until its heartbeat shows them
 * (conservative: for a moment they may count twice). The node checks
 * again, and refuses what does not fit. A named template lives on the
 * nodes that built it or report it; one published to the shared snapshot
 * store (templates.store_object) can go to any node, which fetches it
 * (docs/templates.md "Across nodes"). */
#define NODES_PLACEMENT(tpl, cpus, memory, dead_after, except, only)                      \
    "(SELECT n.id FROM nodes n CROSS JOIN LATERAL"                                        \
    "  (SELECT count(*) AS sandboxes, coalesce(sum(p.cpus), 0) AS cpus,"                  \
    "     coalesce(sum(p.memory_mb), 0) AS memory_mb FROM sandboxes p"                    \
    "   WHERE p.node_id = n.id AND p.state = 'creating') inflight"                        \
    "  WHERE " NODES_TAKING_WORK("n", dead_after)                                         \
    "    AND n.id <> " except                                                              \
    "    AND (" only " = '' OR n.id = " only ")"                                          \
    "    AND n.capacity > n.sandboxes + inflight.sandboxes"                               \
    "    AND n.vcpus_committed + inflight.cpus + " cpus " <= n.vcpus_limit"                \
    "    AND n.memory_committed_mb + inflight.memory_mb + " memory " <= n.memory_limit_mb" \
    "    AND (" NODES_HAS_TEMPLATE("n", tpl)                                                \
    "         OR EXISTS (SELECT 1 FROM templates t WHERE t.id = " tpl                      \
    "                    AND t.store_object <> ''))"                                      \
    "  ORDER BY " NODES_HAS_TEMPLATE("n", tpl) " DESC,"                                   \
    "    n.memory_limit_mb - n.memory_committed_mb - inflight.memory_mb DESC,"            \
    "    n.vcpus_limit - n.vcpus_committed - inflight.cpus DESC, n.id LIMIT 1)"

/* Assigns sandbox_id (not placed when it was inserted) to NODES_PLACEMENT's
 * node; node_id gets its id. Capacity, naming the template, when
 * none has room. */
int nodes_place(struct scheduler *s, const char *sandbox_id, char *node_id, size_t idlen,
                struct airlock_error *e);

/* A node other than `except` for sandbox_id to move to (as
 * NODES_PLACEMENT chooses), into node_id; the row is not changed (the
 * move records it). through_store: it moves as a suspend or checkpoint in
 * the shared snapshot store, which carries its volumes; otherwise (a live
 * migration) a sandbox with volumes stays (CAPACITY saying so). Capacity
 * naming the sandbox's size when no node has room. Every capacity refusal
 * is counted in placement_failures under op (the move asking: "resume",
 * "restore", "migrate", "move"), so that each move's failures show apart
 * from creates'. */
int nodes_place_elsewhere(struct scheduler *s, const char *sandbox_id, const char *except,
                          bool through_store, const char *op,
                          char *node_id, size_t idlen, struct airlock_error *e);

/* Whether node_id has been silent past --node-dead-after-s (or was never
 * seen): true with *since (RFC 3339 of its last heartbeat, "" when none).
 * false when it is alive or the database cannot say (err then). */
bool nodes_gone(struct scheduler *s, const char *node_id, char *since, size_t sincelen,
                struct airlock_error *e);

/* One request to a node (node_request.h): 0 with *reply (free with
 * protobuf_c_message_free_unpacked), or < 0 with e: -1 (NODES_UNSENT) for
 * the node's own refusal (its status classified, its message) or a
 * request no node got (unavailable: NATS "no responders", the node is
 * down); -2 (NODES_UNANSWERED) when it went out and no answer came:
 * timeout when it answered too late, unavailable when the node or NATS
 * went away meanwhile. After -2 the node may have acted on it. */
#define NODES_UNSENT -1
#define NODES_UNANSWERED -2
int nodes_call(struct scheduler *s, const char *node_id, node_op op, const ProtobufCMessage *req,
               int timeout_ms, Airlock__Node__V1__NodeReply **reply, struct airlock_error *e);

/* Deletes sandbox id on node_id; keep_stored (NULL: none) is its suspend
 * in the shared snapshot store, which the node then leaves there (the
 * sandbox lives on from it elsewhere). moved: the sandbox lives on (on
 * another node, or as a row that keeps it), so its checkpoints in the
 * store stay. Either way the node's images of the sandbox's volumes that
 * the database places on another node go (they moved with it). 0 also
 * when the node has no such sandbox. */
int nodes_delete_sandbox(struct scheduler *s, const char *node_id, const char *id,
                         const char *keep_stored, bool moved, struct airlock_error *e);

/* A NodeReply in msg (destroyed here), as nodes_call answers it: OK with
 * *reply, or its refusal in e. op names the request in errors. */
int nodes_reply_take(const char *node_id, node_op op, natsMsg *msg,
                     Airlock__Node__V1__NodeReply **reply, struct airlock_error *e);

#endif
