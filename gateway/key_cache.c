#include "key_cache.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

int key_cache_init(struct key_cache *c, size_t capacity, int64_t ttl_ms, int64_t (*now_ms)(void))
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    c->ttl_ms = ttl_ms > 0 ? ttl_ms : 0;
    c->now_ms = now_ms;
    c->capacity = capacity;
    if (c->ttl_ms && capacity && !(c->entries = calloc(capacity, sizeof(*c->entries))))
        return -1;
    if (!c->entries)
        c->ttl_ms = 0; /* nowhere to keep anything */
    return 0;
}

void key_cache_destroy(struct key_cache *c)
{
    if (c->entries)
        OPENSSL_cleanse(c->entries, c->capacity * sizeof(*c->entries));
    free(c->entries);
    c->entries = NULL;
    pthread_mutex_destroy(&c->lock);
}

/* Under c->lock: the fresh entry of digest, or NULL. */
static struct key_cache_entry *find(struct key_cache *c, const uint8_t *digest, int64_t now)
{
    for (size_t i = 0; i < c->capacity; i++) {
        struct key_cache_entry *e = &c->entries[i];
        if (e->expires_ms > now && memcmp(e->digest, digest, KEY_CACHE_DIGEST_BYTES) == 0)
            return e;
    }
    return NULL;
}

/* Under c->lock: where to store digest: its own slot, a free or expired
 * one, else the one closest to expiry (all share one TTL, so the oldest). */
static struct key_cache_entry *slot_for(struct key_cache *c, const uint8_t *digest, int64_t now)
{
    struct key_cache_entry *victim = &c->entries[0];
    for (size_t i = 0; i < c->capacity; i++) {
        struct key_cache_entry *e = &c->entries[i];
        if (e->expires_ms > now && memcmp(e->digest, digest, KEY_CACHE_DIGEST_BYTES) == 0)
            return e;
        if (e->expires_ms < victim->expires_ms)
            victim = e;
    }
    return victim;
}

int key_cache_authenticate(struct key_cache *c, const char *key, bool usable,
                           key_cache_fetch_fn fetch, void *ctx, struct key_principal *who,
                           struct airlock_error *e)
{
    uint8_t digest[KEY_CACHE_DIGEST_BYTES];
    bool cached = usable && c->ttl_ms > 0 &&
                  EVP_Digest(key, strlen(key), digest, NULL, EVP_sha256(), NULL) == 1;
    if (!cached)
        return fetch(ctx, key, who, e);
    int64_t now = c->now_ms();
    pthread_mutex_lock(&c->lock);
    struct key_cache_entry *entry = find(c, digest, now);
    if (entry) {
        *who = entry->who;
        c->hits++;
    } else {
        c->misses++;
    }
    uint64_t generation = c->generation;
    pthread_mutex_unlock(&c->lock);
    if (entry)
        return 0;

    if (fetch(ctx, key, who, e) < 0)
        return -1;
    pthread_mutex_lock(&c->lock);
    if (c->generation == generation) {
        /* From before the fetch: the answer is at least that fresh. */
        entry = slot_for(c, digest, now);
        memcpy(entry->digest, digest, sizeof(digest));
        entry->expires_ms = now + c->ttl_ms;
        entry->who = *who;
    }
    pthread_mutex_unlock(&c->lock);
    return 0;
}

void key_cache_drop_key(struct key_cache *c, const char *key_id)
{
    pthread_mutex_lock(&c->lock);
    c->generation++;
    for (size_t i = 0; c->entries && i < c->capacity; i++)
        if (strcmp(c->entries[i].who.key_id, key_id) == 0)
            memset(&c->entries[i], 0, sizeof(c->entries[i]));
    pthread_mutex_unlock(&c->lock);
}

void key_cache_flush(struct key_cache *c)
{
    pthread_mutex_lock(&c->lock);
    c->generation++;
    if (c->entries)
        memset(c->entries, 0, c->capacity * sizeof(*c->entries));
    pthread_mutex_unlock(&c->lock);
}

static void collect(void *arg)
{
    struct key_cache *c = arg;
    pthread_mutex_lock(&c->lock);
    uint64_t hits = c->hits, misses = c->misses;
    pthread_mutex_unlock(&c->lock);
    metric_set(c->hits_metric, NULL, (double)hits);
    metric_set(c->misses_metric, NULL, (double)misses);
}

int key_cache_register_metrics(struct key_cache *c, struct metrics_registry *reg)
{
    c->hits_metric = metrics_counter(reg, "airlock_gateway_key_cache_hits_total",
                                     "API keys authenticated from the gateway's cache.", 0, NULL);
    c->misses_metric =
        metrics_counter(reg, "airlock_gateway_key_cache_misses_total",
                        "API keys the cache sent to the scheduler (it was on and NATS up).", 0, NULL);
    return metrics_on_collect(reg, collect, c);
}
