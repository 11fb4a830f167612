/* Suspend to disk and resume from it.
 *
 * Suspend: QMP stop, the whole VM state (guest RAM included: a restored
 * sandbox maps the template's memory file privately, so what it changed
 * exists only in QEMU's copy-on-write pages) migrated into
 * DIR/suspend.tmp/state, a reflink of the disk beside it, both fsynced,
 * then suspend.tmp renamed to DIR/suspend and DIR fsynced, then the record
 * says suspended (sandbox_record.h); only then does QEMU quit. A crash or
 * an error before the record leaves the VM (stopped, or running again
 * after an error; a restarted vmhost adopts and continues it and removes
 * suspend.tmp/suspend), after it a complete snapshot (the restart stops a
 * QEMU still there). Never a torn one. Points where the durability tests
 * crash vmhost on purpose: crash_point.h.
 *
 * Resume: the disk comes back from the snapshot's reflink, a new QEMU with
 * the sandbox's original configuration loads the state, continues, and the
 * guest gets the per-sandbox init (its clock is as old as the snapshot).
 * The snapshot is removed once the sandbox runs: from then on the VM is the
 * truth. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "crash_point.h"
#include "fsutil.h"
#include "log.h"
#include "sandbox_internal.h"
#include "sandbox_guest_init.h"
#include "sandbox_network.h"
#include "sandbox_record.h"
#include "sandbox_stop.h"
#include "sandbox_shared_store.h"

#define SUSPEND_MIGRATE_TIMEOUT_MS 300000
/* A suspend writes up to the guest's RAM; beyond that, device state. */
#define SUSPEND_SPACE_MARGIN (64ull << 20)

struct suspend_paths {
    char tmp[PATH_MAX];     /* DIR/suspend.tmp */
    char dir[PATH_MAX];     /* DIR/suspend */
    char state[PATH_MAX];   /* in tmp while writing, in dir when reading */
    char disk[PATH_MAX];
};

static int suspend_paths(const struct sandbox *sb, bool writing, struct suspend_paths *p,
                         struct airlock_error *e)
{
    const char *in = writing ? p->tmp : p->dir;
    if (fs_path(p->tmp, sizeof(p->tmp), "%s/suspend.tmp", sb->dir) < 0 ||
        fs_path(p->dir, sizeof(p->dir), "%s/suspend", sb->dir) < 0 ||
        fs_path(p->state, sizeof(p->state), "%s/state", in) < 0 ||
        fs_path(p->disk, sizeof(p->disk), "%s/disk.ext4", in) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "sandbox directory path too long: %s",
                                 sb->dir);
    return 0;
}

/* The stopped VM's state and disk into p->tmp, durably, then renamed to
 * p->dir; a failure's message in e (its class is the caller's). */
static int write_snapshot(struct sandbox *sb, struct vm *vm, const struct suspend_paths *p,
                          struct airlock_error *e)
{
    if (mkdir(p->tmp, 0700) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", p->tmp, strerror(errno));
    if (vm_save_full_state(vm, p->state, SUSPEND_MIGRATE_TIMEOUT_MS, AIRLOCK_ERROR_MSG(e)) < 0)
        return -1;
    crash_point("suspend-migrated");
    if (store_clone_file(sb->disk, p->disk, AIRLOCK_ERROR_MSG(e)) < 0 ||
        fs_fsync_file(p->state, AIRLOCK_ERROR_MSG(e)) < 0 ||
        fs_fsync_file(p->disk, AIRLOCK_ERROR_MSG(e)) < 0 ||
        fs_fsync_dir(p->tmp, AIRLOCK_ERROR_MSG(e)) < 0)
        return -1;
    if (rename(p->tmp, p->dir) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s to %s: %s", p->tmp, p->dir,
                                 strerror(errno));
    if (fs_fsync_dir(sb->dir, AIRLOCK_ERROR_MSG(e)) < 0)
        return -1;
    crash_point("suspend-renamed");
    return 0;
}

/* The complete local snapshot (renamed into DIR/suspend) into the shared
 * store. */
static int upload(struct sandbox *sb, struct airlock_error *e)
{
    struct suspend_paths done;
    if (suspend_paths(sb, false, &done, e) < 0)
        return -1;
    return sandbox_shared_store_upload(sb, done.state, done.disk, e);
}

/* The record says suspended before QEMU may quit: from here on a restart
 * keeps the snapshot, before it the VM. */
static int record_suspended(struct sandbox *sb, enum sb_state was, bool by_stop, char *err,
                            size_t errlen)
{
    pthread_mutex_lock(&sb->lock);
    sandbox_transition(sb, SB_SUSPENDED);
    sb->stop_suspended_from = by_stop ? was : 0;
    pthread_mutex_unlock(&sb->lock);
    if (sandbox_record_save(sb, err, errlen) == 0)
        return 0;
    pthread_mutex_lock(&sb->lock);
    if (sb->state == SB_SUSPENDED) /* back to the failure path's state */
        sandbox_transition(sb, SB_SUSPENDING);
    sb->stop_suspended_from = 0;
    pthread_mutex_unlock(&sb->lock);
    return -1;
}


static int suspend(struct sandbox *sb, bool by_stop, struct airlock_error *e)
{
    int64_t started = clock_monotonic_ms();
    struct suspend_paths p;
    if (suspend_paths(sb, true, &p, e) < 0)
        return -1;
    pthread_mutex_lock(&sb->lock);
    enum sb_state was = sb->state;
    if ((was != SB_RUNNING && was != SB_PAUSED) || !sb->vm) {
        pthread_mutex_unlock(&sb->lock);
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "sandbox %s is %s; only a running or paused sandbox can be "
                                 "suspended",
                                 sb->id, sb_state_name(was));
    }
    char what[128];
    snprintf(what, sizeof(what), "a suspend of sandbox %s (%u MiB of memory)", sb->id,
             sb->memory_mb);
    if (store_require_free(&sb->vh->store,
                           ((unsigned long long)sb->memory_mb << 20) + SUSPEND_SPACE_MARGIN, what,
                           AIRLOCK_ERROR_MSG(e)) < 0) {
        pthread_mutex_unlock(&sb->lock);
        log_warn("sandbox suspend refused", "sandbox=%s error=\"%s\"", sb->id, e->message);
        return airlock_error_classify(e, AIRLOCK_ERR_CAPACITY);
    }
    sandbox_transition(sb, SB_SUSPENDING); /* from here on only this call uses sb->vm */
    struct vm *vm = sb->vm;
    pthread_mutex_unlock(&sb->lock);

    char ignored[256];
    enum airlock_err class = AIRLOCK_ERR_INTERNAL;
    /* Leftovers of an earlier attempt, or of a resume whose cleanup failed. */
    fs_remove_tree(p.tmp, ignored, sizeof(ignored));
    fs_remove_tree(p.dir, ignored, sizeof(ignored));
    /* The guest's dirty pages of its volumes onto the images first, so a
     * suspended sandbox deleted later leaves them as its guest last wrote
     * them. Not a condition: a guest that does not answer keeps its
     * volumes crash-consistent (ext4's journal) and is suspended anyway. */
    struct airlock_error sync_e = { 0 };
    if (was == SB_RUNNING && sandbox_volumes_sync(sb, &sync_e) < 0)
        log_warn("volumes not synced before the suspend", "sandbox=%s error=\"%s\"", sb->id,
                 sync_e.message);
    if (was == SB_RUNNING && vm_qmp_command(vm, "stop", NULL, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    crash_point("suspend-stopped");
    if (write_snapshot(sb, vm, &p, e) < 0) {
        if (store_full(&sb->vh->store, AIRLOCK_ERROR_MSG(e))) /* before the partial files go */
            class = AIRLOCK_ERR_CAPACITY;
        goto fail;
    }
    /* Into the shared store before the record: a suspend answered is one
     * any node can resume. vmhost's own stop keeps it here (the control
     * plane believes those sandboxes run). */
    if (sb->vh->snapshots && !by_stop && upload(sb, e) < 0) {
        class = e->class;
        goto fail;
    }
    if (record_suspended(sb, was, by_stop, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    crash_point("suspend-recorded");

    pthread_mutex_lock(&sb->lock);
    struct guest_channel *ch = sb->channel;
    sb->channel = NULL;
    sb->vm = NULL;
    bool stored = sb->store_object[0] != '\0';
    pthread_mutex_unlock(&sb->lock);
    if (ch)
        guest_channel_close(ch);
    vm_free(vm); /* QEMU quits: its memory goes back to the host */
    sandbox_vm_gone(sb);
    /* It may resume on another node, which makes its own namespace (the
     * name is the sandbox's, on one machine too); here a resume makes it
     * again. */
    if (stored)
        sandbox_network_down(sb);
    log_info("sandbox suspended", "sandbox=%s ms=%lld dir=%s by=%s", sb->id,
             (long long)(clock_monotonic_ms() - started), p.dir, by_stop ? "stop" : "request");
    return 0;

fail:
    log_warn("sandbox suspend failed", "sandbox=%s error=\"%s\"", sb->id, e->message);
    if (!by_stop)
        sandbox_shared_store_forget(sb, NULL); /* stored, but the record failed */
    fs_remove_tree(p.tmp, ignored, sizeof(ignored));
    fs_remove_tree(p.dir, ignored, sizeof(ignored));
    /* After a completed migration QEMU still runs the VM on cont. */
    if (was == SB_RUNNING && vm_qmp_command(vm, "cont", NULL, ignored, sizeof(ignored)) < 0)
        log_warn("cannot continue the VM after a failed suspend", "sandbox=%s error=\"%s\"",
                 sb->id, ignored);
    pthread_mutex_lock(&sb->lock);
    if (sb->state == SB_SUSPENDING) /* not error: QEMU still lives */
        sandbox_transition(sb, was);
    pthread_mutex_unlock(&sb->lock);
    return airlock_error_classify(e, class);
}

int sandbox_suspend(struct sandbox *sb, struct airlock_error *e)
{
    /* Already suspended by vmhost's stop: the request only makes it a
     * suspend the control plane knows of (no resume on first use), and,
     * with a shared store, puts it there as any suspend (a failed upload
     * leaves it as it was). */
    pthread_mutex_lock(&sb->lock);
    bool by_stop = sb->state == SB_SUSPENDED && sb->stop_suspended_from;
    pthread_mutex_unlock(&sb->lock);
    if (!by_stop)
        return suspend(sb, false, e);
    if (sb->vh->snapshots && upload(sb, e) < 0)
        return -1;
    pthread_mutex_lock(&sb->lock);
    sb->stop_suspended_from = 0;
    pthread_mutex_unlock(&sb->lock);
    if (sandbox_record_save(sb, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    return 0;
}

int sandbox_suspend_for_stop(struct sandbox *sb, struct airlock_error *e)
{
    return suspend(sb, true, e);
}

int sandbox_start_from(struct sandbox *sb, const char *disk, const char *state,
                       struct airlock_error *e)
{
    /* A restore of a live sandbox kept its hold; a suspended or dead one
     * needs room again. */
    int rc = node_budget_claim(sb->vh->budget, &sb->claim, sb->vcpus, sb->memory_mb, e);
    if (rc < 0)
        return rc;
    if (unlink(sb->disk) < 0 && errno != ENOENT)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "remove %s: %s", sb->disk,
                                 strerror(errno));
    if (store_clone_file(disk, sb->disk, AIRLOCK_ERROR_MSG(e)) < 0 ||
        sandbox_network_restore(sb, e) < 0 ||
        sandbox_start_vm(sb, state != NULL, 0, AIRLOCK_ERROR_MSG(e)) < 0 ||
        (state && vm_restore_full_state(sb->vm, state, SUSPEND_MIGRATE_TIMEOUT_MS,
                                        AIRLOCK_ERROR_MSG(e)) < 0) ||
        sandbox_connect_guest(sb, AIRLOCK_ERROR_MSG(e)) < 0 ||
        sandbox_guest_init(sb, sb->channel, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    /* A cold boot (a DISK checkpoint's restore) mounted nothing; a loaded
     * state has its mounts in the guest's memory. */
    if (!state)
        return sandbox_volumes_mount(sb, e);
    sandbox_volumes_refresh(sb);
    return 0;
}

int sandbox_resume_suspended(struct sandbox *sb, struct airlock_error *e)
{
    int64_t started = clock_monotonic_ms();
    struct suspend_paths p;
    if (suspend_paths(sb, false, &p, e) < 0)
        return -1;
    pthread_mutex_lock(&sb->lock);
    if (sb->state != SB_SUSPENDED) {
        enum sb_state now = sb->state;
        pthread_mutex_unlock(&sb->lock);
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "sandbox %s is %s; only a paused or suspended sandbox can be "
                                 "resumed",
                                 sb->id, sb_state_name(now));
    }
    sandbox_transition(sb, SB_RESUMING);
    pthread_mutex_unlock(&sb->lock);

    int rc = sandbox_start_from(sb, p.disk, p.state, e);
    pthread_mutex_lock(&sb->lock);
    if (rc == 0 && sb->state == SB_ERROR) /* QEMU died after the init */
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "%s", sb->error);
    struct vm *vm = NULL;
    struct guest_channel *ch = NULL;
    char stored[SANDBOX_STORE_OBJECT_SIZE] = "";
    if (rc == 0) {
        sandbox_transition(sb, SB_RUNNING);
        sb->stop_suspended_from = 0;
        /* The VM is the truth now, wherever its snapshot came from. */
        snprintf(stored, sizeof(stored), "%s", sb->store_object);
    } else {
        /* The snapshot is untouched: the sandbox stays suspended. */
        vm = sb->vm;
        ch = sb->channel;
        sb->vm = NULL;
        sb->channel = NULL;
        sandbox_transition(sb, SB_SUSPENDED);
        sb->error[0] = '\0';
    }
    pthread_mutex_unlock(&sb->lock);
    if (rc < 0) {
        if (ch)
            guest_channel_close(ch);
        vm_free(vm);
        sandbox_vm_gone(sb);
        log_warn("sandbox resume from suspend failed", "sandbox=%s error=\"%s\"", sb->id,
                 e->message);
        return -1;
    }
    char why[512];
    /* Until the record says running, a restart goes back to the snapshot. */
    if (sandbox_record_save(sb, why, sizeof(why)) < 0)
        log_error("cannot record the resumed sandbox: its snapshot stays", "sandbox=%s "
                  "error=\"%s\"", sb->id, why);
    else if (fs_remove_tree(p.dir, why, sizeof(why)) < 0)
        log_warn("cannot remove the used suspend snapshot", "sandbox=%s error=\"%s\"", sb->id, why);
    if (stored[0])
        sandbox_shared_store_forget(sb, NULL);
    log_info("sandbox resumed from suspend", "sandbox=%s ms=%lld", sb->id,
             (long long)(clock_monotonic_ms() - started));
    return 0;
}
