#include "sandbox_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "sandbox_build.h"
#include "sandbox_guest_init.h"
#include "sandbox_internal.h"
#include "sandbox_net.h"
#include "sandbox_network.h"

#define POOL_WARM_EXEC_TIMEOUT_MS 30000

int sandbox_pool_warm(struct sandbox *sb, char *err, size_t errlen)
{
    /* The first round installs a stand-in CA and runs one exec: an exec's
     * paths (guestd's spawn, fork, exec, ld.so, libc) run for the first
     * time since the restore cost the first exec after a hand-out ~245 ms
     * against ~50 for the next. The second round installs no CA (which
     * empties the slot again) and warms what a continue after a pause
     * runs (timers catching up); the hand-out repeats the init with real
     * values. */
    for (int round = 0; round < 2; round++) {
        if (round > 0 && (vm_qmp_command(sb->vm, "stop", NULL, err, errlen) < 0 ||
                          vm_qmp_command(sb->vm, "cont", NULL, err, errlen) < 0))
            return -1;
        if ((round == 0 ? sandbox_guest_warm_up : sandbox_guest_init)(sb, sb->channel, err,
                                                                      errlen) < 0)
            return -1;
        if (round == 0 &&
            sandbox_guest_run(sb->channel, "true", POOL_WARM_EXEC_TIMEOUT_MS, err, errlen) < 0)
            return -1;
    }
    return vm_qmp_command(sb->vm, "stop", NULL, err, errlen);
}

/* A pooled VM being handed out, its sb->id just changed by the caller
 * (under the registry lock): renames old_id's directory and namespace to
 * sb->id's and updates sb->dir, sb->disk and the VM's paths. All or
 * nothing: on failure everything keeps old_id's names (and the caller
 * gives sb its old id back). A failure is INTERNAL. */
static int rename_from(struct sandbox *sb, const char *old_id, struct airlock_error *e)
{
    char dir[PATH_MAX], disk[PATH_MAX];
    if (fs_path(dir, sizeof(dir), "%s/%s", sb->vh->sandboxes_dir, sb->id) < 0 ||
        fs_path(disk, sizeof(disk), "%s/disk.ext4", dir) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "data directory path too long: %s",
                                 sb->vh->sandboxes_dir);
    /* NOREPLACE: a directory of that name (a concurrent create of the same
     * id) is never taken over. */
    if (renameat2(AT_FDCWD, sb->dir, AT_FDCWD, dir, RENAME_NOREPLACE) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s to %s: %s", sb->dir, dir,
                                 strerror(errno));
    if (sb->net_up && sandbox_net_rename(old_id, sb->id, AIRLOCK_ERROR_MSG(e)) < 0)
        goto undo_dir;
    if (vm_move_run_dir(sb->vm, dir, AIRLOCK_ERROR_MSG(e)) < 0)
        goto undo_net;
    pthread_mutex_lock(&sb->lock);
    memcpy(sb->dir, dir, sizeof(sb->dir));
    memcpy(sb->disk, disk, sizeof(sb->disk));
    pthread_mutex_unlock(&sb->lock);
    return 0;
undo_net:
    if (sb->net_up)
        sandbox_net_rename(sb->id, old_id, NULL, 0);
undo_dir:
    renameat2(AT_FDCWD, dir, AT_FDCWD, sb->dir, RENAME_NOREPLACE);
    return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
}

int sandbox_hand_out(struct sandbox *sb, const struct sandbox_create_params *p,
                     struct airlock_error *e)
{
    struct vmhost *vh = sb->vh;
    int64_t started = clock_monotonic_us();
    int rc = 0;
    /* Registered under the id asked for (else its own) in one step with
     * the checks, so the registry stays the one place ids are decided. */
    char pool_id[sizeof(sb->id)];
    memcpy(pool_id, sb->id, sizeof(pool_id));
    bool rename = p->id && *p->id && strcmp(p->id, pool_id) != 0;
    pthread_mutex_lock(&vh->lock);
    rc = sandbox_registry_admit_locked(vh, sb, rename ? p->id : pool_id, e);
    pthread_mutex_unlock(&vh->lock);
    if (rc < 0) {
        sandbox_discard(sb);
        return rc;
    }
    if (rename && rename_from(sb, pool_id, e) < 0) {
        pthread_mutex_lock(&vh->lock);
        sandbox_registry_remove_locked(vh, sb);
        memcpy(sb->id, pool_id, sizeof(sb->id));
        pthread_mutex_unlock(&vh->lock);
        log_warn("pooled sandbox not renamed", "sandbox=%s error=\"%s\"", pool_id, e->message);
        sandbox_discard(sb);
        return -1;
    }
    pthread_mutex_lock(&sb->lock);
    sb->from_pool = true;
    sb->created_unix_ms = clock_realtime_ms();
    sb->last_activity_unix_ms = sb->created_unix_ms;
    pthread_mutex_unlock(&sb->lock);
    int64_t named = clock_monotonic_us();
    /* Filled in the background, it runs like any sandbox from now on (as
     * nice as vmhost). A failure leaves it slower, not broken. */
    if (vm_set_nice(sb->vm, getpriority(PRIO_PROCESS, 0), AIRLOCK_ERROR_MSG(e)) < 0)
        log_warn("pooled sandbox keeps its background CPU priority", "sandbox=%s error=\"%s\"",
                 sb->id, e->message);
    if (vm_qmp_command(sb->vm, "cont", NULL, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    int64_t continued = clock_monotonic_us();
    /* A pooled VM is attached to egress only now, under its own id, with
     * its project and policy (deny-all when unset): sandbox_set_policy. */
    snprintf(sb->project_id, sizeof(sb->project_id), "%s", p->project_id ? p->project_id : "");
    rc = sandbox_set_policy(sb, p->policy, e);
    if (rc < 0)
        goto fail;
    int64_t attached = clock_monotonic_us(), initialized;
    if (sandbox_finish_create(sb, &initialized, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    int64_t done = clock_monotonic_us();
    /* Where the time went: registry + renames, cont, egress policy,
     * guest init, record. */
    log_info("sandbox created",
             "sandbox=%s vcpus=%u memory_mb=%u accel=%s from=pool pool_id=%s us=%lld name_us=%lld "
             "cont_us=%lld policy_us=%lld init_us=%lld record_us=%lld",
             sb->id, sb->vcpus, sb->memory_mb, vm_accel_name(vh->accel), pool_id,
             (long long)(done - started), (long long)(named - started),
             (long long)(continued - named), (long long)(attached - continued),
             (long long)(initialized - attached), (long long)(done - initialized));
    return 0;
fail:
    if (rc == 0) /* a step below the sandbox module failed, with only a message */
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    sandbox_abandon(sb, e->message);
    return -1;
}
