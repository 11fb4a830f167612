/* A follower of every node's heartbeats on a NATS subscription of its own
 * (node_heard.c: liveness in memory; node_pools.c: warm pools into
 * PostgreSQL), so a slow database never delays another follower. Its
 * handler gets the node the subject names — only that node's NATS user may
 * publish on it — and the heartbeat. */
#ifndef AIRLOCK_SCHEDULER_NODE_HEARTBEATS_H
#define AIRLOCK_SCHEDULER_NODE_HEARTBEATS_H

#include <nats/nats.h>
#include <stddef.h>

#include "node.pb-c.h"

struct scheduler;

typedef void node_heartbeat_fn(struct scheduler *s, const char *node,
                               const Airlock__Node__V1__Heartbeat *hb);

struct node_heartbeats {
    natsSubscription *sub; /* NULL until followed */
    struct scheduler *s;
    node_heartbeat_fn *fn;
};

/* Subscribes f to airlock.node.*.heartbeat; 0, or -1 with err. */
int node_heartbeats_follow(struct node_heartbeats *f, struct scheduler *s, natsConnection *nc,
                           node_heartbeat_fn *fn, char *err, size_t errlen);

#endif
