/* A watch's pending events, coalesced and bounded (watch_queue.h). */
#include "watch_queue.h"

#include <stdlib.h>
#include <string.h>

#define TYPE(x) AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_##x

int watch_queue_init(struct watch_queue *q, size_t cap, const char *root)
{
    *q = (struct watch_queue){ .cap = cap, .root = root };
    q->ev = calloc(cap + 1, sizeof(*q->ev));
    return q->ev ? 0 : -1;
}

static struct watch_event *at(const struct watch_queue *q, size_t i)
{
    return &q->ev[(q->head + i) % (q->cap + 1)];
}

const struct watch_event *watch_queue_at(const struct watch_queue *q, size_t i)
{
    return at(q, i);
}

void watch_queue_drop(struct watch_queue *q, size_t n)
{
    for (size_t i = 0; i < n && q->n; i++) {
        free(at(q, 0)->path);
        q->head = (q->head + 1) % (q->cap + 1);
        q->n--;
    }
}

void watch_queue_free(struct watch_queue *q)
{
    watch_queue_drop(q, q->n);
    free(q->ev);
    q->ev = NULL;
}

static bool coalesces(watch_type t)
{
    return t == TYPE(CREATE) || t == TYPE(WRITE) || t == TYPE(CHMOD);
}

/* Appends to the ring; its slot must be free. */
static int append(struct watch_queue *q, watch_type type, const char *path, bool is_dir,
                  int64_t unix_ms)
{
    char *copy = strdup(path);
    if (!copy)
        return -1;
    *at(q, q->n) = (struct watch_event){ type, copy, is_dir, unix_ms };
    q->n++;
    return 0;
}

void watch_queue_overflow(struct watch_queue *q, int64_t unix_ms)
{
    if (q->n && at(q, q->n - 1)->type == TYPE(OVERFLOW)) {
        at(q, q->n - 1)->unix_ms = unix_ms;
        return;
    }
    /* The extra slot is the overflow's: a full queue still takes it. If
     * even the copy fails, the events are lost without a marker; memory
     * that short leaves nothing better. */
    append(q, TYPE(OVERFLOW), q->root, true, unix_ms);
}

int watch_queue_push(struct watch_queue *q, watch_type type, const char *path, bool is_dir,
                     int64_t unix_ms)
{
    for (size_t i = q->n; i-- > 0;) {
        struct watch_event *e = at(q, i);
        if (e->type == TYPE(OVERFLOW))
            break; /* nothing merges across a loss */
        if (strcmp(e->path, path) != 0)
            continue;
        if (e->type == type && e->is_dir == is_dir && coalesces(type)) {
            e->unix_ms = unix_ms;
            return 0;
        }
        break; /* only the path's newest event merges */
    }
    if (q->n >= q->cap) {
        watch_queue_overflow(q, unix_ms);
        return 0;
    }
    if (append(q, type, path, is_dir, unix_ms) == 0)
        return 0;
    watch_queue_overflow(q, unix_ms);
    return -1;
}
