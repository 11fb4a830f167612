#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "sandbox_guest_init.h"
#include "sandbox_net.h"
#include "sandbox_network.h"
#include "sandbox_pool.h"
#include "sandbox_record.h"
#include "template_registry.h"
#include "warm_pool.h"

#define SANDBOX_DEFAULT_TEMPLATE "default"
#define SANDBOX_MAX_VCPUS 16
#define SANDBOX_MIN_MEMORY_MB 128
#define SANDBOX_MAX_MEMORY_MB 65536
#define SANDBOX_RESTORE_TIMEOUT_MS 30000

bool sandbox_transition(struct sandbox *sb, enum sb_state to)
{
    if (!sb_state_allows(sb->state, to)) {
        log_error("sandbox state change refused: not in the table", "sandbox=%s from=%s to=%s",
                  sb->id, sb_state_name(sb->state), sb_state_name(to));
        return false;
    }
    sb->state = to;
    return true;
}

static void sandbox_generate_id(char *out, size_t outlen)
{
    uint8_t r[8];
    if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
        int64_t t = clock_realtime_ms();
        memcpy(r, &t, sizeof(r));
    }
    snprintf(out, outlen, "sb_%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4],
             r[5], r[6], r[7]);
}

static enum sandbox_error sandbox_validate(const struct sandbox_create_params *p, char *err,
                                           size_t errlen)
{
    if (p->id && *p->id && !sandbox_id_valid(p->id)) {
        snprintf(err, errlen, "id: must be 1-64 characters of a-z, 0-9, '_' or '-'");
        return SANDBOX_ERR_INVALID;
    }
    if (p->vcpus > SANDBOX_MAX_VCPUS) {
        snprintf(err, errlen, "vcpus: %u is more than the maximum of %d", p->vcpus,
                 SANDBOX_MAX_VCPUS);
        return SANDBOX_ERR_INVALID;
    }
    if (p->memory_mb &&
        (p->memory_mb < SANDBOX_MIN_MEMORY_MB || p->memory_mb > SANDBOX_MAX_MEMORY_MB)) {
        snprintf(err, errlen, "memory_mb: %u is outside %d..%d", p->memory_mb,
                 SANDBOX_MIN_MEMORY_MB, SANDBOX_MAX_MEMORY_MB);
        return SANDBOX_ERR_INVALID;
    }
    /* egress checks the characters. */
    if (p->project_id && strlen(p->project_id) >= sizeof(((struct sandbox *)0)->project_id)) {
        snprintf(err, errlen, "project_id: at most 128 characters");
        return SANDBOX_ERR_INVALID;
    }
    return SANDBOX_OK;
}

static struct sandbox *registry_find_locked(struct vmhost *vh, const char *id)
{
    for (struct sandbox *sb = vh->sandboxes; sb; sb = sb->next)
        if (strcmp(sb->id, id) == 0)
            return sb;
    return NULL;
}

static void registry_remove_locked(struct vmhost *vh, struct sandbox *sb)
{
    for (struct sandbox **pp = &vh->sandboxes; *pp; pp = &(*pp)->next) {
        if (*pp == sb) {
            *pp = sb->next;
            vh->n_sandboxes--;
            return;
        }
    }
}

static void sandbox_free(struct sandbox *sb)
{
    template_release(sb->tmpl);
    free(sb->egress_ca_pem);
    pthread_mutex_destroy(&sb->wake_lock);
    pthread_mutex_destroy(&sb->net_lock);
    pthread_mutex_destroy(&sb->record_lock);
    pthread_mutex_destroy(&sb->exec_lock);
    pthread_mutex_destroy(&sb->lock);
    free(sb);
}

/* Reserves the id in the registry (state creating) so concurrent creates of
 * the same id and capacity checks see it. */
enum sandbox_error sandbox_reserve(struct vmhost *vh, const struct sandbox_create_params *p,
                                   struct sandbox **out, char *err, size_t errlen)
{
    struct sandbox *sb = calloc(1, sizeof(*sb));
    if (!sb) {
        snprintf(err, errlen, "out of memory");
        return SANDBOX_ERR_INTERNAL;
    }
    pthread_mutex_init(&sb->lock, NULL);
    pthread_mutex_init(&sb->exec_lock, NULL);
    pthread_mutex_init(&sb->record_lock, NULL);
    pthread_mutex_init(&sb->wake_lock, NULL);
    pthread_mutex_init(&sb->net_lock, NULL);
    sb->vh = vh;
    sb->refs = 2; /* the registry's and the creator's */
    sandbox_transition(sb, SB_CREATING);
    sb->vcpus = p->vcpus ? p->vcpus : VMHOST_TEMPLATE_VCPUS;
    sb->memory_mb = p->memory_mb ? p->memory_mb : VMHOST_TEMPLATE_MEMORY_MB;
    sb->created_unix_ms = clock_realtime_ms();
    sb->last_activity_unix_ms = sb->created_unix_ms;
    snprintf(sb->template_name, sizeof(sb->template_name), "%s", SANDBOX_DEFAULT_TEMPLATE);
    snprintf(sb->project_id, sizeof(sb->project_id), "%s", p->project_id ? p->project_id : "");

    enum sandbox_error rc = SANDBOX_OK;
    pthread_mutex_lock(&vh->lock);
    if (p->for_pool) {
        sandbox_generate_id(sb->id, sizeof(sb->id)); /* 64 random bits: unique enough */
    } else if (p->id && *p->id) {
        snprintf(sb->id, sizeof(sb->id), "%s", p->id);
    } else {
        do
            sandbox_generate_id(sb->id, sizeof(sb->id));
        while (registry_find_locked(vh, sb->id));
    }
    if (p->for_pool) {
        /* kept by the warm pool until sandbox_adopt_pooled() registers it */
    } else if (registry_find_locked(vh, sb->id)) {
        snprintf(err, errlen, "sandbox %s already exists", sb->id);
        rc = SANDBOX_ERR_EXISTS;
    } else if (vh->n_sandboxes >= vh->cfg.max_sandboxes) {
        snprintf(err, errlen, "node is full: %u of %u sandboxes in use", vh->n_sandboxes,
                 vh->cfg.max_sandboxes);
        rc = SANDBOX_ERR_CAPACITY;
    } else {
        sb->next = vh->sandboxes;
        vh->sandboxes = sb;
        vh->n_sandboxes++;
    }
    pthread_mutex_unlock(&vh->lock);
    if (rc != SANDBOX_OK) {
        sandbox_free(sb);
        return rc;
    }
    if (fs_path(sb->dir, sizeof(sb->dir), "%s/%s", vh->sandboxes_dir, sb->id) < 0 ||
        fs_path(sb->disk, sizeof(sb->disk), "%s/disk.ext4", sb->dir) < 0) {
        snprintf(err, errlen, "data directory path too long: %s", vh->sandboxes_dir);
        pthread_mutex_lock(&vh->lock);
        registry_remove_locked(vh, sb);
        pthread_mutex_unlock(&vh->lock);
        sandbox_free(sb);
        return SANDBOX_ERR_INTERNAL;
    }
    *out = sb;
    return SANDBOX_OK;
}

/* Runs on QEMU's monitor thread when the VM dies on its own. */
void sandbox_on_vm_exit(void *arg, int wait_status, const char *reason)
{
    struct sandbox *sb = arg;
    (void)wait_status;
    pthread_mutex_lock(&sb->lock);
    /* Being torn down, the VM's end is expected. */
    if (sb->state != SB_DELETING && sb->state != SB_DELETED && sandbox_transition(sb, SB_ERROR))
        snprintf(sb->error, sizeof(sb->error), "%s", reason);
    pthread_mutex_unlock(&sb->lock);
    log_warn("sandbox vm exited unexpectedly", "sandbox=%s", sb->id);
    char err[512];
    if (sandbox_record_save(sb, err, sizeof(err)) < 0)
        log_error("cannot record the sandbox's error", "sandbox=%s error=\"%s\"", sb->id, err);
}

/* Stops what runs and removes what exists; used by delete and by failed
 * creates. The sandbox must already be out of the registry. */
void sandbox_drop_vm(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    struct vm *vm = sb->vm;
    struct guest_channel *ch = sb->channel;
    sb->vm = NULL;
    sb->channel = NULL;
    pthread_mutex_unlock(&sb->lock);
    if (ch)
        guest_channel_close(ch);
    vm_free(vm);
}

static void sandbox_teardown(struct sandbox *sb)
{
    sandbox_record_remove(sb);
    pthread_mutex_lock(&sb->lock);
    sandbox_transition(sb, SB_DELETING);
    pthread_mutex_unlock(&sb->lock);
    sandbox_drop_vm(sb);
    sandbox_network_down(sb);
    char err[512];
    if (fs_remove_tree(sb->dir, err, sizeof(err)) < 0)
        log_error("cannot remove sandbox directory", "sandbox=%s error=\"%s\"", sb->id, err);
    pthread_mutex_lock(&sb->lock);
    sandbox_transition(sb, SB_DELETED);
    pthread_mutex_unlock(&sb->lock);
}

/* Undoes a create (or a pool adoption) that failed after sandbox_reserve(). */
static void sandbox_abandon(struct sandbox *sb, const char *err)
{
    log_warn("sandbox create failed", "sandbox=%s error=\"%.300s\"", sb->id, err);
    pthread_mutex_lock(&sb->vh->lock);
    registry_remove_locked(sb->vh, sb);
    pthread_mutex_unlock(&sb->vh->lock);
    sandbox_discard_pooled(sb);
}

int sandbox_start_vm(struct sandbox *sb, bool incoming, int nice, char *err, size_t errlen)
{
    struct vmhost *vh = sb->vh;
    int tap_fd;
    if (sandbox_net_open_tap(sb->id, &tap_fd, err, errlen) < 0)
        return -1;
    struct vm_config vc = {
        .qemu_binary = vh->cfg.qemu_binary,
        .accel = vh->accel,
        .kernel = vh->image.kernel,
        .initrd = vh->image.initrd,
        .disk = sb->disk,
        .vcpus = sb->vcpus,
        .memory_mb = sb->memory_mb,
        .run_dir = sb->dir,
        .mem_path = sb->tmpl ? sb->tmpl->snap.mem : NULL,
        .mem_shared = false,
        .incoming = incoming,
        .has_nic = true,
        .tap_fd = tap_fd,
        .nice = nice,
    };
    struct vm *vm;
    int started_rc = vm_start(&vc, sandbox_on_vm_exit, sb, &vm, err, errlen);
    close(tap_fd); /* QEMU has its own copy */
    if (started_rc < 0)
        return -1;
    pthread_mutex_lock(&sb->lock);
    sb->vm = vm;
    pthread_mutex_unlock(&sb->lock);
    return 0;
}

int sandbox_connect_guest(struct sandbox *sb, char *err, size_t errlen)
{
    struct vm *vm = sb->vm;
    struct guest_channel *ch;
    char cerr[512];
    if (guest_channel_connect(&guest_transport_virtio_serial, vm_agent_socket(vm),
                              sb->vh->cfg.guest_ready_timeout_ms, &ch, cerr, sizeof(cerr)) < 0) {
        char tail[2048];
        vm_console_tail(vm_console_log(vm), tail, sizeof(tail));
        snprintf(err, errlen, "sandbox %s did not become ready: %s; console tail:\n%s", sb->id, cerr,
                 tail);
        return -1;
    }
    pthread_mutex_lock(&sb->lock);
    sb->channel = ch;
    pthread_mutex_unlock(&sb->lock);
    return 0;
}

/* The guest's per-sandbox init, then running (and recorded), unless QEMU
 * died meanwhile; *initialized_us: when the guest init was done. */
static int sandbox_finish_create(struct sandbox *sb, int64_t *initialized_us, char *err,
                                 size_t errlen)
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

enum sandbox_error sandbox_create(struct vmhost *vh, const struct sandbox_create_params *p,
                                  struct sandbox **out, char *err, size_t errlen)
{
    enum sandbox_error rc = sandbox_validate(p, err, errlen);
    if (rc != SANDBOX_OK)
        return rc;
    /* The template version (NULL: cold boot) decides the size. */
    struct template_version *t;
    rc = template_acquire(vh, p->template_name, p->vcpus, p->memory_mb, &t, err, errlen);
    if (rc != SANDBOX_OK)
        return rc;
    /* A pooled VM takes the id asked for (sandbox_pool.h); an id in use
     * goes the restore way, which answers that it exists. */
    bool poolable = !p->for_pool && !p->from_disk && t && t->pool &&
                    !(p->id && *p->id && sandbox_id_taken(vh, p->id));
    struct warm_pool *pool = poolable ? t->pool : NULL;
    struct sandbox *sb = warm_pool_take(pool);
    if (sb) {
        rc = sandbox_adopt_pooled(sb, p, err, errlen);
        warm_pool_handed_out(pool); /* its refill may start now */
        template_release(t); /* the pooled sandbox holds its own */
        if (rc != SANDBOX_ERR_INTERNAL) {
            *out = rc == SANDBOX_OK ? sb : NULL;
            return rc;
        }
        log_warn("pooled sandbox failed: restoring instead", "error=\"%.300s\"", err);
        rc = template_acquire(vh, p->template_name, p->vcpus, p->memory_mb, &t, err, errlen);
        if (rc != SANDBOX_OK)
            return rc;
    }
    rc = sandbox_reserve(vh, p, &sb, err, errlen);
    if (rc != SANDBOX_OK) {
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

    if (mkdir(sb->dir, 0700) < 0) {
        snprintf(err, errlen, "create %s: %s", sb->dir, strerror(errno));
        goto fail;
    }
    /* Restored from the template version's snapshot; without one (under
     * --cold-boot) the kernel boots. */
    sb->restored = t != NULL;
    /* A fork starts from its checkpoint: the whole state when it has one. */
    const char *disk = p->from_disk ? p->from_disk : t ? t->snap.disk : vh->base_disk;
    bool load_state = p->from_disk ? p->from_state != NULL : sb->restored;
    if (store_clone_file(disk, sb->disk, err, errlen) < 0)
        goto fail;
    int64_t cloned = clock_monotonic_us();
    /* egress listens before the guest can send its first packet; a pooled
     * VM is attached when it is handed out. A restored guest runs only
     * from its cont: its attach overlaps QEMU's start and the state load.
     * A cold-booted guest runs at once: attached first. */
    bool attach_aside = load_state && !p->for_pool && vh->egress;
    rc = p->for_pool || attach_aside ? sandbox_network_prepare(sb, err, errlen)
                                     : sandbox_network_up(sb, p->policy, err, errlen);
    if (rc != SANDBOX_OK)
        goto fail;
    if (attach_aside && !(attaching = sandbox_network_attach_start(sb, p->policy, err, errlen)))
        goto fail;
    int64_t qemu_started = clock_monotonic_us();
    if (sandbox_start_vm(sb, load_state, p->for_pool ? WARM_POOL_NICE : 0, err, errlen) < 0)
        goto fail;
    int64_t qmp_ready = clock_monotonic_us();
    if (load_state && vm_load_state(sb->vm, p->from_state ? p->from_state : t->snap.state,
                                    p->from_state != NULL, SANDBOX_RESTORE_TIMEOUT_MS, err,
                                    errlen) < 0)
        goto fail;
    int64_t loaded = clock_monotonic_us();
    if (attaching) {
        rc = sandbox_network_attach_finish(attaching, err, errlen);
        attaching = NULL;
        if (rc != SANDBOX_OK)
            goto fail;
    }
    int64_t attached = clock_monotonic_us();
    if (load_state && vm_qmp_command(sb->vm, "cont", NULL, err, errlen) < 0)
        goto fail;
    int64_t vm_running = clock_monotonic_us();

    if (sandbox_connect_guest(sb, err, errlen) < 0)
        goto fail;
    int64_t guest_connected = clock_monotonic_us();
    if (p->for_pool) {
        /* Warmed up and paused: the per-sandbox init (clock, entropy,
         * hostname) runs again when it is handed out. */
        if (sandbox_pool_warm(sb, err, errlen) < 0)
            goto fail;
        *out = sb;
        return SANDBOX_OK;
    }
    int64_t initialized;
    if (sandbox_finish_create(sb, &initialized, err, errlen) < 0)
        goto fail;
    int64_t done = clock_monotonic_us();
    /* Where the time went: disk clone, network (+ egress, unless aside),
     * QEMU to QMP, state load + cont (and the wait for an attach aside,
     * attach_wait_us), guestd's first answer, guest init, record. */
    log_info("sandbox created",
             "sandbox=%s vcpus=%u memory_mb=%u accel=%s from=%s us=%lld disk_us=%lld net_us=%lld "
             "qemu_us=%lld restore_us=%lld attach_wait_us=%lld hello_us=%lld init_us=%lld "
             "record_us=%lld",
             sb->id, sb->vcpus, sb->memory_mb, vm_accel_name(vh->accel),
             p->from_disk ? "checkpoint" : sb->restored ? "snapshot" : "cold-boot",
             (long long)(done - started), (long long)(cloned - started),
             (long long)(qemu_started - cloned), (long long)(qmp_ready - qemu_started),
             (long long)(vm_running - qmp_ready), (long long)(attached - loaded),
             (long long)(guest_connected - vm_running),
             (long long)(initialized - guest_connected), (long long)(done - initialized));
    *out = sb;
    return SANDBOX_OK;

fail:
    /* The attach holds sb: it ends before anything is torn down. */
    if (attaching) {
        char ignored[8]; /* err says why this create failed */
        sandbox_network_attach_finish(attaching, ignored, sizeof(ignored));
    }
    sandbox_abandon(sb, err);
    return rc != SANDBOX_OK ? rc : SANDBOX_ERR_INTERNAL;
}

void sandbox_discard_pooled(struct sandbox *sb)
{
    sandbox_teardown(sb);
    sandbox_put(sb); /* the registry's (never registered) */
    sandbox_put(sb); /* the creator's */
}

enum sandbox_error sandbox_adopt_pooled(struct sandbox *sb, const struct sandbox_create_params *p,
                                        char *err, size_t errlen)
{
    struct vmhost *vh = sb->vh;
    int64_t started = clock_monotonic_us();
    enum sandbox_error rc = SANDBOX_OK;
    /* Registered under the id asked for (else its own) in one step with
     * the checks, so the registry stays the one place ids are decided. */
    char pool_id[sizeof(sb->id)];
    memcpy(pool_id, sb->id, sizeof(pool_id));
    bool rename = p->id && *p->id && strcmp(p->id, pool_id) != 0;
    pthread_mutex_lock(&vh->lock);
    if (registry_find_locked(vh, rename ? p->id : pool_id)) {
        snprintf(err, errlen, "sandbox %s already exists", rename ? p->id : pool_id);
        rc = SANDBOX_ERR_EXISTS;
    } else if (vh->n_sandboxes >= vh->cfg.max_sandboxes) {
        snprintf(err, errlen, "node is full: %u of %u sandboxes in use", vh->n_sandboxes,
                 vh->cfg.max_sandboxes);
        rc = SANDBOX_ERR_CAPACITY;
    } else {
        if (rename)
            snprintf(sb->id, sizeof(sb->id), "%s", p->id);
        sb->next = vh->sandboxes;
        vh->sandboxes = sb;
        vh->n_sandboxes++;
    }
    pthread_mutex_unlock(&vh->lock);
    if (rc != SANDBOX_OK) {
        sandbox_discard_pooled(sb);
        return rc;
    }
    if (rename && sandbox_rename_from(sb, pool_id, err, errlen) < 0) {
        pthread_mutex_lock(&vh->lock);
        registry_remove_locked(vh, sb);
        memcpy(sb->id, pool_id, sizeof(sb->id));
        pthread_mutex_unlock(&vh->lock);
        log_warn("pooled sandbox not renamed", "sandbox=%s error=\"%.300s\"", pool_id, err);
        sandbox_discard_pooled(sb);
        return SANDBOX_ERR_INTERNAL;
    }
    pthread_mutex_lock(&sb->lock);
    sb->from_pool = true;
    sb->created_unix_ms = clock_realtime_ms();
    sb->last_activity_unix_ms = sb->created_unix_ms;
    pthread_mutex_unlock(&sb->lock);
    int64_t named = clock_monotonic_us();
    /* Filled in the background, it runs like any sandbox from now on (as
     * nice as vmhost). A failure leaves it slower, not broken. */
    if (vm_set_nice(sb->vm, getpriority(PRIO_PROCESS, 0), err, errlen) < 0)
        log_warn("pooled sandbox keeps its background CPU priority", "sandbox=%s error=\"%s\"",
                 sb->id, err);
    if (vm_qmp_command(sb->vm, "cont", NULL, err, errlen) < 0)
        goto fail;
    int64_t continued = clock_monotonic_us();
    /* A pooled VM is attached to egress only now, under its own id, with
     * its project and policy (deny-all when unset): sandbox_set_policy. */
    snprintf(sb->project_id, sizeof(sb->project_id), "%s", p->project_id ? p->project_id : "");
    rc = sandbox_set_policy(sb, p->policy, err, errlen);
    if (rc != SANDBOX_OK)
        goto fail;
    int64_t attached = clock_monotonic_us(), initialized;
    if (sandbox_finish_create(sb, &initialized, err, errlen) < 0)
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
    return SANDBOX_OK;
fail:
    sandbox_abandon(sb, err);
    return rc != SANDBOX_OK ? rc : SANDBOX_ERR_INTERNAL;
}

void sandbox_unregister(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->vh->lock);
    registry_remove_locked(sb->vh, sb);
    pthread_mutex_unlock(&sb->vh->lock);
    sandbox_put(sb);
}

bool sandbox_id_taken(struct vmhost *vh, const char *id)
{
    pthread_mutex_lock(&vh->lock);
    bool taken = registry_find_locked(vh, id) != NULL;
    pthread_mutex_unlock(&vh->lock);
    return taken;
}

struct sandbox *sandbox_get(struct vmhost *vh, const char *id)
{
    pthread_mutex_lock(&vh->lock);
    struct sandbox *sb = registry_find_locked(vh, id);
    if (sb)
        sb->refs++;
    pthread_mutex_unlock(&vh->lock);
    return sb;
}

void sandbox_put(struct sandbox *sb)
{
    if (!sb)
        return;
    struct vmhost *vh = sb->vh;
    pthread_mutex_lock(&vh->lock);
    bool last = --sb->refs == 0;
    pthread_mutex_unlock(&vh->lock);
    if (last)
        sandbox_free(sb);
}

struct sandbox **sandbox_list(struct vmhost *vh, size_t *n)
{
    pthread_mutex_lock(&vh->lock);
    struct sandbox **all = calloc(vh->n_sandboxes + 1, sizeof(*all));
    size_t i = 0;
    if (all) {
        for (struct sandbox *sb = vh->sandboxes; sb; sb = sb->next) {
            sb->refs++;
            all[i++] = sb;
        }
    }
    pthread_mutex_unlock(&vh->lock);
    *n = i;
    return all;
}

enum sandbox_error sandbox_delete(struct vmhost *vh, const char *id, char *err, size_t errlen)
{
    pthread_mutex_lock(&vh->lock);
    struct sandbox *sb = registry_find_locked(vh, id);
    /* A sandbox being created, suspended, resumed, checkpointed or restored
     * is owned by that operation (which uses its VM without holding
     * sb->lock). */
    enum sb_state busy = sb ? sb->state : SB_RUNNING;
    if (sb_state_busy(busy)) {
        pthread_mutex_unlock(&vh->lock);
        snprintf(err, errlen, "sandbox %s is %s; delete it when that has finished", id,
                 sb_state_name(busy));
        return SANDBOX_ERR_STATE;
    }
    if (sb)
        registry_remove_locked(vh, sb);
    pthread_mutex_unlock(&vh->lock);
    if (!sb) {
        snprintf(err, errlen, "sandbox %s not found", id);
        return SANDBOX_ERR_NOT_FOUND;
    }
    sandbox_teardown(sb);
    log_info("sandbox deleted", "sandbox=%s", sb->id);
    sandbox_put(sb);
    return SANDBOX_OK;
}

struct guest_channel *sandbox_channel(struct sandbox *sb, enum sandbox_error *code, char *err,
                                      size_t errlen)
{
    pthread_mutex_lock(&sb->lock);
    struct guest_channel *ch = NULL;
    if (sb->state == SB_RUNNING && sb->channel) {
        ch = sb->channel;
        guest_channel_ref(ch);
    } else if (sb->state == SB_ERROR) {
        snprintf(err, errlen, "sandbox %s is in state error: %.3000s", sb->id, sb->error);
        *code = SANDBOX_ERR_STATE;
    } else {
        snprintf(err, errlen, "sandbox %s is %s, not running", sb->id,
                 sb_state_name(sb->state));
        *code = SANDBOX_ERR_STATE;
    }
    pthread_mutex_unlock(&sb->lock);
    return ch;
}

void sandbox_touch(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    sb->last_activity_unix_ms = clock_realtime_ms();
    pthread_mutex_unlock(&sb->lock);
}

void sandbox_exec_register(struct sandbox *sb, struct sandbox_exec *ex)
{
    pthread_mutex_lock(&sb->exec_lock);
    ex->next = sb->execs;
    sb->execs = ex;
    pthread_mutex_unlock(&sb->exec_lock);
}

void sandbox_exec_unregister(struct sandbox *sb, struct sandbox_exec *ex)
{
    pthread_mutex_lock(&sb->exec_lock);
    for (struct sandbox_exec **pp = &sb->execs; *pp; pp = &(*pp)->next) {
        if (*pp == ex) {
            *pp = ex->next;
            break;
        }
    }
    pthread_mutex_unlock(&sb->exec_lock);
    /* An exec counts as activity until it ends (idle detection). */
    sandbox_touch(sb);
}

int sandbox_exec_with_stream(struct sandbox *sb, const char *exec_id,
                             int (*fn)(struct guest_stream *s, void *arg), void *arg)
{
    pthread_mutex_lock(&sb->exec_lock);
    struct sandbox_exec *ex = sb->execs;
    while (ex && strcmp(ex->id, exec_id) != 0)
        ex = ex->next;
    int rc = -1;
    if (ex)
        rc = fn(ex->stream, arg);
    else
        errno = ENOENT;
    pthread_mutex_unlock(&sb->exec_lock);
    return rc;
}
