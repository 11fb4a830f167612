/* A slot per hash of the PEM; a hit compares the whole PEM. */
#include "peer_cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PEER_CACHE_SLOTS 64

struct peer_entry {
    char *pem; /* NULL: empty */
    unsigned generation;
    time_t not_after;
    struct peer_identity id;
};

struct peer_cache {
    pthread_mutex_t mu;
    struct peer_entry slots[PEER_CACHE_SLOTS];
};

/* FNV-1a: spreads certificates, which differ in their key and signature. */
static size_t slot_of(const char *pem)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)pem; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % PEER_CACHE_SLOTS;
}

struct peer_cache *peer_cache_new(void)
{
    struct peer_cache *c = calloc(1, sizeof(*c));
    if (c)
        pthread_mutex_init(&c->mu, NULL);
    return c;
}

void peer_cache_free(struct peer_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < PEER_CACHE_SLOTS; i++)
        free(c->slots[i].pem);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

bool peer_cache_get(struct peer_cache *c, const char *pem, unsigned generation, time_t now,
                    struct peer_identity *id)
{
    struct peer_entry *e = &c->slots[slot_of(pem)];
    pthread_mutex_lock(&c->mu);
    bool hit = e->pem && e->generation == generation && now < e->not_after &&
               strcmp(e->pem, pem) == 0;
    if (hit)
        *id = e->id;
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void peer_cache_put(struct peer_cache *c, const char *pem, unsigned generation, time_t not_after,
                    const struct peer_identity *id)
{
    char *copy = strdup(pem);
    if (!copy)
        return;
    struct peer_entry *e = &c->slots[slot_of(pem)];
    pthread_mutex_lock(&c->mu);
    free(e->pem);
    *e = (struct peer_entry){ .pem = copy, .generation = generation, .not_after = not_after,
                              .id = *id };
    pthread_mutex_unlock(&c->mu);
}
