#include "exec_slots.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quota.h"

struct exec_slots_key {
    char key_id[64];
    unsigned running;
};

void exec_slots_init(struct exec_slots *s, unsigned max)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    s->max = max;
}

void exec_slots_destroy(struct exec_slots *s)
{
    free(s->keys);
    pthread_mutex_destroy(&s->lock);
}

/* key_id's entry, added when add is true (NULL out of memory or when
 * absent). Under s->lock. */
static struct exec_slots_key *key_entry(struct exec_slots *s, const char *key_id, bool add)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->keys[i].key_id, key_id) == 0)
            return &s->keys[i];
    if (!add)
        return NULL;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct exec_slots_key *keys = realloc(s->keys, cap * sizeof(*keys));
        if (!keys)
            return NULL;
        s->keys = keys;
        s->cap = cap;
    }
    struct exec_slots_key *k = &s->keys[s->n++];
    snprintf(k->key_id, sizeof(k->key_id), "%s", key_id);
    k->running = 0;
    return k;
}

int exec_slot_take(struct exec_slots *s, const char *key_id, struct exec_slot *out,
                   struct airlock_error *e)
{
    memset(out, 0, sizeof(*out));
    if (s->max == 0)
        return 0;
    pthread_mutex_lock(&s->lock);
    struct exec_slots_key *k = key_entry(s, key_id, true);
    int rc = 0;
    if (!k) {
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    } else if (k->running >= s->max) {
        char whose[80];
        snprintf(whose, sizeof(whose), "key %s", key_id);
        rc = quota_refuse_cap(e, whose, "execs", k->running, 1, s->max);
    } else {
        k->running++;
        out->slots = s;
        snprintf(out->key_id, sizeof(out->key_id), "%s", key_id);
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void exec_slot_give(struct exec_slot *slot)
{
    struct exec_slots *s = slot->slots;
    if (!s)
        return;
    slot->slots = NULL;
    pthread_mutex_lock(&s->lock);
    struct exec_slots_key *k = key_entry(s, slot->key_id, false);
    if (k && --k->running == 0)
        *k = s->keys[--s->n]; /* the last one takes its place */
    pthread_mutex_unlock(&s->lock);
}
