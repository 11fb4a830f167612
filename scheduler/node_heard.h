/* Follows every node's heartbeat into node_liveness (node_liveness.h), on
 * a NATS subscription of its own: nodes.c's records each heartbeat in
 * PostgreSQL on its subscription's thread, and a slow or hung database
 * must not make live nodes look silent to the requests waiting on them. */
#ifndef AIRLOCK_SCHEDULER_NODE_HEARD_H
#define AIRLOCK_SCHEDULER_NODE_HEARD_H

#include <stddef.h>

#include "scheduler.h"

/* Subscribes; 0, or -1 with err. */
int node_heard_follow(struct scheduler *s, char *err, size_t errlen);

#endif
