#include "node_liveness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node_heard {
    char *id;
    int64_t heard_ms;
    int64_t started_unix_ms;
};

void node_liveness_init(struct node_liveness *l)
{
    memset(l, 0, sizeof(*l));
    pthread_mutex_init(&l->lock, NULL);
}

void node_liveness_free(struct node_liveness *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->nodes[i].id);
    free(l->nodes);
    pthread_mutex_destroy(&l->lock);
    memset(l, 0, sizeof(*l));
}

/* The entry of node, or NULL; under the lock. */
static struct node_heard *find(struct node_liveness *l, const char *node)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->nodes[i].id, node) == 0)
            return &l->nodes[i];
    return NULL;
}

void node_liveness_heard(struct node_liveness *l, const char *node, int64_t started_unix_ms,
                         int64_t now_ms)
{
    pthread_mutex_lock(&l->lock);
    struct node_heard *h = find(l, node);
    if (!h && l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct node_heard *grown = realloc(l->nodes, cap * sizeof(*grown));
        if (grown) {
            l->nodes = grown;
            l->cap = cap;
        }
    }
    if (!h && l->n < l->cap && (l->nodes[l->n].id = strdup(node)))
        h = &l->nodes[l->n++];
    if (h) { /* out of memory: the node stays unjudged, waits run to their timeout */
        h->heard_ms = now_ms;
        h->started_unix_ms = started_unix_ms;
    }
    pthread_mutex_unlock(&l->lock);
}

struct node_seen node_liveness_seen(struct node_liveness *l, const char *node)
{
    pthread_mutex_lock(&l->lock);
    const struct node_heard *h = find(l, node);
    struct node_seen seen = { h != NULL, h ? h->started_unix_ms : 0 };
    pthread_mutex_unlock(&l->lock);
    return seen;
}

bool node_liveness_lost(struct node_liveness *l, const char *node, const struct node_seen *then,
                        int64_t now_ms, char *why, size_t whylen)
{
    if (!then->known)
        return false;
    pthread_mutex_lock(&l->lock);
    const struct node_heard *h = find(l, node);
    bool lost = false;
    if (h && h->started_unix_ms != then->started_unix_ms) {
        snprintf(why, whylen, "its vmhost restarted (the new one never got the request)");
        lost = true;
    } else if (h && now_ms - h->heard_ms >= NODE_SILENT_AFTER_MS) {
        snprintf(why, whylen, "its heartbeat stopped %lld s ago",
                 (long long)((now_ms - h->heard_ms) / 1000));
        lost = true;
    }
    pthread_mutex_unlock(&l->lock);
    return lost;
}
