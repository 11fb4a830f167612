/* gRPC channels to vmhosts, one per address, opened on first use and kept
 * for the gateway's life (a channel reconnects by itself). */
#ifndef AIRLOCK_GATEWAY_VMHOST_POOL_H
#define AIRLOCK_GATEWAY_VMHOST_POOL_H

#include <pthread.h>

#include "rpc_client.h"

struct vmhost_pool_entry;

struct vmhost_pool {
    pthread_mutex_t lock;
    struct vmhost_pool_entry *entries;
    const char *internal_token; /* presented on every call; NULL: none */
};

/* internal_token (NULL: none) must outlive the pool. */
void vmhost_pool_init(struct vmhost_pool *p, const char *internal_token);
/* The channel for addr (owned by the pool), or NULL when out of memory. */
struct rpc_channel *vmhost_pool_get(struct vmhost_pool *p, const char *addr);
void vmhost_pool_destroy(struct vmhost_pool *p);

#endif
