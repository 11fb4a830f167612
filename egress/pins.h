/* Which names egress's DNS gave a sandbox for which addresses. A TCP
 * connection may claim a name (SNI, Host) only for an address egress
 * itself handed out for that name, so a guest-chosen IP, a forged
 * /etc/hosts or a fronted SNI buys nothing. Bounded: the oldest pins make
 * room for new ones. Thread-safe. */
#ifndef AIRLOCK_EGRESS_PINS_H
#define AIRLOCK_EGRESS_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pin_table;

struct pin_table *pins_new(size_t capacity);
void pins_free(struct pin_table *t);
void pins_add(struct pin_table *t, const char *name, uint32_t addr);
bool pins_match(struct pin_table *t, const char *name, uint32_t addr);

#endif
