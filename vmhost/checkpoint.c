/* Creating, listing, deleting and pinning checkpoints (checkpoint.h).
 *
 * Writing one: the sandbox goes running -> checkpointing, so delete,
 * suspend and other checkpoints wait their turn; for a DISK checkpoint the
 * guest flushes its page cache first (`sync`). Then QMP stop (QEMU drains
 * its I/O, so the disk file is one point in time), for FULL the whole VM
 * state migrated into the directory, a reflink of the disk, cont, fsyncs.
 * The VM stands still for the migration (FULL) or for a reflink (DISK). */
#include "checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "sandbox_guest_init.h"
#include "sandbox_internal.h"
#include "sandbox_shared_store.h"
#include "sandbox_stop.h"

#define CHECKPOINT_SYNC_TIMEOUT_MS 60000
#define CHECKPOINT_MIGRATE_TIMEOUT_MS 300000
/* A FULL checkpoint writes up to the guest's RAM; beyond that, device state. */
#define CHECKPOINT_SPACE_MARGIN (64ull << 20)

static int checkpoint_files_at(struct checkpoint_files *f, const char *dir, struct airlock_error *e)
{
    if (fs_path(f->dir, sizeof(f->dir), "%s", dir) < 0 ||
        fs_path(f->disk, sizeof(f->disk), "%s/disk.ext4", dir) < 0 ||
        fs_path(f->state, sizeof(f->state), "%s/state", dir) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "checkpoint path too long: %s", dir);
    return 0;
}

static int check_name(const char *name, struct airlock_error *e)
{
    if (sandbox_id_valid(name))
        return 0;
    return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                             "name: must be 1-64 characters of a-z, 0-9, '_' or '-'");
}

/* DIR/checkpoints/<leaf>; leaf is a valid name, maybe with a prefix. */
static int checkpoint_dir(const struct sandbox *sb, const char *prefix, const char *name, char *out,
                          size_t outlen, struct airlock_error *e)
{
    if (fs_path(out, outlen, "%s/checkpoints/%s%s", sb->dir, prefix, name) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "sandbox directory path too long: %s",
                                 sb->dir);
    return 0;
}

/* running -> checkpointing; *vm and a reference to *ch for the caller.
 * full: the store must have room for the guest's RAM. */
static int begin(struct sandbox *sb, bool full, struct vm **vm, struct guest_channel **ch,
                 struct airlock_error *e)
{
    int rc = sandbox_wake(sb, e);
    if (rc < 0)
        return rc;
    char what[128];
    snprintf(what, sizeof(what), "a full checkpoint of sandbox %s (%u MiB of memory)", sb->id,
             sb->memory_mb);
    pthread_mutex_lock(&sb->lock);
    if (sb->state != SB_RUNNING || !sb->vm || !sb->channel) {
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "sandbox %s is %s; only a running sandbox can be checkpointed",
                               sb->id, sb_state_name(sb->state));
    } else if (full && store_require_free(&sb->vh->store,
                                          ((unsigned long long)sb->memory_mb << 20) +
                                              CHECKPOINT_SPACE_MARGIN,
                                          what, AIRLOCK_ERROR_MSG(e)) < 0) {
        rc = airlock_error_classify(e, AIRLOCK_ERR_CAPACITY);
    } else {
        sandbox_transition(sb, SB_CHECKPOINTING); /* from here on only this call uses sb->vm */
        *vm = sb->vm;
        *ch = sb->channel;
        guest_channel_ref(*ch);
    }
    pthread_mutex_unlock(&sb->lock);
    return rc;
}

static void end(struct sandbox *sb, struct guest_channel *ch)
{
    guest_channel_release(ch);
    pthread_mutex_lock(&sb->lock);
    if (sb->state == SB_CHECKPOINTING) /* not error: QEMU died meanwhile */
        sandbox_transition(sb, SB_RUNNING);
    pthread_mutex_unlock(&sb->lock);
}

/* Where a checkpoint's time went, in microseconds (logged). */
struct checkpoint_timing {
    int64_t stop_us, save_us, disk_us, cont_us, fsync_us;
};

/* Disk (and, full, the VM state) into the existing directory f->dir;
 * durable: fsynced (a temporary one for a fork is not: it goes when the
 * fork is made, and a crash leaves it to the leftover cleanup). */
static int write_checkpoint(struct sandbox *sb, struct vm *vm, struct guest_channel *ch,
                            const struct checkpoint_files *f, bool durable,
                            struct checkpoint_timing *t, char *err, size_t errlen)
{
    if (!f->full && sandbox_guest_run(ch, "sync", CHECKPOINT_SYNC_TIMEOUT_MS, err, errlen) < 0)
        return -1;
    int64_t t0 = clock_monotonic_us();
    if (vm_qmp_command(vm, "stop", NULL, err, errlen) < 0)
        return -1;
    int64_t stopped = clock_monotonic_us();
    int rc = 0;
    if (f->full && vm_save_full_state(vm, f->state, CHECKPOINT_MIGRATE_TIMEOUT_MS, err, errlen) < 0)
        rc = -1;
    int64_t saved = clock_monotonic_us();
    if (rc == 0 && store_clone_file(sb->disk, f->disk, err, errlen) < 0)
        rc = -1;
    /* The volumes at the same instant as the disk (docs/volumes.md). */
    if (rc == 0 && sandbox_volumes_checkpoint(sb, f->dir, durable, err, errlen) < 0)
        rc = -1;
    int64_t cloned = clock_monotonic_us();
    /* After a completed migration QEMU still runs the VM on cont. */
    char cerr[256];
    if (vm_qmp_command(vm, "cont", NULL, cerr, sizeof(cerr)) < 0) {
        log_warn("cannot continue the VM after a checkpoint", "sandbox=%s error=\"%s\"", sb->id,
                 cerr);
        if (rc == 0)
            snprintf(err, errlen, "continue the VM: %s", cerr);
        rc = -1;
    }
    int64_t continued = clock_monotonic_us();
    if (rc == 0 && durable &&
        (fs_fsync_file(f->disk, err, errlen) < 0 ||
         (f->full && fs_fsync_file(f->state, err, errlen) < 0) ||
         fs_fsync_dir(f->dir, err, errlen) < 0))
        rc = -1;
    *t = (struct checkpoint_timing){ .stop_us = stopped - t0,
                                     .save_us = saved - stopped,
                                     .disk_us = cloned - saved,
                                     .cont_us = continued - cloned,
                                     .fsync_us = clock_monotonic_us() - continued };
    return rc;
}

static void log_timing(const struct sandbox *sb, const char *name,
                       const struct checkpoint_files *f, const struct checkpoint_timing *t)
{
    struct stat st;
    long long state_kib = f->full && stat(f->state, &st) == 0 ? (long long)st.st_size >> 10 : 0;
    log_info("checkpoint written",
             "sandbox=%s checkpoint=%s kind=%s state_kib=%lld stop_us=%lld save_us=%lld "
             "disk_us=%lld cont_us=%lld fsync_us=%lld",
             sb->id, name, f->full ? "full" : "disk", state_kib, (long long)t->stop_us,
             (long long)t->save_us, (long long)t->disk_us, (long long)t->cont_us,
             (long long)t->fsync_us);
}

/* Written to checkpoints/.tmp-<name>, renamed to checkpoints/<name>. */
static int write_named(struct sandbox *sb, struct vm *vm, struct guest_channel *ch,
                       const char *name, bool full, struct airlock_error *e)
{
    char parent[PATH_MAX], tmp[PATH_MAX], final[PATH_MAX], ignored[256];
    struct checkpoint_files f = { .full = full, .state_fd = -1 };
    if (checkpoint_dir(sb, "", "", parent, sizeof(parent), e) < 0 ||
        checkpoint_dir(sb, ".tmp-", name, tmp, sizeof(tmp), e) < 0 ||
        checkpoint_dir(sb, "", name, final, sizeof(final), e) < 0 ||
        checkpoint_files_at(&f, tmp, e) < 0)
        return -1;
    if (mkdir(parent, 0700) < 0 && errno != EEXIST)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", parent, strerror(errno));
    if (access(final, F_OK) == 0)
        return airlock_error_set(e, AIRLOCK_ERR_EXISTS,
                                 "checkpoint %s of sandbox %s already exists", name, sb->id);
    fs_remove_tree(tmp, ignored, sizeof(ignored)); /* left by a crash mid-write */
    if (mkdir(tmp, 0700) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", tmp, strerror(errno));
    struct checkpoint_timing t = { 0 };
    if (write_checkpoint(sb, vm, ch, &f, true, &t, AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    log_timing(sb, name, &f, &t);
    if (rename(tmp, final) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s to %s: %s", tmp, final,
                          strerror(errno));
        goto fail;
    }
    if (fs_fsync_dir(parent, AIRLOCK_ERROR_MSG(e)) < 0) {
        fs_remove_tree(final, ignored, sizeof(ignored));
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    }
    return 0;
fail:;
    /* Judged before the partial files go and free their space. */
    enum airlock_err class = store_full(&sb->vh->store, AIRLOCK_ERROR_MSG(e))
                                 ? AIRLOCK_ERR_CAPACITY
                                 : AIRLOCK_ERR_INTERNAL;
    fs_remove_tree(tmp, ignored, sizeof(ignored));
    return airlock_error_classify(e, class);
}

/* A full checkpoint into the shared store too, before it is answered, so
 * it outlives the node (a lost node's sandbox comes back from it
 * elsewhere). A disk checkpoint, or one of a cold-booted sandbox (no
 * template build for deltas), stays on the node. A failed upload takes
 * the local checkpoint back: a checkpoint answered is in the store. */
static int store_named(struct sandbox *sb, const char *name, char set[SANDBOX_STORE_OBJECT_SIZE],
                       struct airlock_error *e)
{
    char dir[PATH_MAX], ignored[256];
    struct checkpoint_files f;
    if (checkpoint_dir(sb, "", name, dir, sizeof(dir), e) < 0 || checkpoint_files_at(&f, dir, e) < 0)
        return -1;
    if (sandbox_shared_store_put_checkpoint(sb, name, f.state, f.disk, dir, set, e) == 0)
        return 0;
    if (fs_remove_tree(dir, ignored, sizeof(ignored)) < 0)
        log_warn("cannot remove a checkpoint the store refused", "sandbox=%s checkpoint=%s "
                 "error=\"%s\"", sb->id, name, ignored);
    return -1;
}

int checkpoint_create(struct sandbox *sb, const char *name, enum checkpoint_kind kind,
                      struct checkpoint_info *out, struct airlock_error *e)
{
    int64_t started = clock_monotonic_ms();
    int rc = check_name(name, e);
    struct vm *vm;
    struct guest_channel *ch;
    if (rc < 0 || (rc = begin(sb, kind == CHECKPOINT_FULL, &vm, &ch, e)) < 0)
        return rc;
    rc = write_named(sb, vm, ch, name, kind == CHECKPOINT_FULL, e);
    out->store_object[0] = '\0';
    if (rc == 0 && kind == CHECKPOINT_FULL && sb->vh->snapshots && sb->tmpl)
        rc = store_named(sb, name, out->store_object, e);
    end(sb, ch);
    if (rc < 0) {
        log_warn("checkpoint failed", "sandbox=%s checkpoint=%s error=\"%s\"", sb->id, name,
                 e->message);
        return rc;
    }
    snprintf(out->name, sizeof(out->name), "%s", name);
    out->kind = kind;
    out->created_unix_ms = clock_realtime_ms();
    log_info("checkpoint created", "sandbox=%s checkpoint=%s kind=%s ms=%lld", sb->id, name,
             kind == CHECKPOINT_FULL ? "full" : "disk",
             (long long)(clock_monotonic_ms() - started));
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct checkpoint_info *)a)->name,
                  ((const struct checkpoint_info *)b)->name);
}

int checkpoint_list(struct sandbox *sb, struct checkpoint_info **out, size_t *n,
                    struct airlock_error *e)
{
    *out = NULL;
    *n = 0;
    char parent[PATH_MAX];
    if (checkpoint_dir(sb, "", "", parent, sizeof(parent), e) < 0)
        return -1;
    DIR *d = opendir(parent);
    if (!d) {
        if (errno == ENOENT) /* none taken yet */
            return 0;
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "open %s: %s", parent, strerror(errno));
    }
    int rc = 0;
    size_t cap = 0;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        char path[PATH_MAX];
        struct stat st;
        /* Skips ., .. and what is being written or deleted (.tmp-, .del-). */
        if (!sandbox_id_valid(ent->d_name) ||
            fs_path(path, sizeof(path), "%s/%s", parent, ent->d_name) < 0 || stat(path, &st) < 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            struct checkpoint_info *grown = realloc(*out, cap * sizeof(**out));
            if (!grown) {
                rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
                break;
            }
            *out = grown;
        }
        struct checkpoint_info *ci = &(*out)[(*n)++];
        snprintf(ci->name, sizeof(ci->name), "%.64s", ent->d_name); /* valid: at most 64 */
        ci->store_object[0] = '\0'; /* the scheduler's record names it */
        char state[PATH_MAX];
        ci->kind = fs_path(state, sizeof(state), "%s/state", path) == 0 && access(state, F_OK) == 0
                       ? CHECKPOINT_FULL
                       : CHECKPOINT_DISK;
        /* The directory's last entry went in when it was written. */
        ci->created_unix_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
    }
    closedir(d);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        *n = 0;
        return rc;
    }
    qsort(*out, *n, sizeof(**out), by_name);
    return 0;
}

static int not_found(const struct sandbox *sb, const char *name, struct airlock_error *e)
{
    return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "checkpoint %s of sandbox %s not found",
                             name, sb->id);
}

int checkpoint_delete(struct sandbox *sb, const char *name, struct airlock_error *e)
{
    char final[PATH_MAX], doomed[PATH_MAX];
    int rc = check_name(name, e);
    if (rc < 0)
        return rc;
    if (checkpoint_dir(sb, "", name, final, sizeof(final), e) < 0 ||
        checkpoint_dir(sb, ".del-", name, doomed, sizeof(doomed), e) < 0)
        return -1;
    /* Out of sight at once (and atomically with respect to pins, which link
     * under the same lock); removed after. */
    pthread_mutex_lock(&sb->lock);
    int renamed = rename(final, doomed);
    int saved = errno;
    pthread_mutex_unlock(&sb->lock);
    if (renamed < 0 && saved != ENOENT)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s: %s", final, strerror(saved));
    if (renamed == 0 && fs_remove_tree(doomed, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    /* Its set in the store, also when only the store has it: a lost
     * node's checkpoint of a sandbox restored here from the store. */
    int stored = sandbox_shared_store_drop_checkpoint(sb, name, e);
    if (stored < 0)
        return -1;
    if (renamed < 0 && !stored)
        return not_found(sb, name, e);
    log_info("checkpoint deleted", "sandbox=%s checkpoint=%s here=%d stored=%d", sb->id, name,
             renamed == 0, stored);
    return 0;
}

/* A new empty directory sandboxes/.pin-<id>-XXXXXX, outside the sandbox's
 * own so that deleting the sandbox does not pull it away either. */
static int make_pin_dir(struct sandbox *sb, struct checkpoint_files *f, bool full,
                        struct airlock_error *e)
{
    char tmpl[PATH_MAX];
    if (fs_path(tmpl, sizeof(tmpl), "%s/%s%s-XXXXXX", sb->vh->sandboxes_dir, CHECKPOINT_PIN_PREFIX,
                sb->id) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "data directory path too long: %s",
                                 sb->vh->sandboxes_dir);
    if (!mkdtemp(tmpl))
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", tmpl, strerror(errno));
    f->full = full;
    f->state_fd = -1;
    if (checkpoint_files_at(f, tmpl, e) < 0) {
        char ignored[256];
        fs_remove_tree(tmpl, ignored, sizeof(ignored));
        return -1;
    }
    return 0;
}

int checkpoint_pin(struct sandbox *sb, const char *name, struct checkpoint_files *out,
                   struct airlock_error *e)
{
    struct checkpoint_files src;
    char final[PATH_MAX];
    int rc = check_name(name, e);
    if (rc < 0)
        return rc;
    if (checkpoint_dir(sb, "", name, final, sizeof(final), e) < 0 ||
        checkpoint_files_at(&src, final, e) < 0 || make_pin_dir(sb, out, false, e) < 0)
        return -1;
    pthread_mutex_lock(&sb->lock);
    if (link(src.disk, out->disk) < 0) {
        rc = errno == ENOENT ? not_found(sb, name, e)
                             : airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "link %s: %s", src.disk,
                                                 strerror(errno));
    } else if (link(src.state, out->state) == 0) {
        out->full = true;
    } else if (errno != ENOENT) { /* ENOENT: a disk checkpoint */
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "link %s: %s", src.state, strerror(errno));
    }
    if (rc == 0)
        rc = sandbox_volumes_pin(src.dir, out->dir, e);
    pthread_mutex_unlock(&sb->lock);
    if (rc < 0)
        checkpoint_unpin(out);
    return rc;
}

int checkpoint_take_temporary(struct sandbox *sb, struct checkpoint_files *out,
                              struct airlock_error *e)
{
    struct vm *vm;
    struct guest_channel *ch;
    /* The state goes to memory, not the store: no room needed there. */
    int rc = begin(sb, false, &vm, &ch, e);
    if (rc < 0)
        return rc;
    if (make_pin_dir(sb, out, true, e) < 0) {
        rc = -1;
    } else if ((out->state_fd = memfd_create("airlock-fork-state", MFD_CLOEXEC)) < 0 ||
               fs_path(out->state, sizeof(out->state), "/proc/self/fd/%d", out->state_fd) < 0) {
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "memfd for the fork's VM state: %s",
                               strerror(errno));
        checkpoint_unpin(out);
    } else {
        struct checkpoint_timing t = { 0 };
        if (write_checkpoint(sb, vm, ch, out, false, &t, AIRLOCK_ERROR_MSG(e)) < 0) {
            checkpoint_unpin(out);
            rc = airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        } else {
            log_timing(sb, "(temporary)", out, &t);
        }
    }
    end(sb, ch);
    return rc;
}

void checkpoint_unpin(struct checkpoint_files *f)
{
    if (f->state_fd >= 0) {
        close(f->state_fd);
        f->state_fd = -1;
    }
    char err[256];
    if (fs_remove_tree(f->dir, err, sizeof(err)) < 0)
        log_warn("cannot remove a pinned checkpoint", "dir=%s error=\"%s\"", f->dir, err);
}
