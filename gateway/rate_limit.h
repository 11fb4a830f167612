/* Requests per API key (--rate-limit-per-key, --rate-limit-burst): a token
 * bucket per key that holds up to `burst` requests and refills at `rate`
 * a second; a request past it is refused with the seconds until the next
 * one would pass (REST 429 rate_limited with Retry-After, gRPC
 * RESOURCE_EXHAUSTED). Counted per gateway: behind N replicas a key may
 * make N times the rate.
 *
 * The table of buckets has a fixed size, so many keys cannot grow it: a
 * new key takes a free slot, else the slot of the key seen least recently.
 * That one has usually refilled already, which is the same as having no
 * bucket; if not (more keys busy at once than slots), it starts again with
 * a full bucket. Thread-safe. */
#ifndef AIRLOCK_GATEWAY_RATE_LIMIT_H
#define AIRLOCK_GATEWAY_RATE_LIMIT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Above what the project's own tests and benches make with one key: the
 * control-plane bench's 32 creates and deletes at once on a fast host may
 * make a few hundred a second for as long as it is told to run. */
#define RATE_LIMIT_DEFAULT_PER_KEY_MILLI 1000000 /* 1000 requests a second */
#define RATE_LIMIT_DEFAULT_BURST 2000
#define RATE_LIMIT_DEFAULT_KEYS 1024
#define RATE_LIMIT_MAX 1000000 /* per second and burst */

struct rate_bucket {
    char key_id[64];   /* "": a free slot */
    int64_t credit;    /* millionths of a request */
    int64_t at_ms;     /* when credit was last brought up to date */
};

struct rate_limit {
    pthread_mutex_t lock;
    /* Thousandths of a request a second, so that rates below one a
     * second fit (0: off); one request a millisecond at that rate earns
     * exactly per_s_milli millionths of a request. */
    unsigned per_s_milli;
    unsigned burst;          /* 1 or more when on */
    int64_t (*now_ms)(void); /* monotonic; tests inject their own */
    struct rate_bucket *buckets;
    size_t capacity;
};

/* per_s_milli 0 turns the limit off. -1 when out of memory. */
int rate_limit_init(struct rate_limit *rl, unsigned per_s_milli, unsigned burst, size_t capacity,
                    int64_t (*now_ms)(void));
void rate_limit_destroy(struct rate_limit *rl);

/* One request of key_id: 0 when it may go ahead, else -1 with
 * *retry_after_s (1 or more: the wait for the next request, rounded up)
 * and why naming the limit and the wait ("rate limited: key key_x made
 * more than 2 requests a second (burst 3) through this gateway; retry
 * after 1 s"). */
int rate_limit_take(struct rate_limit *rl, const char *key_id, unsigned *retry_after_s, char *why,
                    size_t whylen);

/* "0.5", "100": a rate in thousandths (0 or 0.001 .. RATE_LIMIT_MAX); -1
 * when s is not one. */
int rate_limit_parse_rate(const char *s, unsigned *per_s_milli);

#endif
