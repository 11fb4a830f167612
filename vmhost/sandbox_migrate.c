#include "sandbox_migrate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "file_delta.h"
#include "fsutil.h"
#include "log.h"
#include "sandbox_guest_init.h"
#include "sandbox_internal.h"
#include "sandbox_network.h"
#include "sandbox_record.h"
#include "sandbox_shared_store.h"
#include "store.h"
#include "vmhost.h"

/* QEMU's whole precopy, however many rounds the guest's writes take. */
#define MIGRATE_STREAM_TIMEOUT_MS 300000
/* How long a prepared target waits for its source to connect. */
#define MIGRATE_ACCEPT_MS 60000
/* A migration whose next step does not come (the scheduler died, or lost
 * track of it) ends on its own: the source's guest runs again this long
 * after its last step, a target's copy goes (longer: its source may still
 * be sending). */
#define SOURCE_IDLE_MS 60000
#define TARGET_IDLE_MS (MIGRATE_STREAM_TIMEOUT_MS + 60000)

struct sandbox_migration {
    bool busy;     /* a step is using the VM (under sb->lock) */
    bool incoming; /* this node is the target */
    unsigned long serial;  /* which migration the watchdog watches */
    int64_t idle_deadline_ms; /* when idle: given up at this time */
    char pass1[PATH_MAX]; /* source: the disk as the first pass stored it */
    struct migration_incoming *in; /* target: the relay */
    int relay_fd;  /* target: the relay's end of QEMU's socketpair */
    int disk_fd;   /* target: the disk the relay finishes */
};

static void migration_free(struct sandbox_migration *m)
{
    if (!m)
        return;
    if (m->in)
        migration_incoming_cancel(m->in);
    if (m->relay_fd >= 0)
        close(m->relay_fd);
    if (m->disk_fd >= 0)
        close(m->disk_fd);
    if (m->pass1[0])
        unlink(m->pass1);
    free(m);
}

static struct sandbox_migration *migration_new(bool incoming)
{
    static unsigned long serials;
    struct sandbox_migration *m = calloc(1, sizeof(*m));
    if (m) {
        m->incoming = incoming;
        m->busy = true;
        m->relay_fd = m->disk_fd = -1;
        m->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
    }
    return m;
}

/* Takes sb's migration for a step: the one of the right side, idle. */
static struct sandbox_migration *step_begin(struct sandbox *sb, bool incoming, enum sb_state want,
                                            struct airlock_error *e)
{
    pthread_mutex_lock(&sb->lock);
    struct sandbox_migration *m = sb->migration;
    if (!m || m->incoming != incoming || sb->state != want) {
        airlock_error_set(e, AIRLOCK_ERR_STATE, "sandbox %s is %s, not being %s by this node",
                          sb->id, sb_state_name(sb->state), incoming ? "received" : "sent");
        m = NULL;
    } else if (m->busy) {
        airlock_error_set(e, AIRLOCK_ERR_STATE, "a step of sandbox %s's migration is under way",
                          sb->id);
        m = NULL;
    } else {
        m->busy = true;
    }
    pthread_mutex_unlock(&sb->lock);
    return m;
}

static void step_end(struct sandbox *sb, struct sandbox_migration *m)
{
    pthread_mutex_lock(&sb->lock);
    m->busy = false;
    m->idle_deadline_ms =
        clock_monotonic_ms() + (m->incoming ? TARGET_IDLE_MS : SOURCE_IDLE_MS);
    pthread_mutex_unlock(&sb->lock);
}

struct watch {
    struct sandbox *sb; /* a reference of its own */
    unsigned long serial;
};

/* Once a second: gone (finished, aborted, deleted) ends the watch; idle
 * past its deadline is aborted. */
static void *watchdog(void *arg)
{
    struct watch *w = arg;
    for (;;) {
        sleep(1);
        pthread_mutex_lock(&w->sb->lock);
        struct sandbox_migration *m = w->sb->migration;
        bool watched = m && m->serial == w->serial;
        bool due = watched && !m->busy && clock_monotonic_ms() >= m->idle_deadline_ms;
        pthread_mutex_unlock(&w->sb->lock);
        if (!watched)
            break;
        if (due) {
            struct airlock_error e;
            log_warn("a migration's next step did not come: given up", "sandbox=%s",
                     w->sb->id);
            if (sandbox_migrate_abort(w->sb, &e) < 0)
                log_error("cannot give up a stalled migration", "sandbox=%s error=\"%s\"",
                          w->sb->id, e.message);
            break;
        }
    }
    sandbox_put(w->sb);
    free(w);
    return NULL;
}

/* m, just begun or prepared on sb, ends on its own if left idle. */
static void watch(struct sandbox *sb, struct sandbox_migration *m)
{
    struct watch *w = malloc(sizeof(*w));
    pthread_t t;
    if (w && (w->sb = sandbox_get(sb->vh, sb->id))) {
        w->serial = m->serial;
        if (pthread_create(&t, NULL, watchdog, w) == 0) {
            pthread_detach(t);
            return;
        }
        sandbox_put(w->sb);
    }
    free(w);
    log_warn("a migration is not watched: it waits for its next step however long",
             "sandbox=%s", sb->id);
}

/* Source: the guest runs here on, as before the migration. */
static void source_settle(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    struct sandbox_migration *m = sb->migration;
    sb->migration = NULL;
    if (sb->state == SB_MIGRATING)
        sandbox_transition(sb, SB_RUNNING);
    pthread_mutex_unlock(&sb->lock);
    migration_free(m);
    sandbox_shared_store_forget(sb, NULL); /* the first pass */
}

int sandbox_migrate_begin(struct sandbox *sb, char *set, size_t setlen, struct airlock_error *e)
{
    int64_t started = clock_monotonic_ms();
    if (!sb->vh->snapshots)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "this node has no snapshot store (--snapshot-store) for a "
                                 "migration's disk");
    /* Volumes live on this node's store (docs/volumes.md): the target
     * would have nothing to put in the slots. */
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++)
        if (sb->volumes[i].used)
            return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                     "sandbox %s has volume %s attached; a sandbox with volumes "
                                     "does not migrate yet",
                                     sb->id, sb->volumes[i].name);
    struct sandbox_migration *m = migration_new(false);
    if (!m || fs_path(m->pass1, sizeof(m->pass1), "%s/migrate.pass1", sb->dir) < 0) {
        free(m);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory or path too long");
    }
    pthread_mutex_lock(&sb->lock);
    enum sb_state now = sb->state;
    bool ok = now == SB_RUNNING && sb->vm && sb->tmpl && !sb->migration;
    if (ok) {
        sandbox_transition(sb, SB_MIGRATING);
        sb->migration = m;
    }
    pthread_mutex_unlock(&sb->lock);
    if (!ok) {
        free(m);
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "sandbox %s is %s; only a running sandbox restored from a "
                                 "template migrates live",
                                 sb->id, sb_state_name(now));
    }
    /* The disk as it is now: a reflink, so the guest writes on. What it
     * writes from here follows at the switchover. */
    unlink(m->pass1);
    if (store_clone_file(sb->disk, m->pass1, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto fail;
    }
    if (sandbox_shared_store_upload(sb, NULL, m->pass1, e) < 0)
        goto fail;
    pthread_mutex_lock(&sb->lock);
    snprintf(set, setlen, "%s", sb->store_object);
    pthread_mutex_unlock(&sb->lock);
    step_end(sb, m);
    watch(sb, m);
    log_info("sandbox migration begun", "sandbox=%s set=%s ms=%lld", sb->id, set,
             (long long)(clock_monotonic_ms() - started));
    return 0;
fail:
    log_warn("sandbox migration not begun", "sandbox=%s error=\"%s\"", sb->id, e->message);
    source_settle(sb);
    return -1;
}

/* Target: the received disk in place, the network, QEMU waiting for the
 * stream, the relay listening. */
static int target_start(struct sandbox *sb, struct sandbox_migration *m, const char *source_node,
                        char addr[MIGRATION_ADDR_SIZE], char token[MIGRATION_TOKEN_SIZE],
                        struct airlock_error *e)
{
    struct vmhost *vh = sb->vh;
    char received[PATH_MAX], dir[PATH_MAX];
    if (fs_path(dir, sizeof(dir), "%s/suspend", sb->dir) < 0 ||
        fs_path(received, sizeof(received), "%s/disk.ext4", dir) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "path too long: %s", sb->dir);
    if (node_budget_claim(vh->budget, &sb->claim, sb->vcpus, sb->memory_mb, e) < 0)
        return -1;
    if (rename(received, sb->disk) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s to %s: %s", received,
                                 sb->disk, strerror(errno));
    char ignored[256];
    fs_remove_tree(dir, ignored, sizeof(ignored));
    if (sandbox_network_restore(sb, e) < 0)
        return -1;
    if (sandbox_start_vm(sb, true, 0, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "socketpair: %s", strerror(errno));
    m->relay_fd = sp[1];
    int rc = vm_migrate_live_in(sb->vm, sp[0], AIRLOCK_ERROR_MSG(e));
    close(sp[0]); /* QEMU has its own */
    if (rc < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    m->disk_fd = open(sb->disk, O_RDWR | O_CLOEXEC);
    if (m->disk_fd < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "open %s: %s", sb->disk,
                                 strerror(errno));
    return migration_incoming_start(vh->cfg.migration_addr ? vh->cfg.migration_addr : "127.0.0.1",
                                    vh->cfg.internal_tls, source_node, m->relay_fd, m->disk_fd,
                                    sb->dir, MIGRATE_ACCEPT_MS, &m->in, addr, token, e);
}

int sandbox_migrate_prepare(struct vmhost *vh, const char *id, const char *set,
                            const char *source_node, struct sandbox **out,
                            char addr[MIGRATION_ADDR_SIZE], char token[MIGRATION_TOKEN_SIZE],
                            struct airlock_error *e)
{
    int64_t started = clock_monotonic_ms();
    struct sandbox *sb;
    if (sandbox_shared_store_receive(vh, id, set, &sb, e) < 0)
        return -1;
    struct sandbox_migration *m = migration_new(true);
    if (!m) {
        sandbox_unreserve(sb);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    }
    pthread_mutex_lock(&sb->lock);
    sandbox_transition(sb, SB_RESUMING);
    sb->migration = m;
    pthread_mutex_unlock(&sb->lock);
    if (target_start(sb, m, source_node, addr, token, e) < 0) {
        airlock_error_prefix(e, "receive sandbox %s from vmhost:%s: ", id, source_node);
        log_warn("sandbox migration not prepared", "sandbox=%s error=\"%s\"", id, e->message);
        sandbox_unreserve(sb); /* VM, network and directory go; the set stays the source's */
        return -1;
    }
    step_end(sb, m);
    watch(sb, m);
    log_info("sandbox migration prepared", "sandbox=%s from=%s addr=%s ms=%lld", id, source_node,
             addr, (long long)(clock_monotonic_ms() - started));
    *out = sb;
    return 0;
}

/* Source: the guest stopped before the switchover; its disk's changes
 * since the first pass go after the memory sent so far. */
static int send_disk_changes(struct sandbox *sb, struct sandbox_migration *m,
                             struct migration_outgoing *o, uint64_t *bytes,
                             struct airlock_error *e)
{
    int delta = open(sb->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    int disk = open(sb->disk, O_RDONLY | O_CLOEXEC);
    int base = open(m->pass1, O_RDONLY | O_CLOEXEC);
    char sha[65];
    struct file_delta_stats st;
    int rc = -1;
    if (delta < 0 || disk < 0 || base < 0)
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "open the disk's files in %s: %s", sb->dir,
                          strerror(errno));
    else if (file_delta_encode_blocks(disk, base, delta, sha, &st, AIRLOCK_ERROR_MSG(e)) < 0)
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    else
        rc = migration_outgoing_send_disk(o, delta, sha, e);
    *bytes = rc == 0 ? st.delta_bytes : 0;
    if (delta >= 0)
        close(delta);
    if (disk >= 0)
        close(disk);
    if (base >= 0)
        close(base);
    return rc;
}

int sandbox_migrate_send(struct sandbox *sb, const char *addr, const char *token,
                         const char *target_node, int64_t *stopped_ms, struct airlock_error *e)
{
    int64_t started = clock_monotonic_ms();
    struct sandbox_migration *m = step_begin(sb, false, SB_MIGRATING, e);
    if (!m)
        return -1;
    struct vm *vm = sb->vm;
    struct migration_outgoing *o = NULL;
    uint64_t disk_bytes = 0;
    int sp[2] = { -1, -1 };
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "socketpair: %s", strerror(errno));
        goto fail;
    }
    if (migration_outgoing_start(addr, sb->vh->cfg.internal_tls, target_node, token, sp[1], &o,
                                 e) < 0)
        goto fail;
    /* Under TCG, QEMU 7.2's copy of a running guest lost some of what the
     * guest wrote meanwhile (its kernel crashed on the target in one
     * migration of eight, docs/snapshot-store.md): there the guest stands
     * still for the whole copy, as for a suspend. */
    bool live = sb->vh->accel == VM_ACCEL_KVM;
    int64_t stopped = clock_monotonic_ms();
    int rc = vm_migrate_live_out(vm, sp[0], live, MIGRATE_STREAM_TIMEOUT_MS,
                                 AIRLOCK_ERROR_MSG(e));
    close(sp[0]); /* QEMU has its own: its close at the end is the relay's EOF */
    sp[0] = -1;
    if (rc < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto fail;
    }
    if (live)
        stopped = clock_monotonic_ms();
    if (send_disk_changes(sb, m, o, &disk_bytes, e) < 0)
        goto fail;
    if (vm_migrate_live_continue(vm, MIGRATE_STREAM_TIMEOUT_MS, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto fail;
    }
    rc = migration_outgoing_finish(o, false, e);
    o = NULL;
    if (rc < 0)
        goto fail;
    close(sp[1]);
    *stopped_ms = clock_monotonic_ms() - stopped;
    step_end(sb, m);
    log_info("sandbox migration sent",
             "sandbox=%s to=%s ms=%lld stopped_ms=%lld disk_bytes=%llu live=%d", sb->id,
             target_node, (long long)(clock_monotonic_ms() - started), (long long)*stopped_ms,
             (unsigned long long)disk_bytes, live);
    return 0;
fail:;
    struct airlock_error ignored;
    if (o)
        migration_outgoing_finish(o, true, &ignored);
    for (int i = 0; i < 2; i++)
        if (sp[i] >= 0)
            close(sp[i]);
    airlock_error_prefix(e, "send sandbox %s to vmhost:%s: ", sb->id, target_node);
    if (vm_migrate_live_abort(vm, MIGRATE_ACCEPT_MS, ignored.message, sizeof(ignored.message)) < 0)
        log_error("the guest does not run again after a failed migration", "sandbox=%s "
                  "error=\"%s\"", sb->id, ignored.message);
    log_warn("sandbox migration failed; it runs here", "sandbox=%s error=\"%s\"", sb->id,
             e->message);
    source_settle(sb);
    return -1;
}

int sandbox_migrate_finish(struct sandbox *sb, struct airlock_error *e)
{
    int64_t started = clock_monotonic_ms();
    struct sandbox_migration *m = step_begin(sb, true, SB_RESUMING, e);
    if (!m)
        return -1;
    int rc = migration_incoming_finish(m->in, e);
    m->in = NULL;
    if (rc == 0 && vm_migrate_live_in_wait(sb->vm, MIGRATE_ACCEPT_MS, AIRLOCK_ERROR_MSG(e)) < 0)
        rc = -1;
    int64_t loaded = clock_monotonic_ms();
    if (rc == 0 && (vm_qmp_command(sb->vm, "cont", NULL, AIRLOCK_ERROR_MSG(e)) < 0 ||
                    sandbox_connect_guest(sb, AIRLOCK_ERROR_MSG(e)) < 0 ||
                    sandbox_guest_init(sb, sb->channel, AIRLOCK_ERROR_MSG(e)) < 0))
        rc = -1;
    if (rc < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        airlock_error_prefix(e, "receive sandbox %s: ", sb->id);
        log_warn("sandbox migration not finished; the copy here goes", "sandbox=%s error=\"%s\"",
                 sb->id, e->message);
        sandbox_remove(sb);
        return -1;
    }
    pthread_mutex_lock(&sb->lock);
    sb->migration = NULL;
    sandbox_transition(sb, SB_RUNNING);
    pthread_mutex_unlock(&sb->lock);
    migration_free(m);
    char why[512];
    if (sandbox_record_save(sb, why, sizeof(why)) < 0)
        log_error("cannot record the migrated sandbox", "sandbox=%s error=\"%s\"", sb->id, why);
    sandbox_shared_store_forget(sb, NULL); /* the first pass: the VM is the truth now */
    log_info("sandbox migration finished", "sandbox=%s ms=%lld load_wait_ms=%lld", sb->id,
             (long long)(clock_monotonic_ms() - started), (long long)(loaded - started));
    return 0;
}

int sandbox_migrate_abort(struct sandbox *sb, struct airlock_error *e)
{
    pthread_mutex_lock(&sb->lock);
    struct sandbox_migration *m = sb->migration;
    bool incoming = m && m->incoming;
    enum sb_state want = incoming ? SB_RESUMING : SB_MIGRATING;
    pthread_mutex_unlock(&sb->lock);
    if (!m)
        return 0; /* an earlier step settled it */
    if (!step_begin(sb, incoming, want, e))
        return -1;
    if (incoming) {
        sandbox_remove(sb);
    } else {
        char why[512];
        if (vm_migrate_live_abort(sb->vm, MIGRATE_ACCEPT_MS, why, sizeof(why)) < 0)
            log_error("the guest does not run again after an aborted migration", "sandbox=%s "
                      "error=\"%s\"", sb->id, why);
        source_settle(sb);
    }
    log_info("sandbox migration aborted", "sandbox=%s side=%s", sb->id,
             incoming ? "target" : "source");
    return 0;
}

bool sandbox_migrate_busy_locked(const struct sandbox *sb)
{
    return sb->migration && sb->migration->busy;
}

void sandbox_migrate_drop(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    struct sandbox_migration *m = sb->migration;
    sb->migration = NULL;
    pthread_mutex_unlock(&sb->lock);
    migration_free(m);
}
