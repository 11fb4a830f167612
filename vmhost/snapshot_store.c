/* The snapshot store's entry points: a backend chosen by the location,
 * and the small-object helpers every backend shares. */
#include "snapshot_store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "snapshot_store_internal.h"

int snapshot_store_open(const struct snapshot_store_config *cfg, struct snapshot_store **out,
                        struct airlock_error *e)
{
    struct snapshot_store *st = calloc(1, sizeof(*st));
    if (!st)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    int rc = strncmp(cfg->location, "s3://", 5) == 0 ? snapshot_store_s3_open(cfg, st, e)
                                                      : snapshot_store_dir_open(cfg->location, st, e);
    if (rc < 0) {
        free(st);
        return -1;
    }
    *out = st;
    return 0;
}

void snapshot_store_close(struct snapshot_store *st)
{
    if (!st)
        return;
    st->ops->close(st);
    free(st);
}

const char *snapshot_store_where(const struct snapshot_store *st)
{
    return st->where;
}

int snapshot_upload_begin(struct snapshot_store *st, const char *name,
                          struct snapshot_upload **out, int *fd, struct airlock_error *e)
{
    return st->ops->upload_begin(st, name, out, fd, e);
}

int snapshot_upload_commit(struct snapshot_upload *u, struct airlock_error *e)
{
    return u->st->ops->upload_commit(u, e);
}

void snapshot_upload_abort(struct snapshot_upload *u)
{
    if (u)
        u->st->ops->upload_abort(u);
}

int snapshot_store_put(struct snapshot_store *st, const char *name, const void *data, size_t len,
                       struct airlock_error *e)
{
    struct snapshot_upload *u;
    int fd;
    if (snapshot_upload_begin(st, name, &u, &fd, e) < 0)
        return -1;
    if (fs_write_all(fd, data, len) < 0) {
        int err = errno;
        snapshot_upload_abort(u);
        return airlock_error_set(e, err == ENOSPC || err == EDQUOT ? AIRLOCK_ERR_CAPACITY
                                                                   : AIRLOCK_ERR_UNAVAILABLE,
                                 "snapshot store %s: write %s: %s", st->where, name,
                                 strerror(err));
    }
    return snapshot_upload_commit(u, e);
}

int snapshot_store_get(struct snapshot_store *st, const char *name, size_t max, char **data,
                       size_t *len, struct airlock_error *e)
{
    int fd;
    if (st->ops->open_object(st, name, &fd, e) < 0)
        return -1;
    struct stat sb;
    int rc = -1;
    if (fstat(fd, &sb) < 0 || (size_t)sb.st_size > max) {
        airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS,
                          "snapshot store %s: object %s is larger than %zu bytes", st->where,
                          name, max);
        goto out;
    }
    *len = (size_t)sb.st_size;
    *data = malloc(*len + 1);
    if (!*data) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        goto out;
    }
    if (pread(fd, *data, *len, 0) != (ssize_t)*len) {
        airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "snapshot store %s: read %s: %s",
                          st->where, name, strerror(errno));
        free(*data);
        *data = NULL;
        goto out;
    }
    (*data)[*len] = '\0';
    rc = 0;
out:
    close(fd);
    return rc;
}

int snapshot_store_open_object(struct snapshot_store *st, const char *name, int *fd,
                               struct airlock_error *e)
{
    return st->ops->open_object(st, name, fd, e);
}

bool snapshot_store_exists(struct snapshot_store *st, const char *name)
{
    return st->ops->exists(st, name);
}

int snapshot_store_remove_set(struct snapshot_store *st, const char *prefix,
                              struct airlock_error *e)
{
    return st->ops->remove_set(st, prefix, e);
}
