/* First come, first served slots (build_gate.h): a ticket per caller, and
 * the next ticket goes in once a slot is free. */
#include "build_gate.h"

#include <pthread.h>
#include <stdlib.h>

#include "clock.h"

struct build_gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned slots, busy;
    uint64_t next_ticket; /* the next caller's */
    uint64_t next_in;     /* the ticket that goes in next */
};

struct build_gate *build_gate_new(unsigned slots)
{
    struct build_gate *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->changed, NULL);
    g->slots = slots;
    return g;
}

void build_gate_free(struct build_gate *g)
{
    if (!g)
        return;
    pthread_cond_destroy(&g->changed);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

int64_t build_gate_enter(struct build_gate *g)
{
    if (!g || g->slots == 0)
        return 0;
    int64_t started = clock_monotonic_us();
    pthread_mutex_lock(&g->lock);
    uint64_t ticket = g->next_ticket++;
    while (ticket != g->next_in || g->busy >= g->slots)
        pthread_cond_wait(&g->changed, &g->lock);
    g->next_in++;
    g->busy++;
    /* The next ticket may go in too if a slot is left. */
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
    return clock_monotonic_us() - started;
}

void build_gate_leave(struct build_gate *g)
{
    if (!g || g->slots == 0)
        return;
    pthread_mutex_lock(&g->lock);
    g->busy--;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

unsigned build_gate_waiting(struct build_gate *g)
{
    if (!g)
        return 0;
    pthread_mutex_lock(&g->lock);
    /* Tickets handed out and not yet in. */
    unsigned n = (unsigned)(g->next_ticket - g->next_in);
    pthread_mutex_unlock(&g->lock);
    return n;
}
