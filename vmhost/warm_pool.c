#include "warm_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "pool_demand.h"
#include "sandbox_build.h"
#include "sandbox_pool.h"
#include "template_version.h"
#include "vmhost.h"

/* How often a full pool looks at its demand again: the target follows
 * it and VMs beyond it go one per look (a gradual shrink). */
#define WARM_POOL_EVAL_MS 500
/* A node out of room (its budget or the pool memory) is asked again
 * after this: no failure, so no backoff. */
#define WARM_POOL_ROOM_RETRY_MS 2000
/* After a hand-out the refill waits this long: on few cores a QEMU start
 * and restore right away takes the CPU the control plane needs to answer
 * the create (pooled creates measured 6.7 -> 5.5 ms added with 30 ms) and
 * the client's first exec needs next (~60 ms here). */
#define WARM_POOL_REFILL_DELAY_MS 100

struct warm_pool {
    struct vmhost *vh;
    struct template_version *tmpl; /* what its VMs are restored from; a reference */
    pthread_t filler;

    pthread_mutex_t lock; /* guards the fields below */
    pthread_cond_t wake;  /* a VM was taken, the limits changed, or stop */
    unsigned min, max;    /* the floor and the ceiling */
    unsigned target;      /* the filler's last look: demand within the limits */
    struct pool_demand demand;
    struct sandbox **ready; /* capacity slots, oldest first */
    unsigned n_ready, capacity;
    /* QEMUs started ahead with the template's state loaded, paused
     * (sandbox_spare_start), oldest first, while the pool is in use (max >
     * 0): a refill continues one, and so does a create that found no ready
     * VM. Not in the pool memory: a guest that never ran holds none. */
    struct sandbox *spares[VMHOST_MAX_POOL_SPARES];
    unsigned n_spares;
    bool stopping;
    unsigned long long taken, missed;
    /* Taken VMs being handed out: the refill (a QEMU start and a restore)
     * waits for them, since on few cores it would take the CPU their
     * guests need to answer. */
    unsigned handing_out;
    int64_t refill_after_ms; /* monotonic; WARM_POOL_REFILL_DELAY_MS after a hand-out */
};

static unsigned vm_memory_mb(const struct warm_pool *pool)
{
    return pool->tmpl->snap.memory_mb;
}

/* lock held: the limits against the node's pool memory, of which this
 * pool may use what the others leave. */
static void limits_locked(const struct warm_pool *pool, struct pool_limits *lim)
{
    unsigned long long own = (unsigned long long)pool->n_ready * vm_memory_mb(pool);
    unsigned long long used = atomic_load(&pool->vh->pool_memory_mb);
    unsigned long long others = used > own ? used - own : 0;
    unsigned long long budget = pool->vh->cfg.pool_memory_mib;
    *lim = (struct pool_limits){ .min = pool->min, .max = pool->max,
                                 .vm_memory_mb = vm_memory_mb(pool),
                                 .memory_mb = budget > others ? budget - others : 0 };
}

/* lock held: the target now. */
static unsigned retarget_locked(struct warm_pool *pool)
{
    struct pool_limits lim;
    limits_locked(pool, &lim);
    unsigned target = pool_demand_target(&pool->demand, clock_monotonic_ms(), &lim);
    if (target != pool->target)
        log_info("warm pool target changed", "template=%s from=%u to=%u ready=%u per_s=%.1f",
                 pool->tmpl->ref, pool->target, target, pool->n_ready,
                 pool_demand_peak(&pool->demand, clock_monotonic_ms()));
    pool->target = target;
    return target;
}

/* lock held: a ready VM added to or removed from the pool's memory. */
static void account_locked(struct warm_pool *pool, int vms)
{
    if (vms > 0)
        atomic_fetch_add(&pool->vh->pool_memory_mb, (unsigned long long)vms * vm_memory_mb(pool));
    else
        atomic_fetch_sub(&pool->vh->pool_memory_mb, (unsigned long long)-vms * vm_memory_mb(pool));
}

/* lock held: sleeps until woken or ms passed. */
static void wait_locked(struct warm_pool *pool, long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&pool->wake, &pool->lock, &ts);
}

/* lock held: the spares the pool keeps now. */
static unsigned spares_target_locked(const struct warm_pool *pool)
{
    return pool->max > 0 ? pool->vh->cfg.warm_pool_spares : 0;
}

/* lock held: the oldest spare, its room on the node claimed, or NULL (a
 * full node keeps its spares: the build without one answers CAPACITY). */
static struct sandbox *take_spare_locked(struct warm_pool *pool)
{
    struct airlock_error e = { 0 };
    if (pool->n_spares == 0 || sandbox_spare_claim(pool->spares[0], &e) < 0)
        return NULL;
    struct sandbox *sb = pool->spares[0];
    pool->n_spares--;
    memmove(pool->spares, pool->spares + 1, pool->n_spares * sizeof(*pool->spares));
    return sb;
}

/* One VM for the pool: built detached (nicer than vmhost, so the VMs in
 * use and creates that found the pool empty get the CPU first) into a
 * spare when one waits, then warmed up and left paused. */
static int refill_one(struct warm_pool *pool, struct sandbox **out, struct airlock_error *e)
{
    struct sandbox_create_params p = { 0 };
    template_version_get(pool->tmpl); /* the build's, kept by the VM */
    pthread_mutex_lock(&pool->lock);
    struct sandbox *spare = take_spare_locked(pool);
    pthread_mutex_unlock(&pool->lock);
    struct sandbox_build b = { .params = &p, .tmpl = pool->tmpl, .detached = true,
                               .nice = WARM_POOL_NICE, .spare = spare };
    int64_t started = clock_monotonic_us();
    struct sandbox *sb;
    if (sandbox_build(pool->vh, &b, &sb, e) < 0)
        return -1;
    int64_t restored = clock_monotonic_us();
    struct pool_warm_times w;
    if (sandbox_pool_warm(sb, &w, AIRLOCK_ERROR_MSG(e)) < 0) {
        sandbox_discard(sb);
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    }
    /* A refill's cost, as a create's: the build (QEMU start unless a spare
     * was ready, state load, guestd's first answer) and the warm-up with
     * its steps (sandbox_pool.h). */
    log_info("warm pool VM restored",
             "template=%s sandbox=%s qemu=%s restore_us=%lld warm_us=%lld warm_ca_us=%lld "
             "warm_exec_us=%lld warm_cycle_us=%lld warm_init_us=%lld",
             pool->tmpl->ref, sandbox_id(sb), spare ? "prestarted" : "started",
             (long long)(restored - started), (long long)(clock_monotonic_us() - restored),
             (long long)w.ca_us, (long long)w.exec_us, (long long)w.cycle_us,
             (long long)w.init_us);
    *out = sb;
    return 0;
}

/* A spare for the pool (nicer than vmhost, as a refill), or -1 with e. */
static int spare_one(struct warm_pool *pool, struct sandbox **out, struct airlock_error *e)
{
    template_version_get(pool->tmpl); /* the spare's */
    return sandbox_spare_start(pool->vh, pool->tmpl, WARM_POOL_NICE, out, e);
}

/* lock held, n_ready above the target: the newest VM goes (one per look,
 * so an idle pool shrinks gradually). */
static void shrink_one_locked(struct warm_pool *pool)
{
    struct sandbox *sb = pool->ready[--pool->n_ready];
    account_locked(pool, -1);
    pthread_mutex_unlock(&pool->lock);
    sandbox_discard(sb);
    pthread_mutex_lock(&pool->lock);
}

/* lock held, more spares than the pool keeps (it went out of use): the
 * newest goes. */
static void drop_spare_locked(struct warm_pool *pool)
{
    struct sandbox *sb = pool->spares[--pool->n_spares];
    pthread_mutex_unlock(&pool->lock);
    sandbox_discard(sb);
    pthread_mutex_lock(&pool->lock);
}

static void *filler_main(void *arg)
{
    struct warm_pool *pool = arg;
    bool full = false;     /* the node had no room at the last try */
    unsigned failures = 0; /* refills failed in a row: the backoff's */
    pthread_mutex_lock(&pool->lock);
    while (!pool->stopping) {
        unsigned target = retarget_locked(pool);
        unsigned spares = spares_target_locked(pool);
        if (pool->n_spares > spares) {
            drop_spare_locked(pool);
            continue;
        }
        if (pool->n_ready > target && pool->handing_out == 0) {
            shrink_one_locked(pool);
            wait_locked(pool, WARM_POOL_EVAL_MS);
            continue;
        }
        /* Spares first: one costs a QEMU start and serves a create past
         * the empty pool at about a third of a restore's time. */
        bool add_spare = pool->n_spares < spares;
        if ((!add_spare && pool->n_ready >= target) || pool->handing_out > 0) {
            wait_locked(pool, WARM_POOL_EVAL_MS);
            continue;
        }
        int64_t now = clock_monotonic_ms();
        if (now < pool->refill_after_ms) {
            wait_locked(pool, (long)(pool->refill_after_ms - now));
            continue;
        }
        pthread_mutex_unlock(&pool->lock);
        struct sandbox *sb = NULL;
        struct airlock_error e = { 0 };
        int64_t started = clock_monotonic_us();
        int rc = add_spare ? spare_one(pool, &sb, &e) : refill_one(pool, &sb, &e);
        bool was_full = full;
        full = rc < 0 && e.class == AIRLOCK_ERR_CAPACITY;
        pthread_mutex_lock(&pool->lock);
        if (rc == 0 && add_spare) {
            /* Only this thread adds, and spares <= VMHOST_MAX_POOL_SPARES. */
            if (pool->n_spares < spares_target_locked(pool)) {
                pool->spares[pool->n_spares++] = sb;
                failures = 0;
                /* us: what a create that takes it saves. */
                log_info("warm pool spare QEMU ready", "template=%s sandbox=%s spares=%u us=%lld",
                         pool->tmpl->ref, sandbox_id(sb), pool->n_spares,
                         (long long)(clock_monotonic_us() - started));
            } else { /* the pool went out of use meanwhile */
                pthread_mutex_unlock(&pool->lock);
                sandbox_discard(sb);
                pthread_mutex_lock(&pool->lock);
            }
        } else if (rc == 0 && pool->n_ready >= retarget_locked(pool)) {
            /* The target went down while this VM was being restored. */
            pthread_mutex_unlock(&pool->lock);
            sandbox_discard(sb);
            pthread_mutex_lock(&pool->lock);
        } else if (rc == 0) {
            /* Only this thread adds, and target <= max <= capacity: there is room. */
            pool->ready[pool->n_ready++] = sb;
            account_locked(pool, 1);
            failures = 0;
            log_info("warm pool VM ready", "template=%s sandbox=%s ready=%u target=%u",
                     pool->tmpl->ref, sandbox_id(sb), pool->n_ready, pool->target);
        } else if (e.class == AIRLOCK_ERR_CAPACITY) {
            /* A full node is no failure: said once, until there is room. */
            if (!was_full)
                log_info("warm pool waits for room on the node", "template=%s error=\"%s\"",
                         pool->tmpl->ref, e.message);
            if (!pool->stopping)
                wait_locked(pool, WARM_POOL_ROOM_RETRY_MS);
        } else {
            long retry_ms = pool_refill_backoff_ms(++failures);
            log_warn("warm pool refill failed", "template=%s error=\"%s\" failures=%u retry_ms=%ld",
                     pool->tmpl->ref, e.message, failures, retry_ms);
            if (!pool->stopping)
                wait_locked(pool, retry_ms);
        }
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

struct warm_pool *warm_pool_start(struct vmhost *vh, struct template_version *t, unsigned min,
                                  unsigned max, char *err, size_t errlen)
{
    struct warm_pool *pool = calloc(1, sizeof(*pool));
    if (!pool) {
        snprintf(err, errlen, "warm pool: out of memory");
        return NULL;
    }
    pool->vh = vh;
    pool->tmpl = t;
    pool_demand_init(&pool->demand, NULL);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_condattr_t cattr;
    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC); /* wait_locked's deadlines */
    pthread_cond_init(&pool->wake, &cattr);
    pthread_condattr_destroy(&cattr);
    struct airlock_error e = { 0 };
    if (warm_pool_set_limits(pool, min, max, &e) < 0) {
        snprintf(err, errlen, "%s", e.message);
        goto fail;
    }
    int rc = pthread_create(&pool->filler, NULL, filler_main, pool);
    if (rc != 0) {
        snprintf(err, errlen, "warm pool: cannot start its thread: %s", strerror(rc));
        goto fail;
    }
    template_version_get(t);
    log_info("warm pool started", "template=%s min=%u max=%u", t->ref, min, max);
    return pool;
fail:
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    free(pool->ready);
    free(pool);
    return NULL;
}

void warm_pool_stop(struct warm_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    pthread_join(pool->filler, NULL); /* an in-flight restore finishes first */
    pthread_mutex_lock(&pool->lock); /* and creates still handing a VM out */
    while (pool->handing_out > 0)
        pthread_cond_wait(&pool->wake, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < pool->n_ready; i++)
        sandbox_discard(pool->ready[i]);
    for (unsigned i = 0; i < pool->n_spares; i++)
        sandbox_discard(pool->spares[i]);
    account_locked(pool, -(int)pool->n_ready); /* alone now: no lock needed */
    log_info("warm pool stopped", "deleted=%u spares=%u", pool->n_ready, pool->n_spares);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    template_release(pool->tmpl);
    free(pool->ready);
    free(pool);
}

int warm_pool_set_limits(struct warm_pool *pool, unsigned min, unsigned max,
                         struct airlock_error *e)
{
    pthread_mutex_lock(&pool->lock);
    struct pool_limits lim;
    limits_locked(pool, &lim);
    lim.min = min;
    lim.max = max;
    /* The whole pool memory: another pool holding some now is no reason
     * to refuse limits that fit the node. */
    lim.memory_mb = pool->vh->cfg.pool_memory_mib;
    int rc = pool_limits_check(&lim, AIRLOCK_ERROR_MSG(e));
    if (rc < 0) {
        pthread_mutex_unlock(&pool->lock);
        return airlock_error_classify(e, AIRLOCK_ERR_INVALID);
    }
    if (max > pool->capacity || !pool->ready) {
        unsigned capacity = max > pool->capacity ? max : 1;
        struct sandbox **ready = realloc(pool->ready, capacity * sizeof(*ready));
        if (!ready) {
            pthread_mutex_unlock(&pool->lock);
            return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "warm pool: out of memory for %u VMs",
                                     max);
        }
        pool->ready = ready;
        pool->capacity = capacity;
    }
    bool changed = pool->min != min || pool->max != max;
    pool->min = min;
    pool->max = max;
    /* Beyond the ceiling at once; beyond the demand gradually (filler). */
    unsigned extra = pool->n_ready > max ? pool->n_ready - max : 0;
    struct sandbox **gone = extra ? malloc(extra * sizeof(*gone)) : NULL;
    if (gone) {
        pool->n_ready -= extra;
        memcpy(gone, pool->ready + pool->n_ready, extra * sizeof(*gone));
        account_locked(pool, -(int)extra);
    }
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; gone && i < extra; i++)
        sandbox_discard(gone[i]);
    free(gone);
    if (changed)
        log_info("warm pool limits changed", "template=%s min=%u max=%u deleted=%u",
                 pool->tmpl->ref, min, max, gone ? extra : 0);
    return 0;
}

struct sandbox *warm_pool_take(struct warm_pool *pool)
{
    if (!pool)
        return NULL;
    struct sandbox *sb = NULL;
    pthread_mutex_lock(&pool->lock);
    pool_demand_record(&pool->demand, clock_monotonic_ms());
    if (pool->n_ready > 0) {
        sb = pool->ready[0];
        pool->n_ready--;
        memmove(pool->ready, pool->ready + 1, pool->n_ready * sizeof(*pool->ready));
        account_locked(pool, -1);
        pool->taken++;
        pool->handing_out++;
    } else {
        pool->missed++;
    }
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    return sb;
}

struct sandbox *warm_pool_take_spare(struct warm_pool *pool)
{
    if (!pool)
        return NULL;
    pthread_mutex_lock(&pool->lock);
    /* Not a hand-out: the build into it takes ~70 ms here and far more
     * under load, and refills (niced) held back for all of it would
     * starve while creates keep coming. */
    struct sandbox *sb = take_spare_locked(pool);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    return sb;
}

void warm_pool_handed_out(struct warm_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    pool->refill_after_ms = clock_monotonic_ms() + WARM_POOL_REFILL_DELAY_MS;
    if (--pool->handing_out == 0)
        pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
}

void warm_pool_get_stats(struct warm_pool *pool, struct warm_pool_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    out->ready = pool->n_ready;
    out->target = pool->target;
    out->min = pool->min;
    out->max = pool->max;
    out->demand_per_s = pool_demand_peak(&pool->demand, clock_monotonic_ms());
    out->vm_memory_mb = vm_memory_mb(pool);
    out->memory_bytes = (unsigned long long)pool->n_ready * vm_memory_mb(pool) << 20;
    out->taken = pool->taken;
    out->missed = pool->missed;
    out->spares = pool->n_spares;
    pthread_mutex_unlock(&pool->lock);
}
