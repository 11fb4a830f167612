/* Pause and resume: QMP stop/cont on a sandbox's VM. Memory stays where it
 * is; nothing is written to disk. */
#include <stdio.h>

#include "log.h"
#include "sandbox_internal.h"
#include "sandbox_volume.h"
#include "sandbox_guest_init.h"
#include "sandbox_record.h"
#include "sandbox_stop.h"


/* Moves sb from one state to another with a QMP command, under sb->lock so
 * that concurrent pauses, resumes and deletes see one state at a time. */
static int qmp_transition(struct sandbox *sb, enum sb_state from, enum sb_state to,
                          const char *qmp_command, const char *verb, struct airlock_error *e)
{
    int rc = 0;
    pthread_mutex_lock(&sb->lock);
    if (sb->state != from || !sb->vm) {
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "sandbox %s is %s; only a %s sandbox can be %s", sb->id,
                               sb_state_name(sb->state), sb_state_name(from), verb);
    } else if (vm_qmp_command(sb->vm, qmp_command, NULL, AIRLOCK_ERROR_MSG(e)) < 0) {
        rc = airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    } else {
        sandbox_transition(sb, to);
    }
    pthread_mutex_unlock(&sb->lock);
    if (rc < 0)
        return rc;
    log_info(to == SB_PAUSED ? "sandbox paused" : "sandbox resumed", "sandbox=%s", sb->id);
    /* A stale record only means a restart puts the VM back into the
     * recorded state: the transition stands. Not fsynced: a power cut
     * ends a running or paused VM anyway. */
    char rerr[512];
    if (sandbox_record_save_nosync(sb, rerr, sizeof(rerr)) < 0)
        log_warn("cannot record the sandbox's state", "sandbox=%s error=\"%s\"", sb->id, rerr);
    return 0;
}

/* Here, not in sandbox_stop.c: it ends in a pause, and a pause begins
 * with it. */
int sandbox_wake(struct sandbox *sb, struct airlock_error *e)
{
    pthread_mutex_lock(&sb->lock);
    bool asleep = sb->stop_suspended_from != 0;
    pthread_mutex_unlock(&sb->lock);
    if (!asleep)
        return 0;
    /* Concurrent requests wait here for the one resume. */
    pthread_mutex_lock(&sb->wake_lock);
    pthread_mutex_lock(&sb->lock);
    enum sb_state from = sb->state == SB_SUSPENDED ? sb->stop_suspended_from : 0;
    pthread_mutex_unlock(&sb->lock);
    int rc = 0;
    if (from) {
        log_info("resuming a sandbox that vmhost's stop suspended", "sandbox=%s to=%s", sb->id,
                 sb_state_name(from));
        rc = sandbox_resume_suspended(sb, e); /* clears stop_suspended_from */
        if (rc == 0 && from == SB_PAUSED)
            rc = qmp_transition(sb, SB_RUNNING, SB_PAUSED, "stop", "paused", e);
    }
    pthread_mutex_unlock(&sb->wake_lock);
    return rc;
}

int sandbox_pause(struct sandbox *sb, struct airlock_error *e)
{
    int rc = sandbox_wake(sb, e);
    if (rc < 0)
        return rc;
    return qmp_transition(sb, SB_RUNNING, SB_PAUSED, "stop", "paused", e);
}

int sandbox_resume(struct sandbox *sb, struct airlock_error *e)
{
    pthread_mutex_lock(&sb->lock);
    bool suspended = sb->state == SB_SUSPENDED;
    pthread_mutex_unlock(&sb->lock);
    if (suspended) /* (re-checked under the lock there) */
        return sandbox_resume_suspended(sb, e);
    int rc = qmp_transition(sb, SB_PAUSED, SB_RUNNING, "cont", "resumed", e);
    if (rc < 0)
        return rc;
    sandbox_volumes_refresh(sb);
    /* The guest's wall clock stood still while paused. A failure here does
     * not undo the resume: the sandbox runs, with a stale clock. */
    struct airlock_error clock_e = { 0 };
    struct guest_channel *ch = sandbox_channel(sb, &clock_e);
    if (ch && sandbox_guest_set_clock(ch, AIRLOCK_ERROR_MSG(&clock_e)) == 0) {
        guest_channel_release(ch);
        return 0;
    }
    if (ch)
        guest_channel_release(ch);
    log_warn("cannot set the guest clock after resume", "sandbox=%s error=\"%s\"", sb->id,
             clock_e.message);
    return 0;
}
