/* A warm pool of one template version: sandboxes restored ahead of time
 * (disk reflinked, QEMU started, state loaded, guest channel connected),
 * then paused and kept out of the registry. CreateSandbox takes one,
 * resumes it and runs the per-sandbox guest init (clock, entropy + CRNG
 * reseed, hostname): the QEMU start, state load and guestd's first answer
 * are out of its path. A thread refills the pool in the background to a
 * target that follows the pool's recent creates between a floor and a
 * ceiling, within the node's --pool-memory-mib (pool_demand.h).
 *
 * Spares: while a pool is in use (a floor or ceiling above 0) it also
 * keeps --warm-pool-spares QEMUs started ahead with the template's state
 * loaded, paused (sandbox_spare_start). A refill continues one, and so
 * does a create that finds no ready VM: QEMU's start and the state load
 * (about two thirds of a restore's time here under TCG) leave it. Spares
 * come first: each costs only a QEMU start and a state load.
 *
 * Each pooled VM lives as sandboxes/<pool id>/ in namespace
 * airlock-<pool id>, not attached to egress: a detached build
 * (sandbox_build.h) warmed up by sandbox_pool_warm() and handed out by
 * sandbox_hand_out() (sandbox_pool.h).
 * A create that names its own id gets one too: directory and namespace
 * are renamed to that id when it is handed out, then it is attached. */
#ifndef AIRLOCK_WARM_POOL_H
#define AIRLOCK_WARM_POOL_H

#include <stddef.h>

#include "airlock_error.h"

struct vmhost;
struct sandbox;
struct warm_pool;
struct template_version;

/* A pooled VM's QEMU runs this much nicer than vmhost until it is handed
 * out (then as nice as vmhost: vm_set_nice): filling the pool in the
 * background yields the CPU to the VMs in use and to creates that found
 * the pool empty. */
#define WARM_POOL_NICE 10

struct warm_pool_stats {
    unsigned ready;               /* paused VMs waiting to be taken */
    unsigned target;              /* what it fills to now: demand within min..max and memory */
    unsigned min, max;            /* the floor and the ceiling */
    double demand_per_s;          /* the recent peak create rate (pool_demand.h) */
    unsigned vm_memory_mb;        /* one VM's guest memory */
    unsigned long long memory_bytes; /* the ready VMs' guest memory */
    unsigned long long taken;     /* creates served from the pool */
    unsigned long long missed;    /* poolable creates that found it empty */
    unsigned spares;              /* QEMUs started ahead, waiting (--warm-pool-spares) */
};

/* Starts the refill thread for a pool of VMs restored from t (a default
 * size or a named version), which the pool holds a reference to until
 * warm_pool_stop(); its limits as warm_pool_set_limits'. */
struct warm_pool *warm_pool_start(struct vmhost *vh, struct template_version *t, unsigned min,
                                  unsigned max, char *err, size_t errlen);

/* New limits (the scheduler's set_pool, a template's spec): the pool
 * keeps at least min and at most max VMs, following its creates between
 * them (pool_demand.h) within the node's --pool-memory-mib; VMs beyond
 * the new target go, newest first. 0/0: no pool. INVALID naming the value
 * when they cannot be held (min above max, the pool memory below one VM
 * or below min VMs). */
int warm_pool_set_limits(struct warm_pool *pool, unsigned min, unsigned max,
                         struct airlock_error *e);

/* Stops the refill thread, waits for creates handing a VM out, and deletes
 * every pooled VM. NULL is a no-op. */
void warm_pool_stop(struct warm_pool *pool);

/* A pooled sandbox (see sandbox_hand_out), or NULL when the pool is
 * empty or NULL; either way the refill thread is woken. Every VM taken is
 * followed by warm_pool_handed_out() once its create has finished (either
 * way): refills wait until no VM is being handed out. */
struct sandbox *warm_pool_take(struct warm_pool *pool);
void warm_pool_handed_out(struct warm_pool *pool);

/* For a create that found no ready VM (warm_pool_take gave NULL): a spare
 * QEMU of the pool's template waiting for its state (sandbox_build.h:
 * sandbox_spare_start, its room on the node claimed), for the create's
 * build to restore into, or NULL. */
struct sandbox *warm_pool_take_spare(struct warm_pool *pool);

/* Zeros for a NULL pool. */
void warm_pool_get_stats(struct warm_pool *pool, struct warm_pool_stats *out);

#endif
