/* Token buckets per secret: a secret with a limit of N per minute and a
 * burst of B holds at most B tokens and regains N per minute; an injection
 * takes one. Kept in
 * memory, so each vault replica counts on its own (see docs/vault.md). */
#ifndef AIRLOCK_VAULT_RATELIMIT_H
#define AIRLOCK_VAULT_RATELIMIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ratelimit_bucket;

struct ratelimit {
    pthread_mutex_t lock;
    struct ratelimit_bucket *buckets;
    size_t n, cap;
};

void ratelimit_init(struct ratelimit *rl);
void ratelimit_destroy(struct ratelimit *rl);

/* Takes a token from secret_id's bucket; false when it is empty (or when
 * out of memory: fail closed). per_minute 0 = unlimited; burst 0 =
 * per_minute. */
bool ratelimit_take(struct ratelimit *rl, const char *secret_id, uint32_t per_minute,
                    uint32_t burst, int64_t now_ms);

/* Forgets a deleted secret's bucket. */
void ratelimit_forget(struct ratelimit *rl, const char *secret_id);

#endif
