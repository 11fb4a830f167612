/* One NATS request to a node and the wait for its answer (nodes_call's
 * transport). The wait ends at timeout_ms, or as soon as (looked at every
 * NODE_REQUEST_CHECK_MS) the answer can no longer come: the node stopped
 * heartbeating or restarted (node_liveness.h), or this scheduler lost its
 * NATS connection (a reply sent meanwhile is lost). So an operation in flight when a node, its
 * vmhost or nats-server dies fails in seconds, not after the long timeout
 * a VM's boot or a suspend may need. */
#ifndef AIRLOCK_SCHEDULER_NODE_REQUEST_H
#define AIRLOCK_SCHEDULER_NODE_REQUEST_H

#include "airlock_error.h"
#include "node_op.h"
#include "scheduler.h"

/* How often a waiting request looks at its node and the connection. */
#define NODE_REQUEST_CHECK_MS 500

/* What a wait for a node's answers watches: the node as this scheduler
 * heard it, and its own NATS connection, when the request went out. */
struct node_watch {
    struct node_seen seen;
    natsStatistics *stats;
    uint64_t reconnects;
};

void node_watch_begin(struct scheduler *s, const char *node_id, struct node_watch *w);
/* Whether an answer from node_id can no longer come: it stopped
 * heartbeating or restarted, or the connection dropped or reconnected
 * since node_watch_begin (a reply sent meanwhile is lost); true with why
 * ("node N stopped answering (its heartbeat stopped 6 s ago)"). */
bool node_watch_lost(struct scheduler *s, const char *node_id, struct node_watch *w, char *why,
                     size_t whylen);
void node_watch_end(struct node_watch *w);

/* Sends data on subject (op of node_id, for the messages) and waits for
 * one answer: 0 with *msg (the node's reply; natsMsg_Destroy), else
 * NODES_UNSENT (-1: the node certainly did not get it: unavailable, "no
 * responders") or NODES_UNANSWERED (-2: it went out and no answer came:
 * timeout when timeout_ms passed, unavailable when the node or NATS
 * went away; the node may have acted on it), with e. */
int node_request(struct scheduler *s, const char *node_id, node_op op, const char *subject,
                 const void *data, int len, int timeout_ms, natsMsg **msg,
                 struct airlock_error *e);

#endif
