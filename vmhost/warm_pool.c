#include "warm_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "sandbox_build.h"
#include "sandbox_pool.h"
#include "template_version.h"

/* After a failed refill (e.g. a full store), wait before the next try. */
#define WARM_POOL_RETRY_MS 2000
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
    pthread_cond_t wake;  /* a VM was taken, the target changed, or stop */
    unsigned target;
    struct sandbox **ready; /* capacity slots, oldest first */
    unsigned n_ready, capacity;
    bool stopping;
    unsigned long long taken, missed;
    /* Taken VMs being handed out: the refill (a QEMU start and a restore)
     * waits for them, since on few cores it would take the CPU their
     * guests need to answer. */
    unsigned handing_out;
    int64_t refill_after_ms; /* monotonic; WARM_POOL_REFILL_DELAY_MS after a hand-out */
};

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

/* One VM for the pool: built detached (nicer than vmhost, so the VMs in
 * use and creates that found the pool empty get the CPU first), then
 * warmed up and left paused. */
static int refill_one(struct warm_pool *pool, struct sandbox **out, struct airlock_error *e)
{
    struct sandbox_create_params p = { 0 };
    template_version_get(pool->tmpl); /* the build's, kept by the VM */
    struct sandbox_build b = {
        .params = &p, .tmpl = pool->tmpl, .detached = true, .nice = WARM_POOL_NICE
    };
    struct sandbox *sb;
    if (sandbox_build(pool->vh, &b, &sb, e) < 0)
        return -1;
    if (sandbox_pool_warm(sb, AIRLOCK_ERROR_MSG(e)) < 0) {
        sandbox_discard(sb);
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    }
    *out = sb;
    return 0;
}

static void *filler_main(void *arg)
{
    struct warm_pool *pool = arg;
    bool full = false; /* the node's budget had no room at the last try */
    pthread_mutex_lock(&pool->lock);
    while (!pool->stopping) {
        if (pool->n_ready >= pool->target || pool->handing_out > 0) {
            pthread_cond_wait(&pool->wake, &pool->lock);
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
        int rc = refill_one(pool, &sb, &e);
        bool was_full = full;
        full = rc < 0 && e.class == AIRLOCK_ERR_CAPACITY;
        pthread_mutex_lock(&pool->lock);
        if (rc == 0 && pool->n_ready >= pool->target) {
            /* The target went down while this VM was being restored. */
            pthread_mutex_unlock(&pool->lock);
            sandbox_discard(sb);
            pthread_mutex_lock(&pool->lock);
        } else if (rc == 0) {
            /* Only this thread adds, and target <= capacity: there is room. */
            pool->ready[pool->n_ready++] = sb;
            log_info("warm pool VM ready", "template=%s sandbox=%s ready=%u target=%u",
                     pool->tmpl->ref, sandbox_id(sb), pool->n_ready, pool->target);
        } else {
            /* A full node is no failure: said once, until there is room. */
            if (e.class != AIRLOCK_ERR_CAPACITY)
                log_warn("warm pool refill failed", "error=\"%s\" retry_ms=%d", e.message,
                         WARM_POOL_RETRY_MS);
            else if (!was_full)
                log_info("warm pool waits for room on the node", "template=%s error=\"%s\"",
                         pool->tmpl->ref, e.message);
            if (!pool->stopping)
                wait_locked(pool, WARM_POOL_RETRY_MS);
        }
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

struct warm_pool *warm_pool_start(struct vmhost *vh, struct template_version *t, unsigned target,
                                  char *err, size_t errlen)
{
    struct warm_pool *pool = calloc(1, sizeof(*pool));
    struct sandbox **ready = calloc(target ? target : 1, sizeof(*ready));
    if (!pool || !ready) {
        snprintf(err, errlen, "warm pool: out of memory");
        goto fail;
    }
    pool->vh = vh;
    pool->tmpl = t;
    pool->target = target;
    pool->ready = ready;
    pool->capacity = target ? target : 1;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_condattr_t cattr;
    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC); /* wait_locked's deadlines */
    pthread_cond_init(&pool->wake, &cattr);
    pthread_condattr_destroy(&cattr);
    int rc = pthread_create(&pool->filler, NULL, filler_main, pool);
    if (rc != 0) {
        snprintf(err, errlen, "warm pool: cannot start its thread: %s", strerror(rc));
        pthread_cond_destroy(&pool->wake);
        pthread_mutex_destroy(&pool->lock);
        goto fail;
    }
    template_version_get(t);
    log_info("warm pool started", "template=%s target=%u", t->ref, target);
    return pool;
fail:
    free(ready);
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
    log_info("warm pool stopped", "deleted=%u", pool->n_ready);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    template_release(pool->tmpl);
    free(pool->ready);
    free(pool);
}

int warm_pool_set_target(struct warm_pool *pool, unsigned target, char *err, size_t errlen)
{
    pthread_mutex_lock(&pool->lock);
    if (target > pool->capacity) {
        struct sandbox **ready = realloc(pool->ready, target * sizeof(*ready));
        if (!ready) {
            pthread_mutex_unlock(&pool->lock);
            snprintf(err, errlen, "warm pool: out of memory for %u VMs", target);
            return -1;
        }
        pool->ready = ready;
        pool->capacity = target;
    }
    unsigned before = pool->target;
    pool->target = target;
    /* The newest VMs beyond the new target go, outside the lock. */
    unsigned extra = pool->n_ready > target ? pool->n_ready - target : 0;
    struct sandbox **gone = extra ? malloc(extra * sizeof(*gone)) : NULL;
    if (gone) {
        pool->n_ready -= extra;
        memcpy(gone, pool->ready + pool->n_ready, extra * sizeof(*gone));
    }
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; gone && i < extra; i++)
        sandbox_discard(gone[i]);
    free(gone);
    if (before != target)
        log_info("warm pool target changed", "from=%u to=%u deleted=%u", before, target,
                 gone ? extra : 0);
    return 0;
}

struct sandbox *warm_pool_take(struct warm_pool *pool)
{
    if (!pool)
        return NULL;
    struct sandbox *sb = NULL;
    pthread_mutex_lock(&pool->lock);
    if (pool->n_ready > 0) {
        sb = pool->ready[0];
        pool->n_ready--;
        memmove(pool->ready, pool->ready + 1, pool->n_ready * sizeof(*pool->ready));
        pool->taken++;
        pool->handing_out++;
    } else {
        pool->missed++;
    }
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
    out->taken = pool->taken;
    out->missed = pool->missed;
    pthread_mutex_unlock(&pool->lock);
}
