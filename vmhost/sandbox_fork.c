/* Fork (checkpoint.h): new sandboxes made by the builder a create uses
 * (own id, directory, network namespace, egress policy) whose disk is a
 * reflink of the checkpoint's and which load its full state instead of the
 * template's (a disk checkpoint cold-boots them). The guest init after the
 * load gives each its own clock, CRNG reseed and hostname, so forks diverge
 * from the first random number on. The checkpoint is pinned (or, for a
 * fork of the live sandbox, taken into a pin directory) for the duration. */
#include <stdio.h>
#include <stdlib.h>

#include "checkpoint.h"
#include "clock.h"
#include "log.h"
#include "sandbox_build.h"
#include "sandbox_internal.h"
#include "sandbox_record.h"
#include "template_version.h"
#include "volume_store.h"

#define FORK_MAX_COUNT 16

/* Deletes the forks made so far and drops their references. */
static void discard_forks(struct sandbox **forks, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct airlock_error e = { 0 };
        if (sandbox_delete(forks[i]->vh, forks[i]->id, NULL, false, NULL, 0, &e) < 0)
            log_warn("cannot delete a fork after a failed fork", "sandbox=%s error=\"%s\"",
                     forks[i]->id, e.message);
        sandbox_put(forks[i]);
    }
}

/* Deletes the volumes cloned for forks (after the forks are gone). */
static void discard_clones(struct vmhost *vh, char *const *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct airlock_error e = { 0 };
        if (volume_delete(vh->volumes, ids[i], &e) < 0)
            log_warn("cannot delete a volume clone after a failed fork", "volume=%s error=\"%s\"",
                     ids[i], e.message);
    }
}

int sandbox_fork(struct sandbox *sb, const char *checkpoint, unsigned count,
                 const Airlock__Egress__V1__Policy *policy, char *const *volume_ids,
                 size_t n_volume_ids, struct sandbox ***out, struct airlock_error *e)
{
    int64_t started = clock_monotonic_ms();
    if (count < 1 || count > FORK_MAX_COUNT)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "count: %u is outside 1..%d", count,
                                 FORK_MAX_COUNT);
    size_t rw = sandbox_volumes_writable(sb);
    if (n_volume_ids != count * rw)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "volume_ids: %u forks of a sandbox with %zu read-write volumes "
                                 "need %zu, got %zu",
                                 count, rw, count * rw, n_volume_ids);
    size_t cloned = 0; /* of volume_ids */
    /* Without a policy of their own, forks get the parent's as it is now:
     * a fork is no way around the parent's network rules. */
    Airlock__Egress__V1__Policy *inherited = NULL;
    if (!policy) {
        if (sandbox_policy_load(sb, &inherited, AIRLOCK_ERROR_MSG(e)) < 0)
            return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        policy = inherited;
    }
    struct checkpoint_files f;
    bool live = !checkpoint || !*checkpoint;
    int rc = live ? checkpoint_take_temporary(sb, &f, e) : checkpoint_pin(sb, checkpoint, &f, e);
    if (rc < 0)
        goto out_policy;
    int64_t checkpointed = clock_monotonic_ms();
    struct sandbox **forks = calloc(count, sizeof(*forks));
    unsigned made = 0;
    if (!forks) {
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        goto out;
    }
    struct sandbox_create_params p = {
        .vcpus = sb->vcpus,       /* the state fits only the same machine */
        .memory_mb = sb->memory_mb,
        .policy = policy,
        .project_id = sb->project_id, /* forks are sandboxes of the same project */
        .volume_copies = sb->dir,
    };
    for (; made < count; made++) {
        /* Its volumes: clones of the checkpoint's copies, before its VM. */
        Airlock__Vmhost__V1__VolumeAttachment vol_msgs[VM_VOLUME_SLOTS], *vols[VM_VOLUME_SLOTS];
        rc = sandbox_volumes_fork(sb, f.dir, volume_ids, n_volume_ids, &cloned, vol_msgs, vols,
                                  &p.n_volumes, e);
        if (rc < 0)
            break;
        p.volumes = vols;
        /* The parent's template version: its memory file and exec defaults. */
        if (sb->tmpl)
            template_version_get(sb->tmpl);
        struct sandbox_build b = {
            .params = &p,
            .tmpl = sb->tmpl,
            .from_disk = f.disk,
            .from_state = f.full ? f.state : NULL,
        };
        rc = sandbox_build(sb->vh, &b, &forks[made], e);
        if (rc < 0)
            break;
    }
    if (rc < 0) {
        log_warn("fork failed", "sandbox=%s made=%u of %u error=\"%s\"", sb->id, made, count,
                 e->message);
        discard_forks(forks, made);
        discard_clones(sb->vh, volume_ids, cloned);
        free(forks);
        goto out;
    }
    /* Where the time went: the (temporary or pinned) checkpoint, the
     * creates (each logs its own stages, from=checkpoint). */
    int64_t done = clock_monotonic_ms();
    log_info("sandbox forked", "sandbox=%s from=%s count=%u ms=%lld checkpoint_ms=%lld "
             "create_ms=%lld", sb->id, live ? "live" : checkpoint, count,
             (long long)(done - started), (long long)(checkpointed - started),
             (long long)(done - checkpointed));
    *out = forks;
out:
    checkpoint_unpin(&f);
out_policy:
    if (inherited)
        airlock__egress__v1__policy__free_unpacked(inherited, NULL);
    return rc;
}
