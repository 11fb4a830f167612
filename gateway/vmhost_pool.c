#include "vmhost_pool.h"

#include <stdlib.h>
#include <string.h>

struct vmhost_pool_entry {
    char *addr;
    struct rpc_channel *ch;
    struct vmhost_pool_entry *next;
};

void vmhost_pool_init(struct vmhost_pool *p, const char *internal_token)
{
    pthread_mutex_init(&p->lock, NULL);
    p->entries = NULL;
    p->internal_token = internal_token;
}

struct rpc_channel *vmhost_pool_get(struct vmhost_pool *p, const char *addr)
{
    pthread_mutex_lock(&p->lock);
    struct vmhost_pool_entry *e = p->entries;
    while (e && strcmp(e->addr, addr) != 0)
        e = e->next;
    if (!e) {
        e = calloc(1, sizeof(*e));
        if (e && (e->addr = strdup(addr)) && (e->ch = rpc_channel_open(addr, p->internal_token))) {
            e->next = p->entries;
            p->entries = e;
        } else if (e) {
            free(e->addr);
            free(e);
            e = NULL;
        }
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
        free(e->addr);
        free(e);
        e = next;
    }
    p->entries = NULL;
    pthread_mutex_destroy(&p->lock);
}
