/* A short-lived cache of successful API key authentications, so that most
 * requests skip the scheduler's Authenticate call (~1 ms). Entries are
 * keyed by the SHA-256 of the presented key (the key itself is never
 * kept) and hold only the principal. Failures are never cached.
 *
 * Revocation: the gateway that revokes a key drops it before answering,
 * the others drop it on the scheduler's NATS message (key_revocations.h);
 * while that feed may miss messages (NATS down) the cache is neither read
 * nor filled, and it is flushed on every disconnect and reconnect. Every
 * entry expires after the TTL whatever happens. Thread-safe. */
#ifndef AIRLOCK_GATEWAY_KEY_CACHE_H
#define AIRLOCK_GATEWAY_KEY_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"
#include "metrics_registry.h"

#define KEY_CACHE_DEFAULT_TTL_MS 10000
#define KEY_CACHE_MAX_TTL_MS 3600000 /* an hour: revocations must not wait longer */
#define KEY_CACHE_DEFAULT_CAPACITY 1024
#define KEY_CACHE_DIGEST_BYTES 32

/* Who a key belongs to, as the scheduler's Authenticate says. */
struct key_principal {
    char key_id[64];
    char project_id[64];
    bool admin;
};

struct key_cache_entry {
    uint8_t digest[KEY_CACHE_DIGEST_BYTES]; /* SHA-256 of the key */
    int64_t expires_ms;                     /* 0: free slot */
    struct key_principal who;
};

struct key_cache {
    pthread_mutex_t lock;
    struct key_cache_entry *entries;
    size_t capacity;
    int64_t ttl_ms;          /* 0: the cache is off */
    int64_t (*now_ms)(void); /* monotonic; tests inject their own */
    /* Bumped by every drop and flush: an answer fetched across one may
     * predate the revocation that caused it, so it is not stored. */
    uint64_t generation;
    uint64_t hits, misses;
    struct metric *hits_metric, *misses_metric; /* copies of them at each scrape */
};

/* Asks the scheduler (or, in tests, a stand-in) who key belongs to. */
typedef int (*key_cache_fetch_fn)(void *ctx, const char *key, struct key_principal *who,
                                  struct airlock_error *e);

/* ttl_ms 0 turns the cache off (every call fetches). -1 when out of
 * memory. */
int key_cache_init(struct key_cache *c, size_t capacity, int64_t ttl_ms, int64_t (*now_ms)(void));
void key_cache_destroy(struct key_cache *c);

/* *who for key: from the cache while its entry is fresh, else from fetch,
 * whose success is stored for the TTL (evicting the entry closest to
 * expiry when full). usable false (revocations may be missed) bypasses
 * the cache both ways. Fetch's answer otherwise: 0, or -1 with e. */
int key_cache_authenticate(struct key_cache *c, const char *key, bool usable,
                           key_cache_fetch_fn fetch, void *ctx, struct key_principal *who,
                           struct airlock_error *e);

/* Forgets every entry of key_id (revoked). */
void key_cache_drop_key(struct key_cache *c, const char *key_id);
/* Forgets everything (NATS disconnected or reconnected). */
void key_cache_flush(struct key_cache *c);

/* Adds the hit and miss counters to reg (copied at each scrape); 0 or -1
 * when out of memory. */
int key_cache_register_metrics(struct key_cache *c, struct metrics_registry *reg);

#endif
