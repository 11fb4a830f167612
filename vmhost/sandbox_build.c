/* The builders (sandbox_build.h): disk, network, QEMU, state, guest. */
#include "sandbox_build.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "build_gate.h"
#include "clock.h"
#include "log.h"
#include "sandbox_guest_init.h"
#include "sandbox_internal.h"
#include "sandbox_network.h"
#include "sandbox_record.h"
#include "template_version.h"

#define SANDBOX_RESTORE_TIMEOUT_MS 30000

int sandbox_finish_create(struct sandbox *sb, int64_t *initialized_us, char *err, size_t errlen)
{
    if (sandbox_guest_init(sb, sb->channel, err, errlen) < 0)
        return -1;
    *initialized_us = clock_monotonic_us();

    pthread_mutex_lock(&sb->lock);
    bool died = sb->state == SB_ERROR;
    if (!died)
        sandbox_transition(sb, SB_RUNNING);
    else
        snprintf(err, errlen, "%s", sb->error);
    pthread_mutex_unlock(&sb->lock);
    if (died)
        return -1;
    /* Recorded before anyone hears of it: a restart adopts what it records. */
    return sandbox_record_save_nosync(sb, err, errlen);
}

/* Where a build's time went (microseconds, monotonic), for its log line. */
struct build_times {
    int64_t gate_wait_us; /* waiting for a slot (build_gate.h) */
    int64_t started, volumes_ready, cloned, qemu_started, qmp_ready, loaded, attached, running,
        connected, mounted, initialized, done;
};

/* Everything before QEMU: the directory, the volumes' images, the disk and
 * the network namespace (attached to egress unless detached or aside). */
static int build_prepare(struct sandbox *sb, const struct sandbox_build *b, bool attach_aside,
                         struct build_times *t, struct airlock_error *e)
{
    const struct sandbox_create_params *p = b->params;
    if (mkdir(sb->dir, 0700) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", sb->dir,
                                 strerror(errno));
    /* Before the VM: its slots point at the images (a fork's come with
     * its sandbox, made by the fork). */
    int rc = sandbox_volumes_attach(sb, p->volumes, p->n_volumes, p->volume_copies, e);
    if (rc < 0)
        return rc;
    t->volumes_ready = clock_monotonic_us();
    /* A fork starts from its checkpoint's disk. */
    const char *disk = b->from_disk ? b->from_disk : b->tmpl ? b->tmpl->snap.disk
                                                              : sb->vh->base_disk;
    if (store_clone_file(disk, sb->disk, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    t->cloned = clock_monotonic_us();
    /* egress listens before the guest can send its first packet; a
     * detached VM is attached when it is handed out. A restored guest runs
     * only from its cont: its attach overlaps QEMU's start and the state
     * load. A cold-booted guest runs at once: attached first. */
    return b->detached || attach_aside ? sandbox_network_prepare(sb, e)
                                       : sandbox_network_up(sb, p->policy, e);
}

/* A spare (sandbox_spare_start, its room claimed) taken by this build:
 * registered under the id asked for unless detached, and given the
 * build's CPU priority. On failure the caller abandons it. */
static int build_take_spare(struct sandbox *sb, const struct sandbox_build *b,
                            struct airlock_error *e)
{
    const struct sandbox_create_params *p = b->params;
    if (!b->detached) {
        if (sandbox_take_id(sb, p->id && *p->id ? p->id : NULL, e) < 0)
            return -1;
        snprintf(sb->project_id, sizeof(sb->project_id), "%s",
                 p->project_id ? p->project_id : "");
    }
    /* Started in the background (nicer than vmhost): from now on it runs
     * as the build asks. A failure leaves it slower, not broken. */
    if (vm_set_nice(sb->vm, getpriority(PRIO_PROCESS, 0) + b->nice, AIRLOCK_ERROR_MSG(e)) < 0) {
        log_warn("spare QEMU keeps its background CPU priority", "sandbox=%s error=\"%s\"",
                 sb->id, e->message);
        airlock_error_clear(e);
    }
    pthread_mutex_lock(&sb->lock);
    sb->created_unix_ms = clock_realtime_ms();
    sb->last_activity_unix_ms = sb->created_unix_ms;
    pthread_mutex_unlock(&sb->lock);
    return 0;
}

static void build_log(const struct sandbox *sb, const struct sandbox_build *b,
                      const struct build_times *t)
{
    /* Where the time went: the wait for a build slot (build_gate.h),
     * disk clone, network (+ egress, unless aside),
     * QEMU to QMP (with jail=on, the jail's setup too: jail_open, its
     * spawn, QEMU's seccomp filter; 0 for a QEMU started ahead,
     * qemu=prestarted: taking it is in take_us), state load + cont (and
     * the wait for an attach aside, attach_wait_us), guestd's first answer,
     * guest init, record; with volumes, their attach (make, hold, reflink)
     * and mount (the size notice and guestd's mount). */
    log_info("sandbox created",
             "sandbox=%s vcpus=%u memory_mb=%u accel=%s jail=%s from=%s qemu=%s us=%lld "
             "gate_us=%lld take_us=%lld disk_us=%lld net_us=%lld qemu_us=%lld restore_us=%lld "
             "attach_wait_us=%lld hello_us=%lld init_us=%lld record_us=%lld volumes=%u "
             "volumes_attach_us=%lld volumes_mount_us=%lld",
             sb->id, sb->vcpus, sb->memory_mb, vm_accel_name(sb->vh->accel),
             sb->vh->jailer ? "on" : "off",
             b->from_disk ? "checkpoint" : sb->restored ? "snapshot" : "cold-boot",
             b->spare ? "prestarted" : "started", (long long)(t->done - t->started),
             (long long)t->gate_wait_us,
             (long long)(b->spare ? t->volumes_ready - t->started - t->gate_wait_us : 0),
             (long long)(t->cloned - t->volumes_ready), (long long)(t->qemu_started - t->cloned),
             (long long)(t->qmp_ready - t->qemu_started),
             (long long)(t->running - t->qmp_ready), (long long)(t->attached - t->loaded),
             (long long)(t->connected - t->running), (long long)(t->initialized - t->mounted),
             (long long)(t->done - t->initialized), (unsigned)b->params->n_volumes,
             (long long)(b->spare ? 0 : t->volumes_ready - t->started - t->gate_wait_us),
             (long long)(t->mounted - t->connected));
}

/* The build from its directory on (sb admitted: reserved and its room
 * claimed, or a spare taken): disk, network, QEMU, state, guest. On
 * failure sb is abandoned. */
static int build_run(struct vmhost *vh, const struct sandbox_build *b, struct sandbox *sb,
                     struct build_times *t, struct sandbox **out, struct airlock_error *e)
{
    const struct sandbox_create_params *p = b->params;
    struct sandbox_attach *attaching = NULL; /* egress attach aside, until its finish */
    /* A fork starts from its checkpoint: the whole state when it has one. */
    bool load_state = b->from_disk ? b->from_state != NULL : b->tmpl != NULL;
    bool attach_aside = load_state && !b->detached && vh->egress;
    int rc = 0;
    if (b->spare)
        t->volumes_ready = t->cloned = clock_monotonic_us();
    else if ((rc = build_prepare(sb, b, attach_aside, t, e)) < 0)
        goto fail;
    if (attach_aside && !(attaching = sandbox_network_attach_start(sb, p->policy, e)))
        goto fail;
    t->qemu_started = clock_monotonic_us();
    if (!b->spare && sandbox_start_vm(sb, load_state, b->nice, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    t->qmp_ready = clock_monotonic_us();
    /* A spare has its template's state loaded already. */
    if (load_state && !b->spare &&
        vm_load_state(sb->vm, b->from_state ? b->from_state : sb->tmpl->snap.state,
                      b->from_state != NULL, SANDBOX_RESTORE_TIMEOUT_MS,
                      AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    t->loaded = clock_monotonic_us();
    if (attaching) {
        rc = sandbox_network_attach_finish(attaching, e);
        attaching = NULL;
        if (rc < 0)
            goto fail;
    }
    /* Without egress a spare's policy is only checked and kept
     * (sandbox_network_up does that for the others). */
    if (b->spare && !b->detached && !attach_aside &&
        (rc = sandbox_set_policy(sb, p->policy, e)) < 0)
        goto fail;
    t->attached = clock_monotonic_us();
    if (load_state && vm_qmp_command(sb->vm, "cont", NULL, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    t->running = clock_monotonic_us();

    if (sandbox_connect_guest(sb, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    t->connected = clock_monotonic_us();
    if (b->detached) {
        *out = sb;
        return 0;
    }
    /* A fork's loaded state has the volumes mounted already. */
    if (!b->from_state && (rc = sandbox_volumes_mount(sb, e)) < 0)
        goto fail;
    t->mounted = clock_monotonic_us();
    if (sandbox_finish_create(sb, &t->initialized, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    sandbox_volumes_keep(sb);
    t->done = clock_monotonic_us();
    build_log(sb, b, t);
    *out = sb;
    return 0;

fail:
    /* The attach holds sb: it ends before anything is torn down. */
    if (attaching) {
        struct airlock_error ignored = { 0 }; /* e says why this build failed */
        sandbox_network_attach_finish(attaching, &ignored);
    }
    if (rc == 0) /* a step below the sandbox module failed, with only a message */
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    sandbox_abandon(sb, e->message);
    return -1;
}

/* The sandbox the build makes, admitted: a spare taken, or reserved under
 * its id with its room claimed (a node without room refuses at once,
 * before anything is made). */
static int build_admit(struct vmhost *vh, const struct sandbox_build *b, struct sandbox **out,
                       struct airlock_error *e)
{
    struct sandbox *sb = b->spare;
    int rc;
    if (sb) {
        template_release(b->tmpl); /* the spare holds its own */
        if ((rc = build_take_spare(sb, b, e)) < 0)
            sandbox_abandon(sb, e->message);
        *out = sb;
        return rc;
    }
    if ((rc = sandbox_reserve(vh, b->params, b->detached, &sb, e)) < 0) {
        template_release(b->tmpl);
        return rc;
    }
    sb->tmpl = b->tmpl; /* held for the sandbox's life */
    if (b->tmpl) {
        snprintf(sb->template_name, sizeof(sb->template_name), "%s", b->tmpl->ref);
        sb->vcpus = b->tmpl->snap.vcpus;
        sb->memory_mb = b->tmpl->snap.memory_mb;
    }
    if ((rc = node_budget_claim(vh->budget, &sb->claim, sb->vcpus, sb->memory_mb, e)) < 0) {
        sandbox_unreserve(sb);
        return rc;
    }
    /* Restored from the template version's snapshot; without one (under
     * --cold-boot) the kernel boots. */
    sb->restored = b->tmpl != NULL;
    *out = sb;
    return 0;
}

int sandbox_build(struct vmhost *vh, const struct sandbox_build *b, struct sandbox **out,
                  struct airlock_error *e)
{
    struct build_times t = { .started = clock_monotonic_us() };
    struct sandbox *sb;
    int rc = build_admit(vh, b, &sb, e);
    if (rc < 0)
        return rc;
    /* Detached builds (the pool's, niced) do not queue behind creates. */
    t.gate_wait_us = b->detached ? 0 : build_gate_enter(vh->build_gate);
    rc = build_run(vh, b, sb, &t, out, e);
    if (!b->detached)
        build_gate_leave(vh->build_gate);
    return rc;
}

int sandbox_spare_claim(struct sandbox *spare, struct airlock_error *e)
{
    return node_budget_claim(spare->vh->budget, &spare->claim, spare->vcpus, spare->memory_mb, e);
}

int sandbox_spare_start(struct vmhost *vh, struct template_version *t, int nice,
                        struct sandbox **out, struct airlock_error *e)
{
    struct sandbox_create_params p = { 0 };
    struct sandbox_build b = { .params = &p, .tmpl = t, .detached = true };
    struct build_times times = { .started = clock_monotonic_us() };
    struct sandbox *sb;
    int rc = sandbox_reserve(vh, &p, true, &sb, e);
    if (rc < 0) {
        template_release(t);
        return rc;
    }
    sb->tmpl = t;
    snprintf(sb->template_name, sizeof(sb->template_name), "%s", t->ref);
    sb->vcpus = t->snap.vcpus;
    sb->memory_mb = t->snap.memory_mb;
    sb->restored = true;
    if (build_prepare(sb, &b, false, &times, e) < 0)
        goto fail;
    /* The device state too (its RAM stays in the template's memory file,
     * mapped copy-on-write: nothing is copied), so a build that takes it
     * only continues it. */
    if (sandbox_start_vm(sb, true, nice, AIRLOCK_ERROR_MSG(e)) < 0 ||
        vm_load_state(sb->vm, t->snap.state, false, SANDBOX_RESTORE_TIMEOUT_MS,
                      AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto fail;
    }
    *out = sb;
    return 0;
fail:
    sandbox_abandon(sb, e->message);
    return -1;
}
