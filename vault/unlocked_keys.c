#include "unlocked_keys.h"

#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "crypto.h"
#include "secmem.h"

struct unlocked_key {
    char project_id[129];
    int64_t expires_ms;
    unsigned char *key; /* VAULT_KEY_BYTES, secmem */
};

void unlocked_keys_init(struct unlocked_keys *u)
{
    memset(u, 0, sizeof(*u));
    pthread_mutex_init(&u->lock, NULL);
}

static void remove_at(struct unlocked_keys *u, size_t i)
{
    secmem_free(u->keys[i].key, VAULT_KEY_BYTES);
    u->keys[i] = u->keys[--u->n];
}

void unlocked_keys_destroy(struct unlocked_keys *u)
{
    while (u->n)
        remove_at(u, u->n - 1);
    free(u->keys);
    u->keys = NULL;
    u->cap = 0;
    pthread_mutex_destroy(&u->lock);
}

/* Drops expired keys; the index of project_id's live one, or -1. Under the
 * lock. A linear scan: a vault holds the keys of the BYOK projects that
 * are in use, a handful. */
static ssize_t find_live(struct unlocked_keys *u, const char *project_id, int64_t now_ms)
{
    ssize_t found = -1;
    for (size_t i = u->n; i-- > 0;) {
        if (u->keys[i].expires_ms <= now_ms)
            remove_at(u, i);
    }
    for (size_t i = 0; i < u->n && found < 0; i++)
        if (strcmp(u->keys[i].project_id, project_id) == 0)
            found = (ssize_t)i;
    return found;
}

/* Room for one more entry; -1 when out of memory. Under the lock. */
static int reserve(struct unlocked_keys *u)
{
    if (u->n < u->cap)
        return 0;
    size_t cap = u->cap ? u->cap * 2 : 8;
    struct unlocked_key *k = realloc(u->keys, cap * sizeof(*k));
    if (!k)
        return -1;
    u->keys = k;
    u->cap = cap;
    return 0;
}

int unlocked_keys_put(struct unlocked_keys *u, const char *project_id, const unsigned char *key,
                      int64_t expires_ms)
{
    if (strlen(project_id) >= sizeof(u->keys->project_id))
        return -1;
    unsigned char *copy = secmem_alloc(VAULT_KEY_BYTES);
    if (!copy)
        return -1;
    memcpy(copy, key, VAULT_KEY_BYTES);
    int rc = -1;
    pthread_mutex_lock(&u->lock);
    /* INT64_MIN: nothing counts as expired here, the entry is replaced. */
    ssize_t i = find_live(u, project_id, INT64_MIN);
    if (i >= 0) {
        secmem_free(u->keys[i].key, VAULT_KEY_BYTES);
    } else {
        if (reserve(u) < 0)
            goto out;
        i = (ssize_t)u->n++;
        strcpy(u->keys[i].project_id, project_id);
    }
    u->keys[i].key = copy;
    u->keys[i].expires_ms = expires_ms;
    copy = NULL;
    rc = 0;
out:
    pthread_mutex_unlock(&u->lock);
    secmem_free(copy, VAULT_KEY_BYTES);
    return rc;
}

bool unlocked_keys_get(struct unlocked_keys *u, const char *project_id, int64_t now_ms,
                       unsigned char *key)
{
    pthread_mutex_lock(&u->lock);
    ssize_t i = find_live(u, project_id, now_ms);
    if (i >= 0)
        memcpy(key, u->keys[i].key, VAULT_KEY_BYTES);
    pthread_mutex_unlock(&u->lock);
    return i >= 0;
}

bool unlocked_keys_drop(struct unlocked_keys *u, const char *project_id, int64_t now_ms)
{
    pthread_mutex_lock(&u->lock);
    ssize_t i = find_live(u, project_id, now_ms);
    if (i >= 0)
        remove_at(u, (size_t)i);
    pthread_mutex_unlock(&u->lock);
    return i >= 0;
}
