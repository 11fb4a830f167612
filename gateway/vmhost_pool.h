/* gRPC channels to vmhosts, one per node and address, opened on first use
 * and kept for the gateway's life (a channel reconnects by itself). With
 * mutual TLS the server must be vmhost:<node>: a node that advertises
 * another's address gets no call through. */
#ifndef AIRLOCK_GATEWAY_VMHOST_POOL_H
#define AIRLOCK_GATEWAY_VMHOST_POOL_H

#include <pthread.h>

#include "rpc_client.h"

struct vmhost_pool_entry;

struct vmhost_pool {
    pthread_mutex_t lock;
    struct vmhost_pool_entry *entries;
    const char *internal_token; /* presented on every call; NULL: none */
    struct tls_credentials *tls; /* the gateway's; NULL: plaintext */
};

/* internal_token and tls (NULL: none) must outlive the pool. */
void vmhost_pool_init(struct vmhost_pool *p, const char *internal_token,
                      struct tls_credentials *tls);
/* The channel for node's vmhost at addr (owned by the pool), or NULL when
 * out of memory or node is not a node id. */
struct rpc_channel *vmhost_pool_get(struct vmhost_pool *p, const char *node, const char *addr);
void vmhost_pool_destroy(struct vmhost_pool *p);

#endif
