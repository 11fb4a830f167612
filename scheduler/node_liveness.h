/* Which nodes this scheduler still hears, in memory: each heartbeat
 * (node_heard.c) notes when its node was heard and which vmhost process
 * sent it. A request waiting for a node's answer (node_request.c) asks here,
 * so that a node that died or restarted ends the wait within seconds
 * instead of at the request's full timeout. Every replica follows every
 * heartbeat, so each knows for its own requests. */
#ifndef AIRLOCK_SCHEDULER_NODE_LIVENESS_H
#define AIRLOCK_SCHEDULER_NODE_LIVENESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Heartbeats come every 2 s (vmhost's NATS_AGENT_HEARTBEAT_MS); three
 * missed in a row is a node that stopped, not one that is late. */
#define NODE_SILENT_AFTER_MS 6000

struct node_liveness {
    pthread_mutex_t lock;
    struct node_heard *nodes;
    size_t n, cap;
};

/* What a waiter remembers of its node when it sent the request. */
struct node_seen {
    bool known;              /* heard at least once by this process */
    int64_t started_unix_ms; /* its vmhost process */
};

void node_liveness_init(struct node_liveness *l);
void node_liveness_free(struct node_liveness *l);

/* A heartbeat of node from the vmhost started at started_unix_ms, heard
 * at now_ms (monotonic). */
void node_liveness_heard(struct node_liveness *l, const char *node, int64_t started_unix_ms,
                         int64_t now_ms);

/* The node as it is now, for node_liveness_lost later. */
struct node_seen node_liveness_seen(struct node_liveness *l, const char *node);

/* Whether node, as seen when a request went out, has since stopped
 * heartbeating for NODE_SILENT_AFTER_MS or restarted (a new vmhost
 * process never got the request): true with why ("its heartbeat stopped
 * 7 s ago"). A node this process never heard is not judged. */
bool node_liveness_lost(struct node_liveness *l, const char *node, const struct node_seen *then,
                        int64_t now_ms, char *why, size_t whylen);

#endif
