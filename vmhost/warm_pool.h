/* A warm pool of the default template: N sandboxes restored ahead of time
 * (disk reflinked, QEMU started, state loaded, guest channel connected),
 * then paused and kept out of the registry. CreateSandbox takes one,
 * resumes it and runs the per-sandbox guest init (clock, entropy + CRNG
 * reseed, hostname): the QEMU start, state load and guestd's first answer
 * are out of its path. A thread refills the pool in the background.
 *
 * Each pooled VM lives in its final place: sandboxes/<id>/ with an id
 * generated up front, and (with networking) the namespace airlock-<id>.
 * A create that names its own id therefore does not use the pool (renaming
 * the directory would be harmless for QEMU, whose fds stay open, but the
 * namespace, the egress attachment and the crash cleanup all go by the id);
 * it restores from the snapshot as without a pool. */
#ifndef AIRLOCK_WARM_POOL_H
#define AIRLOCK_WARM_POOL_H

#include <stddef.h>

struct vmhost;
struct sandbox;
struct warm_pool;

struct warm_pool_stats {
    unsigned ready;               /* paused VMs waiting to be taken */
    unsigned target;
    unsigned long long taken;     /* creates served from the pool */
    unsigned long long missed;    /* poolable creates that found it empty */
};

/* Starts the refill thread for target VMs (> 0). */
struct warm_pool *warm_pool_start(struct vmhost *vh, unsigned target, char *err, size_t errlen);

/* Stops the refill thread and deletes every pooled VM. NULL is a no-op. */
void warm_pool_stop(struct warm_pool *pool);

/* A pooled sandbox (see sandbox_adopt_pooled), or NULL when the pool is
 * empty or NULL; either way the refill thread is woken. */
struct sandbox *warm_pool_take(struct warm_pool *pool);

/* Zeros for a NULL pool. */
void warm_pool_get_stats(struct warm_pool *pool, struct warm_pool_stats *out);

#endif
