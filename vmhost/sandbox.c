/* The sandbox object and the node's registry of them: references, the
 * state's one writer, the guest channel and the execs a request reaches,
 * and the copies the API shows. */
#include "sandbox_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "template_version.h"

#define SANDBOX_DEFAULT_TEMPLATE "default"

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

struct sandbox *sandbox_registry_find_locked(struct vmhost *vh, const char *id)
{
    for (struct sandbox *sb = vh->sandboxes; sb; sb = sb->next)
        if (strcmp(sb->id, id) == 0)
            return sb;
    return NULL;
}

int sandbox_registry_admit_locked(struct vmhost *vh, struct sandbox *sb, const char *id,
                                  struct airlock_error *e)
{
    if (sandbox_registry_find_locked(vh, id))
        return airlock_error_set(e, AIRLOCK_ERR_EXISTS, "sandbox %s already exists", id);
    if (vh->n_sandboxes >= vh->cfg.max_sandboxes)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "node is full: %u of %u sandboxes in use",
                                 vh->n_sandboxes, vh->cfg.max_sandboxes);
    if (id != sb->id)
        snprintf(sb->id, sizeof(sb->id), "%s", id);
    sb->next = vh->sandboxes;
    vh->sandboxes = sb;
    vh->n_sandboxes++;
    return 0;
}

void sandbox_registry_remove_locked(struct vmhost *vh, struct sandbox *sb)
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
    /* Whichever way it went (a stop leaves its VM for the next start). */
    node_budget_release(sb->vh->budget, &sb->claim);
    template_release(sb->tmpl);
    free(sb->egress_ca_pem);
    pthread_mutex_destroy(&sb->wake_lock);
    pthread_mutex_destroy(&sb->net_lock);
    pthread_mutex_destroy(&sb->record_lock);
    pthread_mutex_destroy(&sb->exec_lock);
    pthread_mutex_destroy(&sb->lock);
    free(sb);
}

int sandbox_reserve(struct vmhost *vh, const struct sandbox_create_params *p, bool detached,
                    struct sandbox **out, struct airlock_error *e)
{
    struct sandbox *sb = calloc(1, sizeof(*sb));
    if (!sb)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
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

    int rc = 0;
    pthread_mutex_lock(&vh->lock);
    if (detached) {
        sandbox_generate_id(sb->id, sizeof(sb->id)); /* 64 random bits: unique enough */
    } else if (p->id && *p->id) {
        snprintf(sb->id, sizeof(sb->id), "%s", p->id);
    } else {
        do
            sandbox_generate_id(sb->id, sizeof(sb->id));
        while (sandbox_registry_find_locked(vh, sb->id));
    }
    /* A detached one is kept by its builder's caller until a hand-out
     * registers it. */
    if (!detached)
        rc = sandbox_registry_admit_locked(vh, sb, sb->id, e);
    pthread_mutex_unlock(&vh->lock);
    if (rc < 0) {
        sandbox_free(sb);
        return rc;
    }
    if (fs_path(sb->dir, sizeof(sb->dir), "%s/%s", vh->sandboxes_dir, sb->id) < 0 ||
        fs_path(sb->disk, sizeof(sb->disk), "%s/disk.ext4", sb->dir) < 0) {
        pthread_mutex_lock(&vh->lock);
        sandbox_registry_remove_locked(vh, sb);
        pthread_mutex_unlock(&vh->lock);
        sandbox_free(sb);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "data directory path too long: %s",
                                 vh->sandboxes_dir);
    }
    *out = sb;
    return 0;
}

void sandbox_unregister(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->vh->lock);
    sandbox_registry_remove_locked(sb->vh, sb);
    pthread_mutex_unlock(&sb->vh->lock);
    sandbox_put(sb);
}

bool sandbox_id_taken(struct vmhost *vh, const char *id)
{
    pthread_mutex_lock(&vh->lock);
    bool taken = sandbox_registry_find_locked(vh, id) != NULL;
    pthread_mutex_unlock(&vh->lock);
    return taken;
}

struct sandbox *sandbox_get(struct vmhost *vh, const char *id)
{
    pthread_mutex_lock(&vh->lock);
    struct sandbox *sb = sandbox_registry_find_locked(vh, id);
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

unsigned sandbox_count_from_template(struct vmhost *vh, const struct template_version *t,
                                     char *first, size_t firstlen)
{
    unsigned n = 0;
    pthread_mutex_lock(&vh->lock);
    for (struct sandbox *sb = vh->sandboxes; sb; sb = sb->next)
        if (sb->tmpl == t && n++ == 0 && first)
            snprintf(first, firstlen, "%s", sb->id);
    pthread_mutex_unlock(&vh->lock);
    return n;
}

struct guest_channel *sandbox_channel(struct sandbox *sb, struct airlock_error *e)
{
    pthread_mutex_lock(&sb->lock);
    struct guest_channel *ch = NULL;
    /* A migrating guest runs until the switchover. */
    if ((sb->state == SB_RUNNING || sb->state == SB_MIGRATING) && sb->channel) {
        ch = sb->channel;
        guest_channel_ref(ch);
    } else if (sb->state == SB_ERROR) {
        airlock_error_set(e, AIRLOCK_ERR_STATE, "sandbox %s is in state error: %s", sb->id,
                          sb->error);
    } else {
        airlock_error_set(e, AIRLOCK_ERR_STATE, "sandbox %s is %s, not running", sb->id,
                          sb_state_name(sb->state));
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

const char *sandbox_id(const struct sandbox *sb)
{
    return sb->id;
}

const char *sandbox_dir(const struct sandbox *sb)
{
    return sb->dir;
}

const struct template_version *sandbox_template(const struct sandbox *sb)
{
    return sb->tmpl;
}

enum sb_state sandbox_state(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    enum sb_state st = sb->state;
    pthread_mutex_unlock(&sb->lock);
    return st;
}

void sandbox_view_take(struct sandbox *sb, struct sandbox_view *out)
{
    pthread_mutex_lock(&sb->lock);
    memcpy(out->id, sb->id, sizeof(out->id));
    memcpy(out->template_name, sb->template_name, sizeof(out->template_name));
    memcpy(out->error, sb->error, sizeof(out->error));
    out->state = sb->state;
    out->qemu_pid = sb->vm ? vm_pid(sb->vm) : 0;
    out->last_activity_unix_ms = sb->last_activity_unix_ms;
    memcpy(out->store_object, sb->store_object, sizeof(out->store_object));
    memcpy(out->volumes, sb->volumes, sizeof(out->volumes));
    pthread_mutex_unlock(&sb->lock);
    /* An exec still streaming is activity now, however quiet its output
     * (the scheduler's idle controller reads this). */
    pthread_mutex_lock(&sb->exec_lock);
    if (sb->execs)
        out->last_activity_unix_ms = clock_realtime_ms();
    pthread_mutex_unlock(&sb->exec_lock);
    out->accel = vm_accel_name(sb->vh->accel);
    memcpy(out->image_hash, sb->vh->image.hash, sizeof(out->image_hash));
    out->vcpus = sb->vcpus;
    out->memory_mb = sb->memory_mb;
    out->created_unix_ms = sb->created_unix_ms;
    out->restored = sb->restored;
    out->from_pool = sb->from_pool;
}
