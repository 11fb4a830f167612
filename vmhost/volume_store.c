/* The node's volumes on its store (volume_store.h). */
#include "volume_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "sandbox_id.h"
#include "store.h"

#define MIB (1024ull * 1024)

struct volume_hold {
    char id[VOLUME_ID_SIZE];
    char sandbox[VOLUME_ID_SIZE];
    struct volume_hold *next;
};

struct volume_store {
    const struct store *store;
    char dir[PATH_MAX];            /* STORE/volumes */
    pthread_mutex_t lock;          /* one change of the directory or holds at a time */
    struct volume_hold *holds;
};

int volume_store_open(const struct store *s, struct volume_store **out, char *err, size_t errlen)
{
    struct volume_store *vs = calloc(1, sizeof(*vs));
    if (!vs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    vs->store = s;
    if (fs_path(vs->dir, sizeof(vs->dir), "%s/volumes", s->root) < 0 ||
        fs_mkdir_p(vs->dir, 0700, err, errlen) < 0) {
        if (!*err)
            snprintf(err, errlen, "store path too long for volumes");
        free(vs);
        return -1;
    }
    pthread_mutex_init(&vs->lock, NULL);
    *out = vs;
    return 0;
}

void volume_store_free(struct volume_store *vs)
{
    if (!vs)
        return;
    while (vs->holds) {
        struct volume_hold *h = vs->holds;
        vs->holds = h->next;
        free(h);
    }
    pthread_mutex_destroy(&vs->lock);
    free(vs);
}

void volume_info_free(struct volume_info *vi)
{
    free(vi->snapshots);
    vi->snapshots = NULL;
    vi->n_snapshots = 0;
}

static int check_id(const char *what, const char *id, struct airlock_error *e)
{
    if (!id || !*id)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: required", what);
    if (!sandbox_id_valid(id))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "%s: must be 1-64 characters of a-z, 0-9, '_' or '-'", what);
    return 0;
}

/* STORE/volumes/<id>[/<rest>]: ids checked by the caller. */
static int vpath(const struct volume_store *vs, char *out, size_t len, const char *id,
                 const char *rest, struct airlock_error *e)
{
    if (fs_path(out, len, "%s/%s%s%s", vs->dir, id, rest ? "/" : "", rest ? rest : "") < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "volume %s: path too long", id);
    return 0;
}

static int snap_path(const struct volume_store *vs, char *out, size_t len, const char *id,
                     const char *snapshot, struct airlock_error *e)
{
    if (fs_path(out, len, "%s/%s/snapshots/%s.img", vs->dir, id, snapshot) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "volume %s: path too long", id);
    return 0;
}

/* NOT_FOUND naming the volume when its image is missing. */
static int existing_image(const struct volume_store *vs, const char *id, char *out, size_t len,
                          struct airlock_error *e)
{
    if (check_id("volume_id", id, e) < 0 || vpath(vs, out, len, id, "disk.img", e) < 0)
        return -1;
    if (access(out, F_OK) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "volume %s not found", id);
    return 0;
}

/* A snapshot needs no image beside it: a volume that moved to another
 * node leaves its snapshots here (volume_drop_image). */
static int existing_snapshot(const struct volume_store *vs, const char *id, const char *snapshot,
                             char *out, size_t len, struct airlock_error *e)
{
    if (check_id("volume_id", id, e) < 0 || check_id("snapshot_id", snapshot, e) < 0 ||
        snap_path(vs, out, len, id, snapshot, e) < 0)
        return -1;
    if (access(out, F_OK) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "snapshot %s of volume %s not found",
                                 snapshot, id);
    return 0;
}

static struct volume_hold *find_hold(struct volume_store *vs, const char *id)
{
    for (struct volume_hold *h = vs->holds; h; h = h->next)
        if (strcmp(h->id, id) == 0)
            return h;
    return NULL;
}

/* 0 when id is a volume id no sandbox here holds; STATE naming the holder. */
static int unheld(struct volume_store *vs, const char *id, struct airlock_error *e)
{
    if (check_id("volume_id", id, e) < 0)
        return -1;
    struct volume_hold *h = find_hold(vs, id);
    if (h)
        return airlock_error_set(e, AIRLOCK_ERR_STATE, "volume %s is attached to sandbox %s", id,
                                 h->sandbox);
    return 0;
}

static int require_free(struct volume_store *vs, uint64_t bytes, const char *id,
                        struct airlock_error *e)
{
    char what[128];
    snprintf(what, sizeof(what), "volume %s", id);
    if (store_require_free(vs->store, bytes, what, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_CAPACITY);
    return 0;
}

/* dst (absent) becomes a reflink of src, under a temporary name first. */
static int clone_into(const char *src, const char *dst, struct airlock_error *e)
{
    char tmp[PATH_MAX];
    if (fs_path(tmp, sizeof(tmp), "%s.tmp", dst) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: path too long", dst);
    unlink(tmp); /* left by a crash */
    if (store_clone_file(src, tmp, AIRLOCK_ERROR_MSG(e)) < 0) {
        unlink(tmp);
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    }
    if (rename(tmp, dst) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s: %s", tmp, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* STORE/volumes/<id> (made now; EXISTS when there), with snapshots/. */
static int make_dir(struct volume_store *vs, const char *id, char *dir, size_t len,
                    struct airlock_error *e)
{
    char snaps[PATH_MAX];
    if (vpath(vs, dir, len, id, NULL, e) < 0 ||
        vpath(vs, snaps, sizeof(snaps), id, "snapshots", e) < 0)
        return -1;
    if (mkdir(dir, 0700) < 0) {
        if (errno == EEXIST)
            return airlock_error_set(e, AIRLOCK_ERR_EXISTS, "volume %s already exists", id);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", dir, strerror(errno));
    }
    if (mkdir(snaps, 0700) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", snaps, strerror(errno));
        rmdir(dir);
        return -1;
    }
    return 0;
}

static void remove_dir(const char *dir)
{
    char ignored[256];
    fs_remove_tree(dir, ignored, sizeof(ignored));
}

static int format_image(const char *tmp, uint64_t size_mb, struct airlock_error *e)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", tmp, strerror(errno));
    int rc = ftruncate(fd, (off_t)(size_mb * MIB));
    int saved = errno;
    close(fd);
    if (rc < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "size %s: %s", tmp, strerror(saved));
    /* Lazy inode tables and journal: the format writes metadata only, so
     * the image stays sparse and the make fast whatever its size. */
    const char *argv[] = { "mkfs.ext4", "-F", "-q", "-E", "lazy_itable_init=1,lazy_journal_init=1",
                           tmp, NULL };
    if (run_command(argv, NULL, NULL, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    if (fs_fsync_file(tmp, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    return 0;
}

int volume_make(struct volume_store *vs, const char *id, uint64_t size_mb, struct airlock_error *e)
{
    if (check_id("volume_id", id, e) < 0)
        return -1;
    if (size_mb == 0 || size_mb > VOLUME_MAX_SIZE_MB)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "size_mb: volume %s needs a size of 1..%llu MiB", id,
                                 (unsigned long long)VOLUME_MAX_SIZE_MB);
    char dir[PATH_MAX], tmp[PATH_MAX], image[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = require_free(vs, size_mb * MIB, id, e);
    if (rc == 0)
        rc = make_dir(vs, id, dir, sizeof(dir), e);
    if (rc < 0)
        goto out;
    if ((rc = vpath(vs, tmp, sizeof(tmp), id, "disk.img.tmp", e)) < 0 ||
        (rc = vpath(vs, image, sizeof(image), id, "disk.img", e)) < 0 ||
        (rc = format_image(tmp, size_mb, e)) < 0)
        goto undo;
    if (rename(tmp, image) < 0) {
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s: %s", tmp, strerror(errno));
        goto undo;
    }
    goto out;
undo:
    remove_dir(dir);
out:
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

static int list_snapshots(const struct volume_store *vs, const char *id, struct volume_info *out,
                          struct airlock_error *e)
{
    char dir[PATH_MAX];
    if (vpath(vs, dir, sizeof(dir), id, "snapshots", e) < 0)
        return -1;
    DIR *d = opendir(dir);
    if (!d)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "open %s: %s", dir, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n <= 4 || n - 4 >= VOLUME_ID_SIZE || strcmp(de->d_name + n - 4, ".img") != 0)
            continue; /* ., .., a crashed snapshot's .tmp */
        void *grown = realloc(out->snapshots, (out->n_snapshots + 1) * sizeof(*out->snapshots));
        if (!grown) {
            rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
            break;
        }
        out->snapshots = grown;
        snprintf(out->snapshots[out->n_snapshots++], VOLUME_ID_SIZE, "%.*s", (int)(n - 4),
                 de->d_name);
    }
    closedir(d);
    return rc;
}

int volume_get(struct volume_store *vs, const char *id, struct volume_info *out,
               struct airlock_error *e)
{
    *out = (struct volume_info){ 0 };
    char image[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = existing_image(vs, id, image, sizeof(image), e);
    struct stat st;
    if (rc == 0 && stat(image, &st) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "stat %s: %s", image, strerror(errno));
    if (rc == 0) {
        snprintf(out->id, sizeof(out->id), "%s", id);
        out->size_bytes = (uint64_t)st.st_size;
        out->used_bytes = (uint64_t)st.st_blocks * 512;
        struct volume_hold *h = find_hold(vs, id);
        snprintf(out->holder, sizeof(out->holder), "%s", h ? h->sandbox : "");
        rc = list_snapshots(vs, id, out, e);
    }
    pthread_mutex_unlock(&vs->lock);
    if (rc < 0)
        volume_info_free(out);
    return rc;
}

int volume_image(struct volume_store *vs, const char *id, const char *snapshot, char *path,
                 size_t len, struct airlock_error *e)
{
    pthread_mutex_lock(&vs->lock);
    int rc = snapshot && *snapshot ? existing_snapshot(vs, id, snapshot, path, len, e)
                                   : existing_image(vs, id, path, len, e);
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

int volume_snapshot(struct volume_store *vs, const char *id, const char *snapshot,
                    struct airlock_error *e)
{
    char image[PATH_MAX], dst[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = existing_image(vs, id, image, sizeof(image), e);
    if (rc == 0)
        rc = check_id("snapshot_id", snapshot, e);
    if (rc == 0)
        rc = snap_path(vs, dst, sizeof(dst), id, snapshot, e);
    if (rc == 0 && access(dst, F_OK) == 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_EXISTS, "snapshot %s of volume %s already exists",
                               snapshot, id);
    if (rc == 0)
        rc = clone_into(image, dst, e);
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

/* new_id's directory made, its image a reflink of src: all or nothing. */
static int clone_volume_locked(struct volume_store *vs, const char *src, const char *new_id,
                               struct airlock_error *e)
{
    char dir[PATH_MAX], image[PATH_MAX];
    if (check_id("new_volume_id", new_id, e) < 0 || make_dir(vs, new_id, dir, sizeof(dir), e) < 0)
        return -1;
    if (vpath(vs, image, sizeof(image), new_id, "disk.img", e) < 0 ||
        clone_into(src, image, e) < 0) {
        remove_dir(dir);
        return -1;
    }
    return 0;
}

int volume_clone(struct volume_store *vs, const char *id, const char *snapshot,
                 const char *new_id, struct airlock_error *e)
{
    char src[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = existing_snapshot(vs, id, snapshot, src, sizeof(src), e);
    if (rc == 0)
        rc = clone_volume_locked(vs, src, new_id, e);
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

int volume_clone_file(struct volume_store *vs, const char *src, const char *new_id,
                      struct airlock_error *e)
{
    pthread_mutex_lock(&vs->lock);
    int rc = clone_volume_locked(vs, src, new_id, e);
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

int volume_replace(struct volume_store *vs, const char *id, const char *src,
                   struct airlock_error *e)
{
    char image[PATH_MAX], tmp[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = existing_image(vs, id, image, sizeof(image), e);
    if (rc == 0)
        rc = vpath(vs, tmp, sizeof(tmp), id, "disk.img.restore", e);
    if (rc == 0) {
        unlink(tmp);
        rc = clone_into(src, tmp, e);
    }
    if (rc == 0 && rename(tmp, image) < 0) {
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s: %s", tmp, strerror(errno));
        unlink(tmp);
    }
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

int volume_grow(struct volume_store *vs, const char *id, uint64_t size_mb, uint64_t *size_bytes,
                struct airlock_error *e)
{
    char image[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = existing_image(vs, id, image, sizeof(image), e);
    struct stat st;
    if (rc == 0 && stat(image, &st) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "stat %s: %s", image, strerror(errno));
    if (rc < 0)
        goto out;
    uint64_t want = size_mb * MIB;
    if (size_mb > VOLUME_MAX_SIZE_MB || want <= (uint64_t)st.st_size) {
        rc = airlock_error_set(e, AIRLOCK_ERR_INVALID,
                               "size_mb: volume %s is %llu MiB; it only grows "
                               "(to at most %llu MiB)",
                               id, (unsigned long long)((uint64_t)st.st_size / MIB),
                               (unsigned long long)VOLUME_MAX_SIZE_MB);
        goto out;
    }
    if ((rc = require_free(vs, want - (uint64_t)st.st_size, id, e)) < 0)
        goto out;
    if (truncate(image, (off_t)want) < 0) {
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "grow %s: %s", image, strerror(errno));
        goto out;
    }
    *size_bytes = want;
out:
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

int volume_delete(struct volume_store *vs, const char *id, struct airlock_error *e)
{
    char image[PATH_MAX], dir[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = check_id("volume_id", id, e);
    if (rc == 0 && ((rc = vpath(vs, dir, sizeof(dir), id, NULL, e)) == 0))
        rc = vpath(vs, image, sizeof(image), id, "disk.img", e);
    /* Without its image when it moved away: its snapshots here go too. */
    if (rc == 0 && access(dir, F_OK) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "volume %s not found", id);
    if (rc == 0)
        rc = unheld(vs, id, e);
    /* The image first: a crash part-way leaves no volume, only leftovers. */
    if (rc == 0 && unlink(image) < 0 && errno != ENOENT)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "delete %s: %s", image, strerror(errno));
    if (rc == 0)
        remove_dir(dir);
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

int volume_install(struct volume_store *vs, const char *id, const char *src,
                   struct airlock_error *e)
{
    char dir[PATH_MAX], image[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = unheld(vs, id, e);
    if (rc == 0 && make_dir(vs, id, dir, sizeof(dir), e) < 0) {
        if (e->class != AIRLOCK_ERR_EXISTS)
            rc = -1;
        else
            airlock_error_clear(e); /* a copy of its own, older: replaced */
    }
    if (rc == 0)
        rc = vpath(vs, image, sizeof(image), id, "disk.img", e);
    /* A reflink, not a rename: a sandbox's directory may be another btrfs
     * subvolume (EXDEV). */
    if (rc == 0)
        rc = clone_into(src, image, e);
    if (rc == 0 && fs_fsync_dir(dir, AIRLOCK_ERROR_MSG(e)) < 0)
        rc = airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

int volume_drop_image(struct volume_store *vs, const char *id, struct airlock_error *e)
{
    char dir[PATH_MAX], image[PATH_MAX], snaps[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = unheld(vs, id, e);
    if (rc == 0 && (vpath(vs, dir, sizeof(dir), id, NULL, e) < 0 ||
                    vpath(vs, image, sizeof(image), id, "disk.img", e) < 0 ||
                    vpath(vs, snaps, sizeof(snaps), id, "snapshots", e) < 0))
        rc = -1;
    if (rc == 0 && unlink(image) < 0 && errno != ENOENT)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "delete %s: %s", image, strerror(errno));
    /* The directory goes only when no snapshot keeps it. */
    if (rc == 0 && rmdir(snaps) == 0)
        rmdir(dir);
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

int volume_snapshot_delete(struct volume_store *vs, const char *id, const char *snapshot,
                           struct airlock_error *e)
{
    char path[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = existing_snapshot(vs, id, snapshot, path, sizeof(path), e);
    if (rc == 0 && unlink(path) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "delete %s: %s", path, strerror(errno));
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

int volume_hold(struct volume_store *vs, const char *id, const char *sandbox_id,
                struct airlock_error *e)
{
    char image[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = existing_image(vs, id, image, sizeof(image), e);
    struct volume_hold *h = rc == 0 ? find_hold(vs, id) : NULL;
    if (h && strcmp(h->sandbox, sandbox_id) != 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "volume %s is attached read-write to sandbox %s", id, h->sandbox);
    if (rc == 0 && !h) {
        h = calloc(1, sizeof(*h));
        if (!h) {
            rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
        } else {
            snprintf(h->id, sizeof(h->id), "%s", id);
            snprintf(h->sandbox, sizeof(h->sandbox), "%s", sandbox_id);
            h->next = vs->holds;
            vs->holds = h;
        }
    }
    pthread_mutex_unlock(&vs->lock);
    return rc;
}

void volume_release(struct volume_store *vs, const char *id, const char *sandbox_id)
{
    pthread_mutex_lock(&vs->lock);
    for (struct volume_hold **p = &vs->holds; *p; p = &(*p)->next) {
        if (strcmp((*p)->id, id) == 0 && strcmp((*p)->sandbox, sandbox_id) == 0) {
            struct volume_hold *h = *p;
            *p = h->next;
            free(h);
            break;
        }
    }
    pthread_mutex_unlock(&vs->lock);
}

void volume_holder(struct volume_store *vs, const char *id, char holder[VOLUME_ID_SIZE])
{
    pthread_mutex_lock(&vs->lock);
    struct volume_hold *h = find_hold(vs, id);
    snprintf(holder, VOLUME_ID_SIZE, "%s", h ? h->sandbox : "");
    pthread_mutex_unlock(&vs->lock);
}

int volume_private_copy(struct volume_store *vs, const char *id, const char *snapshot,
                        const char *dst, struct airlock_error *e)
{
    char src[PATH_MAX];
    pthread_mutex_lock(&vs->lock);
    int rc = existing_snapshot(vs, id, snapshot, src, sizeof(src), e);
    if (rc == 0)
        rc = clone_into(src, dst, e);
    pthread_mutex_unlock(&vs->lock);
    return rc;
}
