/* A detached sandbox (a pooled VM or a spare QEMU) taking its place under
 * the id a create asked for (sandbox_internal.h: sandbox_take_id). QEMU
 * keeps its open disk, sockets and console; its working directory, by
 * which a restarted vmhost recognizes it (vm_adopt.c), moves with the
 * directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "fsutil.h"
#include "log.h"
#include "sandbox_internal.h"
#include "sandbox_net.h"

/* A detached sandbox being registered, its sb->id just changed by the
 * caller (under the registry lock): renames old_id's directory and namespace to
 * sb->id's and updates sb->dir, sb->disk and the VM's paths. All or
 * nothing: on failure everything keeps old_id's names (and the caller
 * gives sb its old id back). A failure is INTERNAL. */
static int rename_from(struct sandbox *sb, const char *old_id, struct airlock_error *e)
{
    char dir[PATH_MAX], disk[PATH_MAX];
    if (fs_path(dir, sizeof(dir), "%s/%s", sb->vh->sandboxes_dir, sb->id) < 0 ||
        fs_path(disk, sizeof(disk), "%s/disk.ext4", dir) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "data directory path too long: %s",
                                 sb->vh->sandboxes_dir);
    /* NOREPLACE: a directory of that name (a concurrent create of the same
     * id) is never taken over. */
    if (renameat2(AT_FDCWD, sb->dir, AT_FDCWD, dir, RENAME_NOREPLACE) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s to %s: %s", sb->dir, dir,
                                 strerror(errno));
    if (sb->net_up && sandbox_net_rename(old_id, sb->id, AIRLOCK_ERROR_MSG(e)) < 0)
        goto undo_dir;
    if (vm_move_run_dir(sb->vm, dir, AIRLOCK_ERROR_MSG(e)) < 0)
        goto undo_net;
    pthread_mutex_lock(&sb->lock);
    memcpy(sb->dir, dir, sizeof(sb->dir));
    memcpy(sb->disk, disk, sizeof(sb->disk));
    pthread_mutex_unlock(&sb->lock);
    return 0;
undo_net:
    if (sb->net_up)
        sandbox_net_rename(sb->id, old_id, NULL, 0);
undo_dir:
    renameat2(AT_FDCWD, dir, AT_FDCWD, sb->dir, RENAME_NOREPLACE);
    return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
}

int sandbox_take_id(struct sandbox *sb, const char *id, struct airlock_error *e)
{
    struct vmhost *vh = sb->vh;
    char own_id[sizeof(sb->id)];
    memcpy(own_id, sb->id, sizeof(own_id));
    bool rename = id && strcmp(id, own_id) != 0;
    pthread_mutex_lock(&vh->lock);
    int rc = sandbox_registry_admit_locked(vh, sb, rename ? id : own_id, e);
    pthread_mutex_unlock(&vh->lock);
    if (rc < 0 || !rename)
        return rc;
    if (rename_from(sb, own_id, e) < 0) {
        pthread_mutex_lock(&vh->lock);
        sandbox_registry_remove_locked(vh, sb);
        memcpy(sb->id, own_id, sizeof(sb->id));
        pthread_mutex_unlock(&vh->lock);
        log_warn("detached sandbox not renamed", "sandbox=%s error=\"%s\"", own_id, e->message);
        return -1;
    }
    return 0;
}

