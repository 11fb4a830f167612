/* The builders (sandbox_build.h): disk, network, QEMU, state, guest. */
#include "sandbox_build.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

int sandbox_build(struct vmhost *vh, const struct sandbox_build *b, struct sandbox **out,
                  struct airlock_error *e)
{
    const struct sandbox_create_params *p = b->params;
    struct template_version *t = b->tmpl;
    struct sandbox *sb;
    int rc = sandbox_reserve(vh, p, b->detached, &sb, e);
    if (rc < 0) {
        template_release(t);
        return rc;
    }
    struct sandbox_attach *attaching = NULL; /* egress attach aside, until its finish */
    int64_t started = clock_monotonic_us();
    sb->tmpl = t; /* held for the sandbox's life */
    if (t) {
        snprintf(sb->template_name, sizeof(sb->template_name), "%s", t->ref);
        sb->vcpus = t->snap.vcpus;
        sb->memory_mb = t->snap.memory_mb;
    }
    /* Before anything is made: a node without room refuses at once. */
    rc = node_budget_claim(vh->budget, &sb->claim, sb->vcpus, sb->memory_mb, e);
    if (rc < 0) {
        sandbox_unreserve(sb);
        return rc;
    }

    if (mkdir(sb->dir, 0700) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", sb->dir, strerror(errno));
        goto fail;
    }
    /* Before the VM: its slots point at the images (a fork's come with
     * its sandbox, made by the fork). */
    if ((rc = sandbox_volumes_attach(sb, p->volumes, p->n_volumes, p->volume_copies, e)) < 0)
        goto fail;
    int64_t volumes_ready = clock_monotonic_us();
    /* Restored from the template version's snapshot; without one (under
     * --cold-boot) the kernel boots. */
    sb->restored = t != NULL;
    /* A fork starts from its checkpoint: the whole state when it has one. */
    const char *disk = b->from_disk ? b->from_disk : t ? t->snap.disk : vh->base_disk;
    bool load_state = b->from_disk ? b->from_state != NULL : sb->restored;
    if (store_clone_file(disk, sb->disk, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    int64_t cloned = clock_monotonic_us();
    /* egress listens before the guest can send its first packet; a
     * detached VM is attached when it is handed out. A restored guest runs
     * only from its cont: its attach overlaps QEMU's start and the state
     * load. A cold-booted guest runs at once: attached first. */
    bool attach_aside = load_state && !b->detached && vh->egress;
    rc = b->detached || attach_aside ? sandbox_network_prepare(sb, e)
                                     : sandbox_network_up(sb, p->policy, e);
    if (rc < 0)
        goto fail;
    if (attach_aside && !(attaching = sandbox_network_attach_start(sb, p->policy, e)))
        goto fail;
    int64_t qemu_started = clock_monotonic_us();
    if (sandbox_start_vm(sb, load_state, b->nice, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    int64_t qmp_ready = clock_monotonic_us();
    if (load_state &&
        vm_load_state(sb->vm, b->from_state ? b->from_state : t->snap.state, b->from_state != NULL,
                      SANDBOX_RESTORE_TIMEOUT_MS, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    int64_t loaded = clock_monotonic_us();
    if (attaching) {
        rc = sandbox_network_attach_finish(attaching, e);
        attaching = NULL;
        if (rc < 0)
            goto fail;
    }
    int64_t attached = clock_monotonic_us();
    if (load_state && vm_qmp_command(sb->vm, "cont", NULL, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    int64_t vm_running = clock_monotonic_us();

    if (sandbox_connect_guest(sb, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    int64_t guest_connected = clock_monotonic_us();
    if (b->detached) {
        *out = sb;
        return 0;
    }
    /* A fork's loaded state has the volumes mounted already. */
    if (!b->from_state && (rc = sandbox_volumes_mount(sb, e)) < 0)
        goto fail;
    int64_t mounted = clock_monotonic_us();
    int64_t initialized;
    if (sandbox_finish_create(sb, &initialized, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    sandbox_volumes_keep(sb);
    int64_t done = clock_monotonic_us();
    /* Where the time went: disk clone, network (+ egress, unless aside),
     * QEMU to QMP (with jail=on, the jail's setup too: jail_open, its
     * spawn, QEMU's seccomp filter), state load + cont (and the wait for an
     * attach aside, attach_wait_us), guestd's first answer, guest init,
     * record; with volumes, their attach (make, hold, reflink) and mount
     * (the size notice and guestd's mount). */
    log_info("sandbox created",
             "sandbox=%s vcpus=%u memory_mb=%u accel=%s jail=%s from=%s us=%lld disk_us=%lld "
             "net_us=%lld qemu_us=%lld restore_us=%lld attach_wait_us=%lld hello_us=%lld "
             "init_us=%lld record_us=%lld volumes=%u volumes_attach_us=%lld volumes_mount_us=%lld",
             sb->id, sb->vcpus, sb->memory_mb, vm_accel_name(vh->accel),
             vh->jailer ? "on" : "off",
             b->from_disk ? "checkpoint" : sb->restored ? "snapshot" : "cold-boot",
             (long long)(done - started), (long long)(cloned - volumes_ready),
             (long long)(qemu_started - cloned), (long long)(qmp_ready - qemu_started),
             (long long)(vm_running - qmp_ready), (long long)(attached - loaded),
             (long long)(guest_connected - vm_running),
             (long long)(initialized - mounted), (long long)(done - initialized),
             (unsigned)p->n_volumes, (long long)(volumes_ready - started),
             (long long)(mounted - guest_connected));
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
