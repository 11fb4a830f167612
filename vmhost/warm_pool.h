/* A warm pool of one template version: N sandboxes restored ahead of time
 * (disk reflinked, QEMU started, state loaded, guest channel connected),
 * then paused and kept out of the registry. CreateSandbox takes one,
 * resumes it and runs the per-sandbox guest init (clock, entropy + CRNG
 * reseed, hostname): the QEMU start, state load and guestd's first answer
 * are out of its path. A thread refills the pool in the background.
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
    unsigned target;
    unsigned long long taken;     /* creates served from the pool */
    unsigned long long missed;    /* poolable creates that found it empty */
};

/* Starts the refill thread for target VMs (0: it waits for a target)
 * restored from t (a default size or a named version), which the pool
 * holds a reference to until warm_pool_stop(). */
struct warm_pool *warm_pool_start(struct vmhost *vh, struct template_version *t, unsigned target,
                                  char *err, size_t errlen);

/* A new target (the scheduler's set_pool): the pool refills up to it, or
 * deletes its newest VMs beyond it. -1 only when out of memory. */
int warm_pool_set_target(struct warm_pool *pool, unsigned target, char *err, size_t errlen);

/* Stops the refill thread, waits for creates handing a VM out, and deletes
 * every pooled VM. NULL is a no-op. */
void warm_pool_stop(struct warm_pool *pool);

/* A pooled sandbox (see sandbox_hand_out), or NULL when the pool is
 * empty or NULL; either way the refill thread is woken. Every VM taken is
 * followed by warm_pool_handed_out() once its create has finished (either
 * way): refills wait until no VM is being handed out. */
struct sandbox *warm_pool_take(struct warm_pool *pool);
void warm_pool_handed_out(struct warm_pool *pool);

/* Zeros for a NULL pool. */
void warm_pool_get_stats(struct warm_pool *pool, struct warm_pool_stats *out);

#endif
