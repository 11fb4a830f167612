/* Data keys of unlocked BYOK projects (UnlockProject): held in locked,
 * no-dump memory until their time is up, LockProject, or vault stops —
 * never written anywhere, so a restart locks every project again. The
 * customer key itself is not kept, only the data key it unwrapped. */
#ifndef AIRLOCK_VAULT_UNLOCKED_KEYS_H
#define AIRLOCK_VAULT_UNLOCKED_KEYS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unlocked_key;

struct unlocked_keys {
    pthread_mutex_t lock;
    struct unlocked_key *keys;
    size_t n, cap;
};

void unlocked_keys_init(struct unlocked_keys *u);
/* Zeroes and frees every key. */
void unlocked_keys_destroy(struct unlocked_keys *u);

/* Holds a copy of key (VAULT_KEY_BYTES) for project_id until expires_ms
 * (clock_monotonic_ms), replacing an earlier one. 0, or -1 when memory
 * cannot be locked. */
int unlocked_keys_put(struct unlocked_keys *u, const char *project_id, const unsigned char *key,
                      int64_t expires_ms);

/* Copies project_id's key into key when it is unlocked at now_ms; an
 * expired one is zeroed and dropped. */
bool unlocked_keys_get(struct unlocked_keys *u, const char *project_id, int64_t now_ms,
                       unsigned char *key);

/* Zeroes and drops project_id's key; whether there was a live one. */
bool unlocked_keys_drop(struct unlocked_keys *u, const char *project_id, int64_t now_ms);

#endif
