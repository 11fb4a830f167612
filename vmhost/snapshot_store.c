/* The snapshot store's entry points: a backend chosen by the location,
 * and the small-object helpers every backend shares. */
#include "snapshot_store.h"

#include <errno.h>
#include <stdio.h>
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

#define MANIFEST "manifest.json"
#define MANIFEST_MAX (1u << 20)

static void manifest_name(const char *set, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/" MANIFEST, set);
}

int snapshot_store_put_manifest(struct snapshot_store *st, const char *set, const json_t *m,
                                struct airlock_error *e)
{
    char name[1100];
    manifest_name(set, name, sizeof(name));
    char *text = json_dumps(m, JSON_COMPACT);
    if (!text)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "manifest %s: out of memory", name);
    struct snapshot_upload *u;
    int fd, rc = -1;
    if (snapshot_upload_begin(st, name, &u, &fd, e) < 0)
        goto out;
    if (fs_write_all(fd, text, strlen(text)) < 0) {
        int err = errno;
        snapshot_upload_abort(u);
        airlock_error_set(e, err == ENOSPC || err == EDQUOT ? AIRLOCK_ERR_CAPACITY
                                                            : AIRLOCK_ERR_UNAVAILABLE,
                          "snapshot store %s: write %s: %s", st->where, name, strerror(err));
        goto out;
    }
    rc = snapshot_upload_commit(u, e);
out:
    free(text);
    return rc;
}

int snapshot_store_get_manifest(struct snapshot_store *st, const char *set, json_t **out,
                                struct airlock_error *e)
{
    char name[1100];
    manifest_name(set, name, sizeof(name));
    int fd;
    *out = NULL;
    if (st->ops->open_object(st, name, &fd, e) < 0)
        return -1;
    struct stat sb;
    char *text = NULL;
    int rc = -1;
    if (fstat(fd, &sb) < 0 || (size_t)sb.st_size > MANIFEST_MAX) {
        airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS,
                          "snapshot store %s: %s is larger than %u bytes", st->where, name,
                          MANIFEST_MAX);
        goto out;
    }
    size_t len = (size_t)sb.st_size;
    if (!(text = malloc(len + 1))) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        goto out;
    }
    if (pread(fd, text, len, 0) != (ssize_t)len) {
        airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "snapshot store %s: read %s: %s",
                          st->where, name, strerror(errno));
        goto out;
    }
    *out = json_loadb(text, len, 0, NULL);
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS, "snapshot store %s: %s is not a manifest",
                          st->where, name);
        goto out;
    }
    rc = 0;
out:
    free(text);
    close(fd);
    return rc;
}

bool snapshot_store_has_set(struct snapshot_store *st, const char *set)
{
    char name[1100];
    manifest_name(set, name, sizeof(name));
    return st->ops->exists(st, name);
}

int snapshot_store_open_object(struct snapshot_store *st, const char *name, int *fd,
                               struct airlock_error *e)
{
    return st->ops->open_object(st, name, fd, e);
}

int snapshot_store_remove_set(struct snapshot_store *st, const char *prefix,
                              struct airlock_error *e)
{
    return st->ops->remove_set(st, prefix, e);
}
