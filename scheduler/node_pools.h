/* Each node's warm pools as its last heartbeat had them (node.proto
 * WarmPool: floor, ceiling, what it fills to following its creates, ready
 * VMs, their memory, the demand), what its pools hold and may hold and its
 * own ceiling,
 * into node_warm_pools (migration 16), on a NATS subscription of its own:
 * GetWarmPool answers from it, and the pool controller pushes ceilings
 * where a node's differs (controller_pool.c). */
#ifndef AIRLOCK_SCHEDULER_NODE_POOLS_H
#define AIRLOCK_SCHEDULER_NODE_POOLS_H

#include <stddef.h>

#include "scheduler.h"

/* Subscribes; 0, or -1 with err. */
int node_pools_follow(struct scheduler *s, char *err, size_t errlen);

#endif
