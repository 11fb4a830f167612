#include "sandbox_pool.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "sandbox_build.h"
#include "sandbox_guest_init.h"
#include "sandbox_internal.h"
#include "sandbox_network.h"

#define POOL_WARM_EXEC_TIMEOUT_MS 30000

int sandbox_pool_warm(struct sandbox *sb, struct pool_warm_times *t, char *err, size_t errlen)
{
    /* The first round installs a stand-in CA and runs one exec: an exec's
     * paths (guestd's spawn, fork, exec, ld.so, libc) run for the first
     * time since the restore cost the first exec after a hand-out ~245 ms
     * against ~50 for the next. The second round installs no CA (which
     * empties the slot again) and warms what a continue after a pause
     * runs (timers catching up); the hand-out repeats the init with real
     * values. */
    int64_t started = clock_monotonic_us();
    if (sandbox_guest_warm_up(sb, sb->channel, err, errlen) < 0)
        return -1;
    int64_t ca_done = clock_monotonic_us();
    if (sandbox_guest_run(sb->channel, "true", POOL_WARM_EXEC_TIMEOUT_MS, err, errlen) < 0)
        return -1;
    int64_t exec_done = clock_monotonic_us();
    if (vm_qmp_command(sb->vm, "stop", NULL, err, errlen) < 0 ||
        vm_qmp_command(sb->vm, "cont", NULL, err, errlen) < 0)
        return -1;
    int64_t cycled = clock_monotonic_us();
    if (sandbox_guest_init(sb, sb->channel, err, errlen) < 0)
        return -1;
    int64_t init_done = clock_monotonic_us();
    *t = (struct pool_warm_times){ .ca_us = ca_done - started, .exec_us = exec_done - ca_done,
                                   .cycle_us = cycled - exec_done,
                                   .init_us = init_done - cycled };
    return vm_qmp_command(sb->vm, "stop", NULL, err, errlen);
}

int sandbox_hand_out(struct sandbox *sb, const struct sandbox_create_params *p,
                     struct airlock_error *e)
{
    struct vmhost *vh = sb->vh;
    int64_t started = clock_monotonic_us();
    int rc = 0;
    char pool_id[sizeof(sb->id)];
    memcpy(pool_id, sb->id, sizeof(pool_id));
    if (sandbox_take_id(sb, p->id && *p->id ? p->id : NULL, e) < 0) {
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
