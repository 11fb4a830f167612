/* A cap on the execs each API key has in flight through this gateway
 * (--max-execs-per-key): every exec holds a gateway thread (REST) or call
 * (gRPC) and a vmhost stream for as long as its command runs, so one key
 * must not hold them all. An exec takes a slot before its vmhost stream
 * opens and gives it back when the stream ends, however it ends. Counted
 * per gateway: behind N replicas a key may run N times the cap.
 * Thread-safe. */
#ifndef AIRLOCK_GATEWAY_EXEC_SLOTS_H
#define AIRLOCK_GATEWAY_EXEC_SLOTS_H

#include <pthread.h>
#include <stddef.h>

#include "airlock_error.h"

#define EXEC_SLOTS_DEFAULT_MAX 64

struct exec_slots_key; /* a key with execs in flight, and how many */

struct exec_slots {
    pthread_mutex_t lock;
    unsigned max;                 /* per key; 0: no cap */
    struct exec_slots_key *keys;  /* only keys with execs in flight */
    size_t n, cap;
};

/* A slot an exec holds; give it back once (a slot never taken, all
 * zero, gives nothing back). */
struct exec_slot {
    struct exec_slots *slots;
    char key_id[64];
};

void exec_slots_init(struct exec_slots *s, unsigned max);
void exec_slots_destroy(struct exec_slots *s);

/* A slot for one more exec of key_id: 0, or -1 with e (quota) naming the
 * cap and how many of the key's run ("quota exceeded: execs: 64 in use +
 * 1 requested > limit 64 (key key_x)"; REST 429 quota_exceeded). */
int exec_slot_take(struct exec_slots *s, const char *key_id, struct exec_slot *out,
                   struct airlock_error *e);
void exec_slot_give(struct exec_slot *slot);

#endif
