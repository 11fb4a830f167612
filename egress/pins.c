#include "pins.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

struct pin {
    uint32_t addr;
    int64_t expires_ms;
    char name[NAME_MAX_LEN + 1];
};

struct pin_table {
    pthread_mutex_t lock;
    struct pin *pins;
    size_t capacity;
    size_t used;
    size_t next; /* slot the next new pin overwrites once full */
};

struct pin_table *pins_new(size_t capacity)
{
    struct pin_table *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->pins = calloc(capacity, sizeof(*t->pins));
    if (!t->pins) {
        free(t);
        return NULL;
    }
    t->capacity = capacity;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void pins_free(struct pin_table *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->lock);
    free(t->pins);
    free(t);
}

/* The pin of (name, addr), expired or not; NULL when there is none. */
static struct pin *pins_find_locked(struct pin_table *t, const char *name, uint32_t addr)
{
    for (size_t i = 0; i < t->used; i++)
        if (t->pins[i].addr == addr && strcmp(t->pins[i].name, name) == 0)
            return &t->pins[i];
    return NULL;
}

void pins_add(struct pin_table *t, const char *name, uint32_t addr, uint32_t ttl_s,
              int64_t now_ms)
{
    pthread_mutex_lock(&t->lock);
    struct pin *p = pins_find_locked(t, name, addr);
    if (!p) {
        size_t slot = t->used < t->capacity ? t->used++ : t->next++ % t->capacity;
        p = &t->pins[slot];
        p->addr = addr;
        snprintf(p->name, sizeof(p->name), "%s", name);
    }
    p->expires_ms = now_ms + ((int64_t)ttl_s + PINS_GRACE_S) * 1000;
    pthread_mutex_unlock(&t->lock);
}

bool pins_match(struct pin_table *t, const char *name, uint32_t addr, int64_t now_ms)
{
    pthread_mutex_lock(&t->lock);
    const struct pin *p = pins_find_locked(t, name, addr);
    bool found = p && now_ms < p->expires_ms;
    pthread_mutex_unlock(&t->lock);
    return found;
}
