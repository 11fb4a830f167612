/* A sandbox's end: deleted by request, or a build or hand-out undone. */
#include <stdio.h>

#include "fsutil.h"
#include "log.h"
#include "sandbox_build.h"
#include "sandbox_internal.h"
#include "sandbox_migrate.h"
#include "sandbox_shared_store.h"
#include "sandbox_network.h"
#include "sandbox_record.h"
#include "sandbox_volume.h"

/* Stops what runs and removes what exists; the sandbox is already out of
 * the registry. */
static void sandbox_teardown(struct sandbox *sb)
{
    sandbox_record_remove(sb);
    pthread_mutex_lock(&sb->lock);
    sandbox_transition(sb, SB_DELETING);
    pthread_mutex_unlock(&sb->lock);
    sandbox_migrate_drop(sb);
    sandbox_drop_vm(sb);
    /* QEMU is gone: nothing writes the volumes any more. Never deleted
     * (a failed create's new ones aside): they outlive the sandbox. */
    sandbox_volumes_detach(sb);
    sandbox_network_down(sb);
    char err[512];
    if (fs_remove_tree(sb->dir, err, sizeof(err)) < 0)
        log_error("cannot remove sandbox directory", "sandbox=%s error=\"%s\"", sb->id, err);
    pthread_mutex_lock(&sb->lock);
    sandbox_transition(sb, SB_DELETED);
    pthread_mutex_unlock(&sb->lock);
}

void sandbox_discard(struct sandbox *sb)
{
    sandbox_teardown(sb);
    sandbox_put(sb); /* the registry's (never registered) */
    sandbox_put(sb); /* the creator's */
}

void sandbox_unreserve(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->vh->lock);
    sandbox_registry_remove_locked(sb->vh, sb);
    pthread_mutex_unlock(&sb->vh->lock);
    sandbox_discard(sb);
}

void sandbox_remove(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->vh->lock);
    sandbox_registry_remove_locked(sb->vh, sb);
    pthread_mutex_unlock(&sb->vh->lock);
    sandbox_teardown(sb);
    sandbox_put(sb); /* the registry's */
}

void sandbox_abandon(struct sandbox *sb, const char *err)
{
    log_warn("sandbox create failed", "sandbox=%s error=\"%.300s\"", sb->id, err);
    sandbox_unreserve(sb);
}

/* The images here of volumes that moved to another node with a sandbox
 * (docs/volumes.md "Across nodes"). A failure is logged: the scheduler
 * no longer sends work for them here. */
static void drop_moved_volumes(struct vmhost *vh, const char *id, char *const *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct airlock_error e = { 0 };
        if (volume_drop_image(vh->volumes, ids[i], &e) < 0)
            log_warn("moved volume's old image not removed", "sandbox=%s volume=%s error=\"%s\"",
                     id, ids[i], e.message);
        else
            log_info("moved volume's old image removed", "sandbox=%s volume=%s", id, ids[i]);
    }
}

int sandbox_delete(struct vmhost *vh, const char *id, const char *keep_stored,
                   bool keep_checkpoints, char *const *moved_volumes, size_t n_moved,
                   struct airlock_error *e)
{
    pthread_mutex_lock(&vh->lock);
    struct sandbox *sb = sandbox_registry_find_locked(vh, id);
    /* A sandbox being created, suspended, resumed, checkpointed or restored
     * is owned by that operation (which uses its VM without holding
     * sb->lock). */
    enum sb_state busy = SB_RUNNING;
    bool stepping = false; /* a migration's step is using its VM */
    if (sb) {
        pthread_mutex_lock(&sb->lock);
        busy = sb->state;
        stepping = sandbox_migrate_busy_locked(sb);
        pthread_mutex_unlock(&sb->lock);
    }
    if (sb_state_busy(busy) || stepping) {
        pthread_mutex_unlock(&vh->lock);
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "sandbox %s is %s; delete it when that has finished", id,
                                 sb_state_name(busy));
    }
    if (sb)
        sandbox_registry_remove_locked(vh, sb);
    pthread_mutex_unlock(&vh->lock);
    if (!sb)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "sandbox %s not found", id);
    /* What the guest wrote to its volumes and still holds in its page
     * cache reaches the images before QEMU goes, as an unmount would; a
     * guest that does not answer costs its last seconds of writes. A
     * paused guest cannot answer: ext4 commits every 5 s, and a suspend
     * syncs. */
    struct airlock_error sync_e = { 0 };
    if (busy == SB_RUNNING && sandbox_volumes_writable(sb) &&
        sandbox_volumes_sync(sb, &sync_e) < 0)
        log_warn("volumes not synced before the delete", "sandbox=%s error=\"%s\"", sb->id,
                 sync_e.message);
    sandbox_shared_store_forget(sb, keep_stored); /* its suspend in the shared store */
    if (!keep_checkpoints)
        sandbox_shared_store_forget_checkpoints(sb);
    sandbox_teardown(sb); /* its holds go: the moved volumes' images can */
    drop_moved_volumes(vh, sb->id, moved_volumes, n_moved);
    log_info("sandbox deleted", "sandbox=%s", sb->id);
    sandbox_put(sb);
    return 0;
}
