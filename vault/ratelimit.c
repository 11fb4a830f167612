#include "ratelimit.h"

#include <stdlib.h>
#include <string.h>

struct ratelimit_bucket {
    char secret_id[64];
    double tokens;
    int64_t last_ms;
};

void ratelimit_init(struct ratelimit *rl)
{
    memset(rl, 0, sizeof(*rl));
    pthread_mutex_init(&rl->lock, NULL);
}

void ratelimit_destroy(struct ratelimit *rl)
{
    free(rl->buckets);
    pthread_mutex_destroy(&rl->lock);
}

/* A linear scan: a node's vault sees the secrets of its live sandboxes,
 * tens to hundreds. */
static struct ratelimit_bucket *bucket_find(struct ratelimit *rl, const char *secret_id)
{
    for (size_t i = 0; i < rl->n; i++)
        if (strcmp(rl->buckets[i].secret_id, secret_id) == 0)
            return &rl->buckets[i];
    return NULL;
}

static struct ratelimit_bucket *bucket_add(struct ratelimit *rl, const char *secret_id,
                                           uint32_t burst, int64_t now_ms)
{
    if (strlen(secret_id) >= sizeof(rl->buckets->secret_id))
        return NULL;
    if (rl->n == rl->cap) {
        size_t cap = rl->cap ? rl->cap * 2 : 16;
        struct ratelimit_bucket *b = realloc(rl->buckets, cap * sizeof(*b));
        if (!b)
            return NULL;
        rl->buckets = b;
        rl->cap = cap;
    }
    struct ratelimit_bucket *b = &rl->buckets[rl->n++];
    strcpy(b->secret_id, secret_id);
    b->tokens = burst; /* a new bucket starts full */
    b->last_ms = now_ms;
    return b;
}

bool ratelimit_take(struct ratelimit *rl, const char *secret_id, uint32_t per_minute,
                    uint32_t burst, int64_t now_ms)
{
    if (per_minute == 0)
        return true;
    if (burst == 0)
        burst = per_minute;
    pthread_mutex_lock(&rl->lock);
    bool ok = false;
    struct ratelimit_bucket *b = bucket_find(rl, secret_id);
    if (!b)
        b = bucket_add(rl, secret_id, burst, now_ms);
    if (b) {
        b->tokens += (double)(now_ms - b->last_ms) * per_minute / 60000.0;
        if (b->tokens > burst)
            b->tokens = burst; /* the limit may have been lowered */
        b->last_ms = now_ms;
        ok = b->tokens >= 1.0;
        if (ok)
            b->tokens -= 1.0;
    }
    pthread_mutex_unlock(&rl->lock);
    return ok;
}

void ratelimit_forget(struct ratelimit *rl, const char *secret_id)
{
    pthread_mutex_lock(&rl->lock);
    struct ratelimit_bucket *b = bucket_find(rl, secret_id);
    if (b)
        *b = rl->buckets[--rl->n];
    pthread_mutex_unlock(&rl->lock);
}
