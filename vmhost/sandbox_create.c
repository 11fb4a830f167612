/* The create (sandbox.h): a pooled VM handed out when the template's warm
 * pool has one, else a build (into a spare QEMU of the pool when one
 * waits); either way the sandbox is running, its guest
 * initialized, before anyone hears of it. */
#include "sandbox.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "sandbox_build.h"
#include "sandbox_pool.h"
#include "template_registry.h"
#include "template_shared.h"
#include "vmhost_metrics.h"
#include "warm_pool.h"

#define SANDBOX_MIN_MEMORY_MB 128

static int sandbox_validate(const struct vmhost *vh, const struct sandbox_create_params *p,
                            struct airlock_error *e)
{
    if (p->id && *p->id && !sandbox_id_valid(p->id))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "id: must be 1-64 characters of a-z, 0-9, '_' or '-'");
    if (p->vcpus > vh->cfg.sandbox_max_vcpus)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "vcpus: %u is more than this node's maximum of %u "
                                 "(--sandbox-max-vcpus)",
                                 p->vcpus, vh->cfg.sandbox_max_vcpus);
    if (p->memory_mb &&
        (p->memory_mb < SANDBOX_MIN_MEMORY_MB || p->memory_mb > vh->cfg.sandbox_max_memory_mb))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "memory_mb: %u is outside this node's %d..%u "
                                 "(--sandbox-max-memory-mb)",
                                 p->memory_mb, SANDBOX_MIN_MEMORY_MB, vh->cfg.sandbox_max_memory_mb);
    /* egress checks the characters. */
    if (p->project_id && strlen(p->project_id) >= SANDBOX_PROJECT_ID_SIZE)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "project_id: at most 128 characters");
    return 0;
}

int sandbox_create(struct vmhost *vh, const struct sandbox_create_params *p, struct sandbox **out,
                   struct airlock_error *e)
{
    int64_t started_us = clock_monotonic_us();
    int rc = sandbox_validate(vh, p, e);
    if (rc < 0)
        return rc;
    /* The template version (NULL: cold boot) decides the size. */
    struct template_version *t;
    rc = template_acquire_shared(vh, p->template_name, p->vcpus, p->memory_mb,
                                 p->template_store_object, &t, e);
    if (rc < 0)
        return rc;
    /* A pooled VM takes the id asked for (sandbox_pool.h); an id in use
     * goes the build way, which answers that it exists. One with volumes
     * too: a pooled guest has its slots empty, and telling it of a disk
     * after its hand-out costs what a restore of its own does. */
    bool poolable = t && t->pool && !(p->id && *p->id && sandbox_id_taken(vh, p->id)) &&
                    p->n_volumes == 0;
    struct warm_pool *pool = poolable ? t->pool : NULL;
    struct sandbox *sb = warm_pool_take(pool);
    if (sb) {
        rc = sandbox_hand_out(sb, p, e);
        warm_pool_handed_out(pool); /* its refill may start now */
        if (rc == 0 || e->class != AIRLOCK_ERR_INTERNAL) {
            template_release(t); /* the pooled sandbox holds its own */
            *out = rc == 0 ? sb : NULL;
            if (rc == 0)
                vmhost_metrics_created(vh->metrics, "pool", clock_monotonic_us() - started_us);
            return rc;
        }
        log_warn("pooled sandbox failed: restoring instead", "error=\"%s\"", e->message);
        airlock_error_clear(e);
    }
    /* No ready VM: a QEMU started ahead, when one waits, saves the
     * restore its start and state load. Should the build into it fail on its own
     * (INTERNAL: e.g. the spare's QEMU died), one more is tried with a
     * QEMU of the create's own. */
    struct sandbox *spare = warm_pool_take_spare(pool);
    if (spare) {
        template_version_get(t); /* the build's, released as it takes the spare */
        struct sandbox_build b = { .params = p, .tmpl = t, .spare = spare };
        rc = sandbox_build(vh, &b, out, e);
        if (rc == 0 || e->class != AIRLOCK_ERR_INTERNAL) {
            template_release(t);
            if (rc == 0)
                vmhost_metrics_created(vh->metrics, "prestarted",
                                       clock_monotonic_us() - started_us);
            return rc;
        }
        log_warn("restore into a spare QEMU failed: starting one", "error=\"%s\"", e->message);
        airlock_error_clear(e);
    }
    struct sandbox_build b = { .params = p, .tmpl = t };
    rc = sandbox_build(vh, &b, out, e);
    if (rc == 0)
        vmhost_metrics_created(vh->metrics, t ? "restore" : "cold",
                               clock_monotonic_us() - started_us);
    return rc;
}
