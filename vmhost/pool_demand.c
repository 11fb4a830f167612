#include "pool_demand.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BACKOFF_FIRST_MS 1000L
#define BACKOFF_MAX_MS 30000L

void pool_demand_init(struct pool_demand *d, const struct pool_demand_config *cfg)
{
    static const struct pool_demand_config defaults = {
        .window_ms = POOL_DEMAND_WINDOW_MS,
        .horizon_ms = POOL_DEMAND_HORIZON_MS,
        .hold_ms = POOL_DEMAND_HOLD_MS,
        .half_life_ms = POOL_DEMAND_HALF_LIFE_MS,
    };
    memset(d, 0, sizeof(*d));
    d->cfg = cfg ? *cfg : defaults;
}

/* Forgets creates older than the window. */
static void expire(struct pool_demand *d, int64_t now_ms)
{
    while (d->count > 0 && d->creates[d->head] <= now_ms - d->cfg.window_ms) {
        d->head = (d->head + 1) % POOL_DEMAND_MAX_CREATES;
        d->count--;
    }
}

void pool_demand_record(struct pool_demand *d, int64_t now_ms)
{
    expire(d, now_ms);
    if (d->count == POOL_DEMAND_MAX_CREATES) { /* the oldest makes room */
        d->head = (d->head + 1) % POOL_DEMAND_MAX_CREATES;
        d->count--;
    }
    d->creates[(d->head + d->count) % POOL_DEMAND_MAX_CREATES] = now_ms;
    d->count++;
    pool_demand_peak(d, now_ms); /* a new peak starts its hold now */
}

/* The window's rate, or its newer half's when that is higher: a rising
 * rate counts after half a window, not after the whole one averaged it. */
static double current_rate(const struct pool_demand *d, int64_t now_ms)
{
    int64_t half = d->cfg.window_ms / 2;
    unsigned newer = 0;
    for (unsigned i = 0; i < d->count; i++)
        if (d->creates[(d->head + i) % POOL_DEMAND_MAX_CREATES] > now_ms - half)
            newer++;
    double rate = d->count * 1000.0 / (double)d->cfg.window_ms;
    double r_new = newer * 1000.0 / (double)half;
    return r_new > rate ? r_new : rate;
}

static double decayed_peak(const struct pool_demand *d, int64_t now_ms)
{
    int64_t past_hold = now_ms - d->peak_at_ms - d->cfg.hold_ms;
    if (past_hold <= 0)
        return d->peak;
    return d->peak * exp2(-(double)past_hold / (double)d->cfg.half_life_ms);
}

double pool_demand_peak(struct pool_demand *d, int64_t now_ms)
{
    expire(d, now_ms);
    double rate = current_rate(d, now_ms), peak = decayed_peak(d, now_ms);
    if (rate >= peak && rate > 0) {
        d->peak = rate;
        d->peak_at_ms = now_ms;
        return rate;
    }
    return peak;
}

unsigned pool_demand_target(struct pool_demand *d, int64_t now_ms, const struct pool_limits *lim)
{
    double want = pool_demand_peak(d, now_ms) * (double)d->cfg.horizon_ms / 1000.0;
    unsigned target = lim->max;
    /* Under half a VM is the tail of the decay, not demand. */
    if (want < lim->max)
        target = want < 0.5 ? 0 : (unsigned)ceil(want);
    if (target < lim->min)
        target = lim->min;
    unsigned long long fit = lim->vm_memory_mb ? lim->memory_mb / lim->vm_memory_mb : target;
    return target > fit ? (unsigned)fit : target;
}

int pool_limits_check(const struct pool_limits *lim, char *err, size_t errlen)
{
    if (lim->min > lim->max) {
        snprintf(err, errlen, "warm pool: min %u is above max %u", lim->min, lim->max);
        return -1;
    }
    if (lim->max > 0 && lim->memory_mb < lim->vm_memory_mb) {
        snprintf(err, errlen, "warm pool: --pool-memory-mib %llu is below one VM (%u MiB)",
                 lim->memory_mb, lim->vm_memory_mb);
        return -1;
    }
    if ((unsigned long long)lim->min * lim->vm_memory_mb > lim->memory_mb) {
        snprintf(err, errlen,
                 "warm pool: min %u VMs of %u MiB need %llu MiB, more than --pool-memory-mib %llu",
                 lim->min, lim->vm_memory_mb, (unsigned long long)lim->min * lim->vm_memory_mb,
                 lim->memory_mb);
        return -1;
    }
    return 0;
}

long pool_refill_backoff_ms(unsigned failures)
{
    long ms = BACKOFF_FIRST_MS;
    for (unsigned i = 1; i < failures && ms < BACKOFF_MAX_MS; i++)
        ms *= 2;
    return ms < BACKOFF_MAX_MS ? ms : BACKOFF_MAX_MS;
}
