#include "controller.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "controller_jobs.h"
#include "log.h"

struct controller {
    struct scheduler *s;
    struct controller_leader leader;
    struct controller_pools pools;
    int64_t next_full_reconcile_ms; /* monotonic */
    int64_t leading_since_ms;       /* monotonic: when this replica began to lead */
    pthread_t thread;

    pthread_mutex_t lock;
    pthread_cond_t wake;            /* stopping */
    bool stopping;
};

static void ran(struct controller *c, const char *job)
{
    metric_add(c->s->metrics.controller_runs, METRIC_LABELS(job), 1);
}

static void controller_pass(struct controller *c)
{
    bool was_leader = c->leader.leader;
    bool leads = controller_leader_check(&c->leader);
    metric_set(c->s->metrics.leader, NULL, leads);
    if (!leads)
        return;
    int64_t now = clock_monotonic_ms();
    /* A new leader knows nothing of what happened while another led (or
     * none did): compare every node once. */
    if (!was_leader || now >= c->next_full_reconcile_ms) {
        controller_reconcile_flag_all(c->s);
        c->next_full_reconcile_ms = now + (int64_t)c->s->cfg.reconcile_interval_s * 1000;
    }
    if (!was_leader)
        c->leading_since_ms = now;
    /* Reconcile first: a sandbox the node lost is not suspended or
     * deleted on it. */
    controller_reconcile_pass(c->s);
    ran(c, "reconcile");
    /* After a control plane that was down, every node's last heartbeat is
     * old until the nodes are heard again: a new leader judges silence
     * only once it has led that long itself. */
    if (now - c->leading_since_ms >= (int64_t)c->s->cfg.node_dead_after_s * 1000) {
        controller_lost_pass(c->s);
        ran(c, "lost");
    }
    controller_ttl_pass(c->s);
    ran(c, "ttl");
    controller_deadline_pass(c->s);
    ran(c, "deadline");
    controller_idle_pass(c->s);
    ran(c, "idle");
    /* After the deletes and suspends above, which may leave a draining
     * node holding nothing. */
    controller_drain_pass(c->s);
    ran(c, "drain");
    controller_pool_pass(c->s, &c->pools);
    ran(c, "pool");
    controller_checkpoint_pass(c->s);
    ran(c, "checkpoint");
}

static void *controller_main(void *arg)
{
    struct controller *c = arg;
    pthread_mutex_lock(&c->lock);
    while (!c->stopping) {
        pthread_mutex_unlock(&c->lock);
        controller_pass(c);
        pthread_mutex_lock(&c->lock);
        struct timespec until = clock_deadline_after_ms(c->s->cfg.controller_interval_ms);
        while (!c->stopping && pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

struct controller *controller_start(struct scheduler *s, char *err, size_t errlen)
{
    struct controller *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errlen, "controller: out of memory");
        return NULL;
    }
    c->s = s;
    if (controller_leader_open(&c->leader, s->cfg.database_url, err, errlen) < 0) {
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    if (pthread_create(&c->thread, NULL, controller_main, c) != 0) {
        snprintf(err, errlen, "controller: cannot start its thread");
        pthread_cond_destroy(&c->wake);
        pthread_mutex_destroy(&c->lock);
        controller_leader_close(&c->leader);
        free(c);
        return NULL;
    }
    log_info("controllers started", "interval_ms=%d idle_timeout_s=%d ttl_s=%d",
             s->cfg.controller_interval_ms, s->cfg.idle_timeout_s, s->cfg.ttl_s);
    return c;
}

void controller_stop(struct controller *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    pthread_cond_broadcast(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    controller_leader_close(&c->leader);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
