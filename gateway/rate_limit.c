#include "rate_limit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ONE_REQUEST 1000000 /* credit is kept in millionths of a request */

int rate_limit_init(struct rate_limit *rl, unsigned per_s_milli, unsigned burst, size_t capacity,
                    int64_t (*now_ms)(void))
{
    memset(rl, 0, sizeof(*rl));
    pthread_mutex_init(&rl->lock, NULL);
    rl->now_ms = now_ms;
    if (!per_s_milli || !burst || !capacity)
        return 0; /* off */
    if (!(rl->buckets = calloc(capacity, sizeof(*rl->buckets))))
        return -1;
    rl->per_s_milli = per_s_milli;
    rl->burst = burst;
    rl->capacity = capacity;
    return 0;
}

void rate_limit_destroy(struct rate_limit *rl)
{
    free(rl->buckets);
    rl->buckets = NULL;
    pthread_mutex_destroy(&rl->lock);
}

/* Under rl->lock: key_id's bucket, else a new full one in a free slot or
 * in the slot of the key seen least recently. */
static struct rate_bucket *bucket_for(struct rate_limit *rl, const char *key_id, int64_t now)
{
    struct rate_bucket *victim = &rl->buckets[0];
    for (size_t i = 0; i < rl->capacity; i++) {
        struct rate_bucket *b = &rl->buckets[i];
        if (!b->key_id[0]) {
            if (victim->key_id[0])
                victim = b;
            continue;
        }
        if (strcmp(b->key_id, key_id) == 0)
            return b;
        if (victim->key_id[0] && b->at_ms < victim->at_ms)
            victim = b;
    }
    snprintf(victim->key_id, sizeof(victim->key_id), "%s", key_id);
    victim->credit = (int64_t)rl->burst * ONE_REQUEST;
    victim->at_ms = now;
    return victim;
}

/* Under rl->lock: b's credit at now, never above the burst. */
static void refill(const struct rate_limit *rl, struct rate_bucket *b, int64_t now)
{
    int64_t full = (int64_t)rl->burst * ONE_REQUEST;
    int64_t elapsed = now > b->at_ms ? now - b->at_ms : 0;
    /* Compared before multiplying, so a long idle time cannot overflow. */
    if (elapsed >= (full - b->credit) / rl->per_s_milli + 1)
        b->credit = full;
    else
        b->credit += elapsed * rl->per_s_milli;
    b->at_ms = now;
}

int rate_limit_take(struct rate_limit *rl, const char *key_id, unsigned *retry_after_s, char *why,
                    size_t whylen)
{
    if (!rl->per_s_milli)
        return 0;
    pthread_mutex_lock(&rl->lock);
    int64_t now = rl->now_ms();
    struct rate_bucket *b = bucket_for(rl, key_id, now);
    refill(rl, b, now);
    int64_t short_by = ONE_REQUEST - b->credit;
    if (short_by <= 0)
        b->credit -= ONE_REQUEST;
    pthread_mutex_unlock(&rl->lock);
    if (short_by <= 0)
        return 0;
    int64_t wait_ms = (short_by + rl->per_s_milli - 1) / rl->per_s_milli;
    *retry_after_s = (unsigned)((wait_ms + 999) / 1000);
    snprintf(why, whylen,
             "rate limited: key %s made more than %.10g requests a second (burst %u) through "
             "this gateway; retry after %u s",
             key_id, rl->per_s_milli / 1000.0, rl->burst, *retry_after_s);
    return -1;
}

int rate_limit_parse_rate(const char *s, unsigned *per_s_milli)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || *s == '-' || !(v >= 0 && v <= RATE_LIMIT_MAX))
        return -1;
    long long milli = (long long)(v * 1000 + 0.5);
    if (v > 0 && milli == 0)
        return -1; /* finer than the thousandths the bucket counts in */
    *per_s_milli = (unsigned)milli;
    return 0;
}
