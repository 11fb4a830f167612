#include "warm_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "sandbox.h"

/* After a failed refill (e.g. a full store), wait before the next try. */
#define WARM_POOL_RETRY_MS 2000

struct warm_pool {
    struct vmhost *vh;
    unsigned target;
    pthread_t filler;

    pthread_mutex_t lock; /* guards the fields below */
    pthread_cond_t wake;  /* a VM was taken, or stop */
    struct sandbox **ready; /* target slots, oldest first */
    unsigned n_ready;
    bool stopping;
    unsigned long long taken, missed;
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

static void *filler_main(void *arg)
{
    struct warm_pool *pool = arg;
    pthread_mutex_lock(&pool->lock);
    while (!pool->stopping) {
        if (pool->n_ready >= pool->target) {
            pthread_cond_wait(&pool->wake, &pool->lock);
            continue;
        }
        pthread_mutex_unlock(&pool->lock);
        struct sandbox_create_params p = { .for_pool = true };
        struct sandbox *sb = NULL;
        char err[1024];
        enum sandbox_error rc = sandbox_create(pool->vh, &p, &sb, err, sizeof(err));
        pthread_mutex_lock(&pool->lock);
        if (rc == SANDBOX_OK) {
            /* Only this thread adds, so there is room. */
            pool->ready[pool->n_ready++] = sb;
            log_info("warm pool VM ready", "sandbox=%s ready=%u target=%u", sb->id,
                     pool->n_ready, pool->target);
        } else {
            log_warn("warm pool refill failed", "error=\"%.300s\" retry_ms=%d", err,
                     WARM_POOL_RETRY_MS);
            if (!pool->stopping)
                wait_locked(pool, WARM_POOL_RETRY_MS);
        }
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

struct warm_pool *warm_pool_start(struct vmhost *vh, unsigned target, char *err, size_t errlen)
{
    struct warm_pool *pool = calloc(1, sizeof(*pool));
    struct sandbox **ready = calloc(target, sizeof(*ready));
    if (!pool || !ready) {
        snprintf(err, errlen, "warm pool: out of memory");
        goto fail;
    }
    pool->vh = vh;
    pool->target = target;
    pool->ready = ready;
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
    log_info("warm pool started", "target=%u", target);
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
    for (unsigned i = 0; i < pool->n_ready; i++)
        sandbox_discard_pooled(pool->ready[i]);
    log_info("warm pool stopped", "deleted=%u", pool->n_ready);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    free(pool->ready);
    free(pool);
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
    } else {
        pool->missed++;
    }
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    return sb;
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
