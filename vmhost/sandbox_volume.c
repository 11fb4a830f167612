/* A sandbox's volumes (sandbox_volume.h). */
#include "sandbox_volume.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "guest_channel.h"
#include "log.h"
#include "store.h"
#include "sandbox_internal.h"
#include "volume_path.h"

#define VOLUME_GUEST_TIMEOUT_MS 15000

static const char *shown(const Airlock__Vmhost__V1__VolumeAttachment *a)
{
    return *a->name ? a->name : a->volume_id;
}

int sandbox_volumes_check(Airlock__Vmhost__V1__VolumeAttachment *const *att, size_t n,
                          struct airlock_error *e)
{
    if (n > VM_VOLUME_SLOTS)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "volumes: at most %d, got %zu",
                                 VM_VOLUME_SLOTS, n);
    for (size_t i = 0; i < n; i++) {
        const Airlock__Vmhost__V1__VolumeAttachment *a = att[i];
        char path[SANDBOX_VOLUME_PATH_MAX + 1] = "", msg[512];
        if (!sandbox_id_valid(a->volume_id))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "volumes[%zu].volume_id: 1-64 characters of a-z, 0-9, '_' "
                                     "or '-'", i);
        if (*a->snapshot_id && !sandbox_id_valid(a->snapshot_id))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "volumes[%zu].snapshot_id: 1-64 characters of a-z, 0-9, '_' "
                                     "or '-'", i);
        if (*a->snapshot_id && !a->read_only)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "volumes[%zu].read_only: a snapshot (%s) attaches read-only",
                                     i, shown(a));
        if (a->path.len > SANDBOX_VOLUME_PATH_MAX || memchr(a->path.data, '\0', a->path.len))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "volumes[%zu].path: at most %d bytes, no NUL", i,
                                     SANDBOX_VOLUME_PATH_MAX - 1);
        if (a->path.len)
            memcpy(path, a->path.data, a->path.len);
        if (volume_path_check(path, SANDBOX_VOLUME_PATH_MAX, msg, sizeof(msg)) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID, "volumes[%zu].%s", i, msg);
        for (size_t j = 0; j < i; j++) {
            const Airlock__Vmhost__V1__VolumeAttachment *b = att[j];
            if (strcmp(a->volume_id, b->volume_id) == 0 &&
                strcmp(a->snapshot_id, b->snapshot_id) == 0)
                return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                         "volumes[%zu]: volume %s is attached twice", i, shown(a));
            if (b->path.len == a->path.len && memcmp(a->path.data, b->path.data, a->path.len) == 0)
                return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                         "volumes[%zu].path: %s is volumes[%zu]'s too", i, path, j);
        }
    }
    return 0;
}

/* One slot into *v: the volume made (when new) and held, or a snapshot's
 * private reflink made (of copies_dir's copy when given). *v says what to
 * undo, also when it fails. */
static int attach_one(struct sandbox *sb, unsigned slot,
                      const Airlock__Vmhost__V1__VolumeAttachment *a, const char *copies_dir,
                      bool *made, struct sandbox_volume *v, struct airlock_error *e)
{
    struct volume_store *vs = sb->vh->volumes;
    sandbox_volume_from(a, v);
    if (*a->snapshot_id) {
        char src[PATH_MAX];
        if (sandbox_volume_copy_path(sb->dir, slot, v->image, sizeof(v->image)) < 0 ||
            (copies_dir && sandbox_volume_copy_path(copies_dir, slot, src, sizeof(src)) < 0))
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "%s: path too long", sb->dir);
        if (!copies_dir)
            return volume_private_copy(vs, a->volume_id, a->snapshot_id, v->image, e);
        if (store_clone_file(src, v->image, AIRLOCK_ERROR_MSG(e)) < 0)
            return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        return 0;
    }
    int rc = volume_image(vs, a->volume_id, NULL, v->image, sizeof(v->image), e);
    if (rc < 0 && e->class == AIRLOCK_ERR_NOT_FOUND && a->size_mb) {
        airlock_error_clear(e);
        if (volume_make(vs, a->volume_id, a->size_mb, e) < 0)
            return -1;
        *made = true;
        rc = volume_image(vs, a->volume_id, NULL, v->image, sizeof(v->image), e);
    }
    if (rc < 0)
        return -1;
    /* A read-only attach of the volume itself still excludes a writer:
     * it would see a file system change under it. */
    return volume_hold(vs, a->volume_id, sb->id, e);
}

int sandbox_volumes_attach(struct sandbox *sb, Airlock__Vmhost__V1__VolumeAttachment *const *att,
                           size_t n, const char *copies_dir, struct airlock_error *e)
{
    if (n == 0)
        return 0;
    if (sandbox_volumes_check(att, n, e) < 0)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        /* Filled aside: answers read the slots (under lock) meanwhile. */
        struct sandbox_volume v;
        int rc = attach_one(sb, i, att[i], copies_dir, &sb->volumes_made[i], &v, e);
        pthread_mutex_lock(&sb->lock);
        sb->volumes[i] = v;
        pthread_mutex_unlock(&sb->lock);
        if (rc < 0) {
            airlock_error_prefix(e, "volumes[%u] (%s): ", i, shown(att[i]));
            sandbox_volumes_detach(sb);
            return -1;
        }
    }
    return 0;
}

void sandbox_volumes_keep(struct sandbox *sb)
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++)
        sb->volumes_made[i] = false;
}

void sandbox_volumes_detach(struct sandbox *sb)
{
    struct volume_store *vs = sb->vh->volumes;
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        struct sandbox_volume *v = &sb->volumes[i];
        if (!v->used)
            continue;
        if (*v->snapshot_id) {
            unlink(v->image);
        } else {
            volume_release(vs, v->volume_id, sb->id);
            struct airlock_error ignored = { 0 };
            if (sb->volumes_made[i] && volume_delete(vs, v->volume_id, &ignored) < 0)
                log_warn("cannot delete a volume a failed create made", "volume=%s error=\"%s\"",
                         v->volume_id, ignored.message);
        }
        sb->volumes_made[i] = false;
        pthread_mutex_lock(&sb->lock);
        *v = (struct sandbox_volume){ 0 };
        pthread_mutex_unlock(&sb->lock);
    }
}

static struct guest_channel *channel(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    struct guest_channel *ch = sb->channel;
    pthread_mutex_unlock(&sb->lock);
    return ch;
}

/* One VolumeRequest; the guest's Result checked (never trusted beyond it). */
static int guest_volume(struct sandbox *sb, Airlock__Guest__V1__VolumeRequest *req,
                        struct airlock_error *e)
{
    struct guest_channel *ch = channel(sb);
    if (!ch)
        return airlock_error_set(e, AIRLOCK_ERR_STATE, "sandbox %s has no guest", sb->id);
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_VOLUME;
    f.volume = req;
    GuestFrame *ans;
    enum guest_recv_status st = guest_call(ch, &f, VOLUME_GUEST_TIMEOUT_MS, &ans);
    if (st != GUEST_RECV_OK)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "slot %u: guest did not answer (%s)",
                                 req->slot,
                                 st == GUEST_RECV_TIMEOUT ? "timeout" : "channel closed");
    int rc = 0;
    if (ans->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "slot %u: guest answered frame body %d",
                               req->slot, (int)ans->body_case);
    else if (ans->result->errno_value)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "guest: %.1000s (errno %d)",
                               ans->result->message, ans->result->errno_value);
    frame_free(ans);
    return rc;
}

int sandbox_volume_call(struct sandbox *sb, unsigned slot, Airlock__Guest__V1__VolumeOp op,
                        uint64_t size_bytes, struct airlock_error *e)
{
    Airlock__Guest__V1__VolumeRequest r = AIRLOCK__GUEST__V1__VOLUME_REQUEST__INIT;
    r.op = op;
    r.slot = slot;
    r.size_bytes = size_bytes;
    return guest_volume(sb, &r, e);
}

/* QMP block_resize to the image's size: QEMU's truncate tells the
 * device's parent of the resize whatever the size (block/io.c,
 * bdrv_co_write_req_finish -> bdrv_parent_cb_resize), and virtio-blk
 * raises a config change, so the guest reads the capacity again. */
static int notify_size(struct sandbox *sb, unsigned slot, uint64_t size, struct airlock_error *e)
{
    char args[128];
    snprintf(args, sizeof(args), "{\"device\":\"vol%u\",\"size\":%llu}", slot,
             (unsigned long long)size);
    if (vm_qmp_command(sb->vm, "block_resize", args, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    return 0;
}

int sandbox_volumes_mount(struct sandbox *sb, struct airlock_error *e)
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        struct sandbox_volume *v = &sb->volumes[i];
        if (!v->used)
            continue;
        struct stat st;
        if (stat(v->image, &st) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "volume %s: %s: %s", v->name,
                                     v->image, strerror(errno));
        Airlock__Guest__V1__VolumeRequest r = AIRLOCK__GUEST__V1__VOLUME_REQUEST__INIT;
        r.op = AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_MOUNT;
        r.slot = i;
        r.path.data = (uint8_t *)v->path;
        r.path.len = strlen(v->path);
        r.read_only = v->read_only;
        r.size_bytes = (uint64_t)st.st_size;
        if (notify_size(sb, i, r.size_bytes, e) < 0 || guest_volume(sb, &r, e) < 0)
            return airlock_error_prefix(e, "volume %s at %s: ", v->name, v->path);
    }
    return 0;
}

/* The slot's disk is size bytes now: the guest told (size notice) and its
 * file system grown to it (GROW). */
static int tell_grown(struct sandbox *sb, unsigned slot, uint64_t size, struct airlock_error *e)
{
    if (notify_size(sb, slot, size, e) < 0)
        return -1;
    return sandbox_volume_call(sb, slot, AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_GROW, size, e);
}

void sandbox_volumes_refresh(struct sandbox *sb)
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        struct sandbox_volume *v = &sb->volumes[i];
        struct airlock_error e = { 0 };
        struct stat st;
        if (!v->used || v->read_only)
            continue;
        if (stat(v->image, &st) < 0)
            airlock_error_set(&e, AIRLOCK_ERR_INTERNAL, "%s: %s", v->image, strerror(errno));
        else
            tell_grown(sb, i, (uint64_t)st.st_size, &e);
        if (e.message[0])
            log_warn("volume's size not told to the resumed guest", "sandbox=%s volume=%s "
                     "error=\"%s\"", sb->id, v->name, e.message);
    }
}

int sandbox_volumes_sync(struct sandbox *sb, struct airlock_error *e)
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++)
        if (sb->volumes[i].used && !sb->volumes[i].read_only &&
            sandbox_volume_call(sb, i, AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_SYNC, 0, e) < 0)
            return airlock_error_prefix(e, "sync volume %s: ", sb->volumes[i].name);
    return 0;
}

int sandbox_volume_slot(struct sandbox *sb, const char *volume_id)
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++)
        if (sb->volumes[i].used && !*sb->volumes[i].snapshot_id &&
            strcmp(sb->volumes[i].volume_id, volume_id) == 0)
            return (int)i;
    return -1;
}

void sandbox_volume_images(struct sandbox *sb, const char *out[VM_VOLUME_SLOTS])
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++)
        out[i] = sb->volumes[i].used ? sb->volumes[i].image : NULL;
}

void sandbox_volumes_adopt(struct sandbox *sb)
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        struct sandbox_volume *v = &sb->volumes[i];
        struct airlock_error e = { 0 };
        if (v->used && !*v->snapshot_id &&
            volume_hold(sb->vh->volumes, v->volume_id, sb->id, &e) < 0)
            log_warn("sandbox's volume not held again", "sandbox=%s volume=%s error=\"%s\"", sb->id,
                     v->volume_id, e.message);
    }
}

/* The sandbox holding volume_id read-write, with a reference, and its slot;
 * NULL when none holds it. */
static struct sandbox *holder(struct vmhost *vh, const char *volume_id, int *slot)
{
    char id[VOLUME_ID_SIZE];
    volume_holder(vh->volumes, volume_id, id);
    struct sandbox *sb = *id ? sandbox_get(vh, id) : NULL;
    if (sb && (*slot = sandbox_volume_slot(sb, volume_id)) < 0) {
        sandbox_put(sb);
        sb = NULL;
    }
    return sb;
}

/* True when sb's guest runs and can be asked (its VM is not stopped). */
static bool guest_running(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    bool running = sb->state == SB_RUNNING && sb->vm && sb->channel;
    pthread_mutex_unlock(&sb->lock);
    return running;
}

int sandbox_volume_snapshot(struct vmhost *vh, const char *volume_id, const char *snapshot_id,
                            struct airlock_error *e)
{
    int slot = -1;
    struct sandbox *sb = holder(vh, volume_id, &slot);
    bool frozen = false;
    if (sb && guest_running(sb) && !sb->volumes[slot].read_only) {
        if (sandbox_volume_call(sb, (unsigned)slot, AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_FREEZE,
                                0, e) < 0) {
            airlock_error_prefix(e, "freeze volume %s in sandbox %s: ", volume_id, sb->id);
            sandbox_put(sb);
            return -1;
        }
        frozen = true;
    }
    int rc = volume_snapshot(vh->volumes, volume_id, snapshot_id, e);
    if (frozen) {
        struct airlock_error te = { 0 };
        if (sandbox_volume_call(sb, (unsigned)slot, AIRLOCK__GUEST__V1__VOLUME_OP__VOLUME_OP_THAW,
                                0, &te) < 0)
            log_warn("cannot thaw a volume (the guest thaws it itself within 10 s)",
                     "sandbox=%s volume=%s error=\"%s\"", sb->id, volume_id, te.message);
    }
    if (sb)
        sandbox_put(sb);
    return rc;
}

/* The file size bound of sb's QEMU, UINT64_MAX without a VM. */
static uint64_t file_bound(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    uint64_t bound = sb->vm ? vm_max_file_bytes(sb->vm) : UINT64_MAX;
    pthread_mutex_unlock(&sb->lock);
    return bound;
}

int sandbox_volume_grow(struct vmhost *vh, const char *volume_id, uint64_t size_mb,
                        struct airlock_error *e)
{
    int slot = -1;
    struct sandbox *sb = holder(vh, volume_id, &slot);
    /* QEMU writes no file past the bound its start set (a jail's
     * RLIMIT_FSIZE): beyond it the guest would get I/O errors. */
    uint64_t bound = sb ? file_bound(sb) : UINT64_MAX;
    if (size_mb > bound >> 20) {
        airlock_error_set(e, AIRLOCK_ERR_STATE,
                          "volume %s: sandbox %s's VM can take it up to %llu MiB; suspend the "
                          "sandbox to grow it further",
                          volume_id, sb->id, (unsigned long long)(bound >> 20));
        sandbox_put(sb);
        return -1;
    }
    uint64_t size = 0;
    int rc = volume_grow(vh->volumes, volume_id, size_mb, &size, e);
    /* A stopped guest is told when it runs again (sandbox_volumes_refresh
     * at its resume). */
    if (rc == 0 && sb && guest_running(sb) && !sb->volumes[slot].read_only) {
        rc = tell_grown(sb, (unsigned)slot, size, e);
        if (rc < 0)
            airlock_error_prefix(e, "volume %s grew to %llu MiB; sandbox %s: ", volume_id,
                                 (unsigned long long)size_mb, sb->id);
    }
    if (sb)
        sandbox_put(sb);
    return rc;
}

void sandbox_volume_from(const Airlock__Vmhost__V1__VolumeAttachment *a,
                         struct sandbox_volume *v)
{
    *v = (struct sandbox_volume){ .used = true, .read_only = a->read_only };
    snprintf(v->volume_id, sizeof(v->volume_id), "%s", a->volume_id);
    snprintf(v->snapshot_id, sizeof(v->snapshot_id), "%s", a->snapshot_id);
    snprintf(v->name, sizeof(v->name), "%s", shown(a));
    memcpy(v->path, a->path.data, a->path.len);
    v->path[a->path.len] = '\0';
}

int sandbox_volume_copy_path(const char *dir, unsigned slot, char *out, size_t len)
{
    return snprintf(out, len, "%s/vol%u.img", dir, slot) < (int)len ? 0 : -1;
}

static bool writable(const struct sandbox_volume *v)
{
    return v->used && !v->read_only;
}

int sandbox_volumes_checkpoint(struct sandbox *sb, const char *dir, bool durable, char *err,
                               size_t errlen)
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        char dst[PATH_MAX];
        if (!writable(&sb->volumes[i]))
            continue;
        if (sandbox_volume_copy_path(dir, i, dst, sizeof(dst)) < 0) {
            snprintf(err, errlen, "%s: path too long", dir);
            return -1;
        }
        if (store_clone_file(sb->volumes[i].image, dst, err, errlen) < 0 ||
            (durable && fs_fsync_file(dst, err, errlen) < 0))
            return -1;
    }
    return 0;
}

int sandbox_volumes_pin(const char *src_dir, const char *dst_dir, struct airlock_error *e)
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        char src[PATH_MAX], dst[PATH_MAX];
        if (sandbox_volume_copy_path(src_dir, i, src, sizeof(src)) < 0 ||
            sandbox_volume_copy_path(dst_dir, i, dst, sizeof(dst)) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "%s: path too long", src_dir);
        if (link(src, dst) < 0 && errno != ENOENT)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "link %s: %s", src, strerror(errno));
    }
    return 0;
}

int sandbox_volumes_restore(struct sandbox *sb, const char *dir, struct airlock_error *e)
{
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        char src[PATH_MAX];
        struct sandbox_volume *v = &sb->volumes[i];
        if (!writable(v))
            continue;
        if (sandbox_volume_copy_path(dir, i, src, sizeof(src)) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "%s: path too long", dir);
        /* A checkpoint older than the volumes' support has none: kept. */
        if (access(src, F_OK) < 0)
            continue;
        if (volume_replace(sb->vh->volumes, v->volume_id, src, e) < 0)
            return airlock_error_prefix(e, "volume %s: ", v->name);
    }
    return 0;
}

bool sandbox_volumes_any(struct sandbox *sb)
{
    return sb->volumes[0].used; /* slots fill from 0 */
}

size_t sandbox_volumes_writable(struct sandbox *sb)
{
    size_t n = 0;
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++)
        n += writable(&sb->volumes[i]);
    return n;
}

int sandbox_volumes_fork(struct sandbox *sb, const char *dir, char *const *new_ids, size_t n_ids,
                         size_t *used, Airlock__Vmhost__V1__VolumeAttachment msgs[VM_VOLUME_SLOTS],
                         Airlock__Vmhost__V1__VolumeAttachment *out[VM_VOLUME_SLOTS], size_t *n,
                         struct airlock_error *e)
{
    *n = 0;
    for (unsigned i = 0; i < VM_VOLUME_SLOTS && sb->volumes[i].used; i++) {
        struct sandbox_volume *v = &sb->volumes[i];
        Airlock__Vmhost__V1__VolumeAttachment *m = &msgs[i];
        airlock__vmhost__v1__volume_attachment__init(m);
        m->path.data = (uint8_t *)v->path;
        m->path.len = strlen(v->path);
        m->read_only = v->read_only;
        m->volume_id = v->volume_id;
        m->snapshot_id = v->snapshot_id;
        m->name = v->name;
        if (v->read_only && !*v->snapshot_id)
            return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                     "volume %s is attached read-only as itself; a fork needs a "
                                     "snapshot of it", v->name);
        if (!v->read_only) {
            char src[PATH_MAX];
            if (*used >= n_ids)
                return airlock_error_set(e, AIRLOCK_ERR_INVALID, "volume_ids: too few");
            if (sandbox_volume_copy_path(dir, i, src, sizeof(src)) < 0)
                return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "%s: path too long", dir);
            if (volume_clone_file(sb->vh->volumes, src, new_ids[*used], e) < 0)
                return airlock_error_prefix(e, "clone of volume %s: ", v->name);
            m->volume_id = new_ids[*used];
            m->name = new_ids[*used];
            (*used)++;
        }
        out[(*n)++] = m;
    }
    return 0;
}
