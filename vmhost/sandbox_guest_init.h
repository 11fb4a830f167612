/* What a fresh guest needs before it is handed out: the current time (a VM
 * starts with the RTC's whole seconds, and a restored one far behind) and
 * fresh entropy (restored clones would otherwise share RNG state). */
#ifndef AIRLOCK_SANDBOX_GUEST_INIT_H
#define AIRLOCK_SANDBOX_GUEST_INIT_H

#include <stddef.h>

struct sandbox;
struct guest_channel;

int sandbox_guest_init(struct sandbox *sb, struct guest_channel *ch, char *err, size_t errlen);

#endif
