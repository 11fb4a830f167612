/* What a fresh guest needs before it is handed out: the current time (a VM
 * starts with the RTC's whole seconds, and a restored one far behind),
 * fresh entropy and a reseeded CRNG (restored clones would otherwise share
 * RNG state) and its own hostname, the sandbox id (clones of a snapshot
 * would otherwise all carry the template's). */
#ifndef AIRLOCK_SANDBOX_GUEST_INIT_H
#define AIRLOCK_SANDBOX_GUEST_INIT_H

#include <stddef.h>

struct sandbox;
struct guest_channel;

int sandbox_guest_init(struct sandbox *sb, struct guest_channel *ch, char *err, size_t errlen);

/* A SessionInit with a stand-in CA, for a warm-pool VM: every path the
 * hand-out's init runs (the CA install too) is then translated already
 * under TCG (with the CA: hand-out init 17 -> ? ms). Follow it with
 * sandbox_guest_init before anything else runs in the guest. */
int sandbox_guest_warm_up(struct sandbox *sb, struct guest_channel *ch, char *err, size_t errlen);

/* Just the clock: after a resume the guest is behind by the pause. */
int sandbox_guest_set_clock(struct guest_channel *ch, char *err, size_t errlen);

/* Runs prog (no arguments) in the guest and waits for it to exit 0: the
 * template build and disk checkpoints use it for `sync`. */
int sandbox_guest_run(struct guest_channel *ch, const char *prog, int timeout_ms, char *err,
                      size_t errlen);

#endif
