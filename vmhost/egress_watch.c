#include "egress_watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "egress_client.h"
#include "log.h"
#include "sandbox.h"
#include "sandbox_network.h"

/* How soon a restarted egress gets its sandboxes back, at the price of one
 * small call per interval. */
#define EGRESS_WATCH_INTERVAL_MS 1000

struct egress_watch {
    struct vmhost *vh;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    char known_id[33]; /* the egress instance every sandbox is attached to */
};

/* Attaches every registered sandbox again; false when one failed. */
static bool reattach_all(struct vmhost *vh)
{
    size_t n;
    struct sandbox **all = sandbox_list(vh, &n);
    if (!all)
        return false;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        struct airlock_error e = { 0 };
        if (sandbox_network_reattach(all[i], &e) < 0) {
            log_warn("cannot attach a sandbox to the new egress; retrying",
                     "sandbox=%s error=\"%s\"", sandbox_id(all[i]), e.message);
            ok = false;
        }
        sandbox_put(all[i]);
    }
    free(all);
    return ok;
}

static void check_once(struct egress_watch *w)
{
    char id[33], err[512];
    if (egress_client_status(w->vh->egress, EGRESS_WATCH_INTERVAL_MS, id, err, sizeof(err)) !=
        GRPC_STATUS_OK) {
        log_debug("egress not answering", "error=\"%s\"", err);
        return;
    }
    if (strcmp(id, w->known_id) == 0)
        return;
    if (w->known_id[0])
        log_warn("egress restarted: attaching every sandbox again", "instance=%s", id);
    if (reattach_all(w->vh)) {
        memcpy(w->known_id, id, sizeof(w->known_id));
        log_info("sandboxes attached to egress", "instance=%s", id);
    }
}

static void *watch_thread(void *arg)
{
    struct egress_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        pthread_mutex_unlock(&w->lock);
        check_once(w);
        pthread_mutex_lock(&w->lock);
        struct timespec until = clock_deadline_after_ms(EGRESS_WATCH_INTERVAL_MS);
        while (!w->stopping && pthread_cond_timedwait(&w->wake, &w->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct egress_watch *egress_watch_start(struct vmhost *vh, char *err, size_t errlen)
{
    struct egress_watch *w = calloc(1, sizeof(*w));
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    w->vh = vh;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    int rc = pthread_create(&w->thread, NULL, watch_thread, w);
    if (rc != 0) {
        snprintf(err, errlen, "egress watch thread: %s", strerror(rc));
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

void egress_watch_stop(struct egress_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}
