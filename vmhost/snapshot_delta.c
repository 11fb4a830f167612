#include "snapshot_delta.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The base as an open file; none is /dev/null, an empty one. */
static int open_base(const char *base, struct airlock_error *e)
{
    const char *path = base ? base : "/dev/null";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "open %s: %s", path, strerror(errno));
    return fd;
}

int snapshot_delta_put(struct snapshot_store *st, const char *name, const char *path,
                       const char *base, enum snapshot_delta_kind kind, char sha256[65],
                       struct file_delta_stats *stats, struct airlock_error *e)
{
    int target = open(path, O_RDONLY | O_CLOEXEC);
    if (target < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "open %s: %s", path, strerror(errno));
    int base_fd = open_base(base, e);
    struct snapshot_upload *u = NULL;
    int out = -1, rc = -1;
    if (base_fd < 0 || snapshot_upload_begin(st, name, &u, &out, e) < 0)
        goto done;
    int enc = kind == SNAPSHOT_DELTA_PAGES
                  ? file_delta_encode_pages(target, base_fd, out, sha256, stats,
                                            AIRLOCK_ERROR_MSG(e))
                  : file_delta_encode_blocks(target, base_fd, out, sha256, stats,
                                             AIRLOCK_ERROR_MSG(e));
    if (enc < 0) {
        int err = errno;
        airlock_error_prefix(e, "snapshot store %s: %s: ", snapshot_store_where(st), name);
        airlock_error_classify(e, err == ENOSPC || err == EDQUOT ? AIRLOCK_ERR_CAPACITY
                                                                 : AIRLOCK_ERR_UNAVAILABLE);
        snapshot_upload_abort(u);
        goto done;
    }
    rc = snapshot_upload_commit(u, e);
done:
    if (base_fd >= 0)
        close(base_fd);
    close(target);
    return rc;
}

int snapshot_delta_get(struct snapshot_store *st, const char *name, const char *sha256,
                       const char *base, const char *path, bool durable,
                       struct airlock_error *e)
{
    int delta = -1, base_fd = -1, target = -1, rc = -1;
    if (snapshot_store_open_object(st, name, &delta, e) < 0)
        return -1;
    if ((base_fd = open_base(base, e)) < 0)
        goto done;
    target = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (target < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", path, strerror(errno));
        goto done;
    }
    struct file_delta_stats stats;
    if (file_delta_apply(delta, base_fd, target, sha256, &stats, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_prefix(e, "snapshot store %s: object %s: ", snapshot_store_where(st), name);
        airlock_error_classify(e, AIRLOCK_ERR_DATA_LOSS);
        goto done;
    }
    if (durable && fsync(target) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "fsync %s: %s", path, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    if (target >= 0) {
        close(target);
        if (rc < 0)
            unlink(path);
    }
    if (base_fd >= 0)
        close(base_fd);
    close(delta);
    return rc;
}

/* <set>/<object> into name: 0, or -1 with INTERNAL. */
static int object_name(char *name, size_t len, const char *set, const char *object,
                       struct airlock_error *e)
{
    if (snprintf(name, len, "%s/%s", set, object) >= (int)len)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "object name too long: %s/%s", set,
                                 object);
    return 0;
}

int snapshot_delta_put_file(struct snapshot_store *st, const char *set, const char *object,
                            const char *key, const char *path, const char *base,
                            enum snapshot_delta_kind kind, json_t *files,
                            struct file_delta_stats *stats, struct airlock_error *e)
{
    char name[512], sha[65];
    struct file_delta_stats own;
    if (!stats)
        stats = &own;
    if (object_name(name, sizeof(name), set, object, e) < 0 ||
        snapshot_delta_put(st, name, path, base, kind, sha, stats, e) < 0)
        return -1;
    json_t *entry = json_pack("{s:s, s:I, s:I, s:I}", "sha256", sha, "size",
                              (json_int_t)stats->target_bytes, "stored",
                              (json_int_t)stats->delta_bytes, "literal",
                              (json_int_t)stats->literal_bytes);
    if (!entry || json_object_set_new(files, key, entry) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "manifest: out of memory");
    return 0;
}

int snapshot_delta_get_file(struct snapshot_store *st, const char *set, const char *object,
                            const char *key, const json_t *files, const char *base,
                            const char *path, bool durable, struct airlock_error *e)
{
    char name[512];
    const char *sha = json_string_value(json_object_get(json_object_get(files, key), "sha256"));
    if (!sha)
        return airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS,
                                 "snapshot store %s: %s has no checksum for %s",
                                 snapshot_store_where(st), set, key);
    if (object_name(name, sizeof(name), set, object, e) < 0)
        return -1;
    return snapshot_delta_get(st, name, sha, base, path, durable, e);
}
