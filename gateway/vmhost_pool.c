#include "vmhost_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vmhost_pool_entry {
    char *node;
    char *addr;
    struct rpc_channel *ch;
    struct vmhost_pool_entry *next;
};

void vmhost_pool_init(struct vmhost_pool *p, const char *internal_token,
                      struct tls_credentials *tls)
{
    pthread_mutex_init(&p->lock, NULL);
    p->entries = NULL;
    p->internal_token = internal_token;
    p->tls = tls;
}

static struct vmhost_pool_entry *entry_new(struct vmhost_pool *p, const char *node,
                                           const char *addr)
{
    char identity[PEER_IDENTITY_TEXT_MAX];
    snprintf(identity, sizeof(identity), "vmhost:%s", node);
    struct rpc_channel_auth auth = { .bearer_token = p->internal_token, .tls = p->tls,
                                     .server = identity };
    struct vmhost_pool_entry *e = calloc(1, sizeof(*e));
    if (e && (e->node = strdup(node)) && (e->addr = strdup(addr)) &&
        (e->ch = rpc_channel_open(addr, &auth)))
        return e;
    if (e) {
        free(e->node);
        free(e->addr);
        free(e);
    }
    return NULL;
}

struct rpc_channel *vmhost_pool_get(struct vmhost_pool *p, const char *node, const char *addr)
{
    pthread_mutex_lock(&p->lock);
    struct vmhost_pool_entry *e = p->entries;
    while (e && (strcmp(e->addr, addr) != 0 || strcmp(e->node, node) != 0))
        e = e->next;
    if (!e && (e = entry_new(p, node, addr))) {
        e->next = p->entries;
        p->entries = e;
    }
    pthread_mutex_unlock(&p->lock);
    return e ? e->ch : NULL;
}

void vmhost_pool_destroy(struct vmhost_pool *p)
{
    struct vmhost_pool_entry *e = p->entries;
    while (e) {
        struct vmhost_pool_entry *next = e->next;
        rpc_channel_close(e->ch);
        free(e->node);
        free(e->addr);
        free(e);
        e = next;
    }
    p->entries = NULL;
    pthread_mutex_destroy(&p->lock);
}
