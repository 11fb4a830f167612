#include "live_streams.h"

#include <errno.h>

#include "clock.h"

void live_streams_init(struct live_streams *ls)
{
    pthread_mutex_init(&ls->lock, NULL);
    pthread_cond_init(&ls->changed, NULL);
    ls->head = NULL;
    ls->count = 0;
    ls->stopping = false;
}

void live_streams_destroy(struct live_streams *ls)
{
    pthread_cond_destroy(&ls->changed);
    pthread_mutex_destroy(&ls->lock);
}

bool live_streams_add(struct live_streams *ls, struct live_stream *e, struct rpc_stream *upstream)
{
    pthread_mutex_lock(&ls->lock);
    bool ok = !ls->stopping;
    if (ok) {
        e->upstream = upstream;
        e->next = ls->head;
        ls->head = e;
        ls->count++;
    }
    pthread_mutex_unlock(&ls->lock);
    return ok;
}

void live_streams_detach(struct live_streams *ls, struct live_stream *e)
{
    pthread_mutex_lock(&ls->lock);
    e->upstream = NULL;
    pthread_mutex_unlock(&ls->lock);
}

void live_streams_remove(struct live_streams *ls, struct live_stream *e)
{
    pthread_mutex_lock(&ls->lock);
    for (struct live_stream **pp = &ls->head; *pp; pp = &(*pp)->next) {
        if (*pp == e) {
            *pp = e->next;
            ls->count--;
            pthread_cond_broadcast(&ls->changed);
            break;
        }
    }
    pthread_mutex_unlock(&ls->lock);
}

bool live_streams_stopping(struct live_streams *ls)
{
    pthread_mutex_lock(&ls->lock);
    bool stopping = ls->stopping;
    pthread_mutex_unlock(&ls->lock);
    return stopping;
}

void live_streams_stop(struct live_streams *ls, int timeout_ms)
{
    pthread_mutex_lock(&ls->lock);
    ls->stopping = true;
    for (struct live_stream *e = ls->head; e; e = e->next)
        if (e->upstream)
            rpc_stream_cancel(e->upstream); /* safe from any thread */
    struct timespec until = clock_deadline_after_ms(timeout_ms);
    while (ls->count > 0 && pthread_cond_timedwait(&ls->changed, &ls->lock, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&ls->lock);
}
