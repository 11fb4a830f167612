/* The snapshot store as a directory every node mounts (NFS, CephFS, a
 * ReadWriteMany volume; on one machine a plain directory). An object is a
 * file under its name; an upload is a temporary file beside it
 * (".<base>.up-XXXXXX"), fsynced, renamed over the name and the directory
 * fsynced, so a reader sees the old object or the whole new one. A
 * crash leaves only the hidden temporary file, which no name refers to. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "snapshot_store_internal.h"

struct dir_upload {
    char tmp[PATH_MAX];  /* written here */
    char path[PATH_MAX]; /* renamed to here */
};

/* Object names are relative, without "..", "." or empty parts: a name
 * never leaves the store. */
static bool name_ok(const char *name)
{
    if (!*name || name[0] == '/' || strlen(name) > 1024)
        return false;
    for (const char *p = name; *p;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.') ||
            p[0] == '.')
            return false;
        p += len + (slash ? 1 : 0);
    }
    return true;
}

static int object_path(struct snapshot_store *st, const char *name, char *out, size_t outlen,
                       struct airlock_error *e)
{
    if (!name_ok(name))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s is not a valid object name", name);
    if (fs_path(out, outlen, "%s/%s", st->where, name) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "object name %s is too long", name);
    return 0;
}

/* A write that failed on a full (or over-quota) store says so. */
static int write_failed(struct snapshot_store *st, const char *what, const char *path,
                        struct airlock_error *e)
{
    int err = errno;
    enum airlock_err class = err == ENOSPC || err == EDQUOT ? AIRLOCK_ERR_CAPACITY
                             : err == EIO || err == ESTALE || err == ENOTCONN
                                 ? AIRLOCK_ERR_UNAVAILABLE
                                 : AIRLOCK_ERR_INTERNAL;
    return airlock_error_set(e, class, "snapshot store %s: %s %s: %s", st->where, what, path,
                             strerror(err));
}

static int dir_upload_begin(struct snapshot_store *st, const char *name,
                            struct snapshot_upload **out, int *fd, struct airlock_error *e)
{
    struct snapshot_upload *u = calloc(1, sizeof(*u));
    struct dir_upload *d = calloc(1, sizeof(*d));
    if (!u || !d) {
        free(u);
        free(d);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    }
    u->st = st;
    u->fd = -1;
    u->backend = d;
    if (object_path(st, name, d->path, sizeof(d->path), e) < 0)
        goto fail;
    char parent[PATH_MAX];
    snprintf(parent, sizeof(parent), "%s", d->path);
    char *slash = strrchr(parent, '/');
    *slash = '\0';
    if (fs_mkdir_p(parent, 0700, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_prefix(e, "snapshot store %s: ", st->where);
        airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
        goto fail;
    }
    if (fs_path(d->tmp, sizeof(d->tmp), "%s/.%s.up-XXXXXX", parent, slash + 1) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "object name %s is too long", name);
        goto fail;
    }
    u->fd = mkostemp(d->tmp, O_CLOEXEC);
    if (u->fd < 0) {
        write_failed(st, "create", d->tmp, e);
        goto fail;
    }
    *out = u;
    *fd = u->fd;
    return 0;
fail:
    free(d);
    free(u);
    return -1;
}

static void dir_upload_abort(struct snapshot_upload *u)
{
    struct dir_upload *d = u->backend;
    if (u->fd >= 0) {
        close(u->fd);
        unlink(d->tmp);
    }
    free(d);
    free(u);
}

static int dir_upload_commit(struct snapshot_upload *u, struct airlock_error *e)
{
    struct snapshot_store *st = u->st;
    struct dir_upload *d = u->backend;
    int rc = -1;
    if (fsync(u->fd) < 0) {
        write_failed(st, "fsync", d->tmp, e);
        goto out;
    }
    if (rename(d->tmp, d->path) < 0) {
        write_failed(st, "rename into", d->path, e);
        goto out;
    }
    char parent[PATH_MAX];
    snprintf(parent, sizeof(parent), "%s", d->path);
    *strrchr(parent, '/') = '\0';
    if (fs_fsync_dir(parent, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
        goto out;
    }
    close(u->fd);
    u->fd = -1;
    rc = 0;
out:
    dir_upload_abort(u);
    return rc;
}

static int dir_open_object(struct snapshot_store *st, const char *name, int *fd,
                           struct airlock_error *e)
{
    char path[PATH_MAX];
    if (object_path(st, name, path, sizeof(path), e) < 0)
        return -1;
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd >= 0)
        return 0;
    if (errno == ENOENT)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "snapshot store %s has no object %s",
                                 st->where, name);
    return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "snapshot store %s: open %s: %s",
                             st->where, name, strerror(errno));
}

static bool dir_exists(struct snapshot_store *st, const char *name)
{
    char path[PATH_MAX];
    struct airlock_error e;
    return object_path(st, name, path, sizeof(path), &e) == 0 && access(path, F_OK) == 0;
}

static int dir_remove_set(struct snapshot_store *st, const char *prefix, struct airlock_error *e)
{
    char path[PATH_MAX];
    if (object_path(st, prefix, path, sizeof(path), e) < 0)
        return -1;
    if (fs_remove_tree(path, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_prefix(e, "snapshot store %s: ", st->where);
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    }
    return 0;
}

static void dir_close(struct snapshot_store *st)
{
    (void)st;
}

static const struct snapshot_store_ops dir_ops = {
    .upload_begin = dir_upload_begin,
    .upload_commit = dir_upload_commit,
    .upload_abort = dir_upload_abort,
    .open_object = dir_open_object,
    .exists = dir_exists,
    .remove_set = dir_remove_set,
    .close = dir_close,
};

int snapshot_store_dir_open(const char *dir, struct snapshot_store *st, struct airlock_error *e)
{
    if (dir[0] != '/')
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "snapshot store %s: a directory must be an absolute path", dir);
    struct stat sb;
    if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "snapshot store %s is not a directory (%s): make it, or mount "
                                 "the shared file system there",
                                 dir, errno ? strerror(errno) : "not a directory");
    if (access(dir, W_OK) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "snapshot store %s is not writable: %s",
                                 dir, strerror(errno));
    st->ops = &dir_ops;
    snprintf(st->where, sizeof(st->where), "%s", dir);
    return 0;
}
