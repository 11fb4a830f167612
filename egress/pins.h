/* Which names egress's DNS gave a sandbox for which addresses. A TCP
 * connection may claim a name (SNI, Host) only for an address egress
 * itself handed out for that name, so a guest-chosen IP, a forged
 * /etc/hosts or a fronted SNI buys nothing. A pin lasts as long as the
 * answer the guest got (its TTL) plus PINS_GRACE_S, for clients that use
 * an answer a little past its TTL: an address a name no longer resolves
 * to stops being that name's. Asking again renews it. Bounded: the oldest
 * pins make room for new ones. Thread-safe; times are the caller's
 * (monotonic ms), so the expiry is unit-tested without waiting. */
#ifndef AIRLOCK_EGRESS_PINS_H
#define AIRLOCK_EGRESS_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PINS_GRACE_S 60

struct pin_table;

struct pin_table *pins_new(size_t capacity);
void pins_free(struct pin_table *t);
/* ttl_s: the TTL of the answer the guest got (egress caps it). */
void pins_add(struct pin_table *t, const char *name, uint32_t addr, uint32_t ttl_s,
              int64_t now_ms);
bool pins_match(struct pin_table *t, const char *name, uint32_t addr, int64_t now_ms);

#endif
