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
static enum airlock_err begin(struct sandbox *sb, struct vm **vm, struct guest_channel **ch,
                                char *err, size_t errlen)
{
    /* A sandbox vmhost's stop suspended is running or paused to its user. */
    enum airlock_err rc = sandbox_wake(sb, err, errlen);
    if (rc != AIRLOCK_OK)
        return rc;
    pthread_mutex_lock(&sb->lock);
    enum sb_state s = sb->state;
    if (s != SB_RUNNING && s != SB_PAUSED && s != SB_ERROR) {
        snprintf(err, errlen,
                 "sandbox %s is %s; only a running, paused or failed sandbox can be restored",
                 sb->id, sb_state_name(s));
        rc = AIRLOCK_ERR_STATE;
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

/* restoring -> running, or -> error with why (and the new VM, if any, gone). */
static int finish(struct sandbox *sb, const char *name, int rc, char *err, size_t errlen)
{
    struct vm *vm = NULL;
    struct guest_channel *ch = NULL;
    pthread_mutex_lock(&sb->lock);
    if (rc == 0 && sb->state == SB_ERROR) { /* QEMU died after the init */
        snprintf(err, errlen, "%s", sb->error);
        rc = -1;
    }
    if (rc == 0) {
        sandbox_transition(sb, SB_RUNNING);
    } else {
        vm = sb->vm;
        ch = sb->channel;
        sb->vm = NULL;
        sb->channel = NULL;
        sandbox_transition(sb, SB_ERROR);
        snprintf(sb->error, sizeof(sb->error), "restore from checkpoint %s failed: %.3000s", name,
                 err);
    }
    pthread_mutex_unlock(&sb->lock);
    if (ch)
        guest_channel_close(ch);
    vm_free(vm);
    char rerr[512];
    if (sandbox_record_save(sb, rerr, sizeof(rerr)) < 0)
        log_warn("cannot record the sandbox's state", "sandbox=%s error=\"%s\"", sb->id, rerr);
    return rc;
}

enum airlock_err checkpoint_restore(struct sandbox *sb, const char *name, char *err,
                                      size_t errlen)
{
    int64_t started = clock_monotonic_ms();
    struct checkpoint_files f;
    enum airlock_err rc = checkpoint_pin(sb, name, &f, err, errlen);
    if (rc != AIRLOCK_OK)
        return rc;
    struct vm *old_vm;
    struct guest_channel *old_ch;
    rc = begin(sb, &old_vm, &old_ch, err, errlen);
    if (rc != AIRLOCK_OK)
        goto out;
    if (old_ch)
        guest_channel_close(old_ch);
    vm_free(old_vm);
    if (finish(sb, name,
               sandbox_start_from(sb, f.disk, f.full ? f.state : NULL, err, errlen), err,
               errlen) < 0) {
        log_warn("checkpoint restore failed", "sandbox=%s checkpoint=%s error=\"%.300s\"", sb->id,
                 name, err);
        rc = AIRLOCK_ERR_INTERNAL;
        goto out;
    }
    log_info("checkpoint restored", "sandbox=%s checkpoint=%s kind=%s ms=%lld", sb->id, name,
             f.full ? "full" : "disk", (long long)(clock_monotonic_ms() - started));
out:
    checkpoint_unpin(&f);
    return rc;
}
