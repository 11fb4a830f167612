/* How many VMs a warm pool should hold (warm_pool.h): enough for the next
 * few seconds at the recent peak create rate, within a floor, a ceiling
 * and what the node's pool memory allows. Pure: the caller feeds it each
 * create's time and passes the clock to every question, so the unit test
 * drives it with a fake clock (docs/snapshots.md "Warm pool").
 *
 * The rate is the creates of the last window_ms, or of its newer half
 * when that is busier: the pool grows within half a window of a rising
 * rate, to what the horizon needs at the new rate, before it is drained.
 * The peak
 * holds for hold_ms after it was last reached, then halves every
 * half_life_ms: an idle pool shrinks gradually, not at the first quiet
 * second. */
#ifndef AIRLOCK_VMHOST_POOL_DEMAND_H
#define AIRLOCK_VMHOST_POOL_DEMAND_H

#include <stddef.h>
#include <stdint.h>

#define POOL_DEMAND_WINDOW_MS 2000
#define POOL_DEMAND_HORIZON_MS 3000
#define POOL_DEMAND_HOLD_MS 30000
#define POOL_DEMAND_HALF_LIFE_MS 10000
/* Creates remembered: more within one window count as this many (a rate
 * of 256 per window is past any node's ceiling anyway). */
#define POOL_DEMAND_MAX_CREATES 256

struct pool_demand_config {
    int64_t window_ms;    /* the rate is measured over this */
    int64_t horizon_ms;   /* the pool covers this long at the peak rate */
    int64_t hold_ms;      /* the peak holds this long ... */
    int64_t half_life_ms; /* ... then halves every this long */
};

struct pool_demand {
    struct pool_demand_config cfg;
    int64_t creates[POOL_DEMAND_MAX_CREATES]; /* ring of create times, ms */
    unsigned head, count;                     /* oldest at head */
    double peak;                              /* creates per second */
    int64_t peak_at_ms;                       /* when the peak was last reached */
};

/* What bounds the target: floor <= target <= ceiling, and
 * target * vm_memory_mb <= memory_mb (a floor beyond it is cut to it). */
struct pool_limits {
    unsigned min, max;
    unsigned vm_memory_mb;   /* one VM of the pool's template */
    unsigned long long memory_mb; /* what this pool may hold */
};

/* cfg NULL: the defaults above. */
void pool_demand_init(struct pool_demand *d, const struct pool_demand_config *cfg);

/* A create that wanted a pooled VM (taken or missed) at now_ms. */
void pool_demand_record(struct pool_demand *d, int64_t now_ms);

/* The recent peak in creates per second at now_ms (decayed as above). */
double pool_demand_peak(struct pool_demand *d, int64_t now_ms);

/* The VMs the pool should hold at now_ms, within lim. */
unsigned pool_demand_target(struct pool_demand *d, int64_t now_ms, const struct pool_limits *lim);

/* Whether lim can be held at all; -1 with err naming the value if not
 * (a ceiling below the floor, a budget below one VM or below the floor). */
int pool_limits_check(const struct pool_limits *lim, char *err, size_t errlen);

/* How long the refill waits after its failures-th failure in a row (1, 2,
 * …): doubling from one second, at most half a minute. */
long pool_refill_backoff_ms(unsigned failures);

#endif
