#include "sandbox_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "fsutil.h"
#include "sandbox.h"
#include "sandbox_guest_init.h"
#include "sandbox_net.h"

#define POOL_WARM_EXEC_TIMEOUT_MS 30000

int sandbox_pool_warm(struct sandbox *sb, char *err, size_t errlen)
{
    /* The first round installs a stand-in CA and runs one exec: an exec's
     * paths (guestd's spawn, fork, exec, ld.so, libc) run for the first
     * time since the restore cost the first exec after a hand-out ~245 ms
     * against ~50 for the next. The second round installs no CA (which
     * empties the slot again) and warms what a continue after a pause
     * runs (timers catching up); the hand-out repeats the init with real
     * values. */
    for (int round = 0; round < 2; round++) {
        if (round > 0 && (vm_qmp_command(sb->vm, "stop", NULL, err, errlen) < 0 ||
                          vm_qmp_command(sb->vm, "cont", NULL, err, errlen) < 0))
            return -1;
        if ((round == 0 ? sandbox_guest_warm_up : sandbox_guest_init)(sb, sb->channel, err,
                                                                      errlen) < 0)
            return -1;
        if (round == 0 &&
            sandbox_guest_run(sb->channel, "true", POOL_WARM_EXEC_TIMEOUT_MS, err, errlen) < 0)
            return -1;
    }
    return vm_qmp_command(sb->vm, "stop", NULL, err, errlen);
}

int sandbox_rename_from(struct sandbox *sb, const char *old_id, char *err, size_t errlen)
{
    char dir[PATH_MAX], disk[PATH_MAX];
    if (fs_path(dir, sizeof(dir), "%s/%s", sb->vh->sandboxes_dir, sb->id) < 0 ||
        fs_path(disk, sizeof(disk), "%s/disk.ext4", dir) < 0) {
        snprintf(err, errlen, "data directory path too long: %s", sb->vh->sandboxes_dir);
        return -1;
    }
    /* NOREPLACE: a directory of that name (a concurrent create of the same
     * id) is never taken over. */
    if (renameat2(AT_FDCWD, sb->dir, AT_FDCWD, dir, RENAME_NOREPLACE) < 0) {
        snprintf(err, errlen, "rename %s to %s: %s", sb->dir, dir, strerror(errno));
        return -1;
    }
    if (sb->net_up && sandbox_net_rename(old_id, sb->id, err, errlen) < 0)
        goto undo_dir;
    if (vm_move_run_dir(sb->vm, dir, err, errlen) < 0)
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
    return -1;
}
