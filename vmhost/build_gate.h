/* How many builds (creates, forks: sandbox_build) restore and start their
 * guests at once, first come first served. On few cores a burst of
 * creates all restoring together share the CPU and finish together, late:
 * twenty at once on two cores took ~4 s each under TCG. Let through a few
 * at a time in arrival order, the first ones answer after one restore's
 * time and the median halves, for the same total work. A pooled VM's
 * hand-out (a few ms) and the pool's refills (niced) do not pass it. */
#ifndef AIRLOCK_VMHOST_BUILD_GATE_H
#define AIRLOCK_VMHOST_BUILD_GATE_H

#include <stdint.h>

struct build_gate;

/* A gate letting `slots` builds through at once; 0: no limit. NULL when
 * out of memory. */
struct build_gate *build_gate_new(unsigned slots);
void build_gate_free(struct build_gate *g);

/* Waits for a slot, in the order callers arrived; returns how long it
 * waited (microseconds). A NULL gate or one without a limit: at once. */
int64_t build_gate_enter(struct build_gate *g);
/* Gives the slot back. */
void build_gate_leave(struct build_gate *g);

/* Callers waiting for a slot now (for /metrics). */
unsigned build_gate_waiting(struct build_gate *g);

#endif
