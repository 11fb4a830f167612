/* Keeps every gateway's key cache (key_cache.h) in step with revocations
 * made anywhere: the scheduler publishes the id of each key it revokes on
 * KEY_REVOKED_SUBJECT (events_subject.h) and every gateway drops that
 * key's entries. Core NATS may lose messages while disconnected, so each
 * disconnect and reconnect flushes the whole cache, and the cache is
 * bypassed until the connection is back. */
#ifndef AIRLOCK_GATEWAY_KEY_REVOCATIONS_H
#define AIRLOCK_GATEWAY_KEY_REVOCATIONS_H

#include <nats/nats.h>
#include <stdbool.h>

#include "key_cache.h"

/* The disconnect and reconnect callbacks, set before connecting. */
natsStatus key_revocations_options(natsOptions *opts, struct key_cache *c);

/* Subscribes nc (NATS.c subscribes again after every reconnect). */
natsStatus key_revocations_subscribe(natsConnection *nc, struct key_cache *c,
                                     natsSubscription **sub);

/* Whether revocations reach this gateway now, so the cache may be used. */
bool key_revocations_live(natsConnection *nc);

#endif
