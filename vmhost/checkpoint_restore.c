/* Restore in place (checkpoint.h): the sandbox keeps its id, directory,
 * network namespace and egress attachment; only its VM and disk are
 * replaced. The old QEMU goes first (its disk must not be written while
 * the checkpoint's replaces it), so a failure cannot go back: the sandbox
 * is left in state error, and the intact checkpoint can be restored again. */
#include <stdio.h>

#include "checkpoint.h"
#include "clock.h"
#include "log.h"
#include "sandbox_internal.h"
#include "sandbox_record.h"
#include "sandbox_stop.h"


/* running|paused|error -> restoring, with the old VM and channel taken out. */
static int begin(struct sandbox *sb, struct vm **vm, struct guest_channel **ch,
                 struct airlock_error *e)
{
    /* A sandbox vmhost's stop suspended is running or paused to its user. */
    int rc = sandbox_wake(sb, e);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&sb->lock);
    enum sb_state s = sb->state;
    if (s != SB_RUNNING && s != SB_PAUSED && s != SB_ERROR) {
        rc = airlock_error_set(
            e, AIRLOCK_ERR_STATE,
            "sandbox %s is %s; only a running, paused or failed sandbox can be restored", sb->id,
            sb_state_name(s));
    } else {
        sandbox_transition(sb, SB_RESTORING);
        *vm = sb->vm;
        *ch = sb->channel;
        sb->vm = NULL;
        sb->channel = NULL;
        sb->error[0] = '\0';
    }
    pthread_mutex_unlock(&sb->lock);
    return rc;
}

/* restoring -> running, or -> error with why (and the new VM, if any, gone);
 * a failure is INTERNAL. */
static int finish(struct sandbox *sb, const char *name, int rc, struct airlock_error *e)
{
    struct vm *vm = NULL;
    struct guest_channel *ch = NULL;
    pthread_mutex_lock(&sb->lock);
    if (rc == 0 && sb->state == SB_ERROR) /* QEMU died after the init */
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "%s", sb->error);
    else if (rc < 0)
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    if (rc == 0) {
        sandbox_transition(sb, SB_RUNNING);
    } else {
        vm = sb->vm;
        ch = sb->channel;
        sb->vm = NULL;
        sb->channel = NULL;
        sandbox_transition(sb, SB_ERROR);
        snprintf(sb->error, sizeof(sb->error), "restore from checkpoint %s failed: %.3000s", name,
                 e->message);
    }
    pthread_mutex_unlock(&sb->lock);
    if (ch)
        guest_channel_close(ch);
    vm_free(vm);
    if (rc < 0)
        sandbox_vm_gone(sb);
    char rerr[512];
    if (sandbox_record_save(sb, rerr, sizeof(rerr)) < 0)
        log_warn("cannot record the sandbox's state", "sandbox=%s error=\"%s\"", sb->id, rerr);
    return rc;
}

int checkpoint_restore(struct sandbox *sb, const char *name, struct airlock_error *e)
{
    int64_t started = clock_monotonic_ms();
    struct checkpoint_files f;
    int rc = checkpoint_pin(sb, name, &f, e);
    if (rc < 0)
        return rc;
    struct vm *old_vm = NULL;
    struct guest_channel *old_ch = NULL;
    rc = begin(sb, &old_vm, &old_ch, e);
    if (rc < 0)
        goto out;
    if (old_ch)
        guest_channel_close(old_ch);
    vm_free(old_vm); /* its hold stays, for the new VM */
    /* The volumes go back with the disk: the guest's state (a FULL
     * checkpoint's memory) was taken with them as they were then. */
    rc = sandbox_volumes_restore(sb, f.dir, e);
    if (rc == 0)
        rc = sandbox_start_from(sb, f.disk, f.full ? f.state : NULL, e);
    rc = finish(sb, name, rc, e);
    if (rc < 0) {
        log_warn("checkpoint restore failed", "sandbox=%s checkpoint=%s error=\"%s\"", sb->id, name,
                 e->message);
        goto out;
    }
    log_info("checkpoint restored", "sandbox=%s checkpoint=%s kind=%s ms=%lld", sb->id, name,
             f.full ? "full" : "disk", (long long)(clock_monotonic_ms() - started));
out:
    checkpoint_unpin(&f);
    return rc;
}
