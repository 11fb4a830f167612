#include "snapshot_template.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "content_hash.h"
#include "fsutil.h"
#include "log.h"
#include "snapshot_delta.h"
#include "vmhost.h"

/* A fetched build's copy of its manifest, written last: the local copy
 * is complete when it is there (as a template directory is). */
#define FETCHED_MANIFEST "manifest.json"
#define TEMPLATE_SHARED_DIR "shared" /* under store/templates */

/* The files of a template snapshot, by their name in it. */
static const char *const template_files[] = { "disk.ext4", "mem", "state" };
#define N_TEMPLATE_FILES (sizeof(template_files) / sizeof(template_files[0]))

static const char *snapshot_file(const struct template_snapshot *t, size_t i)
{
    return i == 0 ? t->disk : i == 1 ? t->mem : t->state;
}

int snapshot_template_build_id(const struct template_snapshot *t, char build[17],
                               struct airlock_error *e)
{
    struct content_hash h;
    char hex[65];
    if (content_hash_init(&h, AIRLOCK_ERROR_MSG(e)) < 0 ||
        content_hash_add_file(&h, "state", t->state, AIRLOCK_ERROR_MSG(e)) < 0) {
        content_hash_free(&h);
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    }
    content_hash_final(&h, hex);
    memcpy(build, hex, SNAPSHOT_BUILD_ID_LEN);
    build[SNAPSHOT_BUILD_ID_LEN] = '\0';
    return 0;
}

static int publish_locked(struct vmhost *vh, const struct template_snapshot *t, const char *set,
                          const char *build, json_t *named, struct airlock_error *e)
{
    json_t *files = json_object();
    json_t *m = NULL;
    int rc = -1;
    for (size_t i = 0; i < N_TEMPLATE_FILES; i++) {
        char object[64];
        snprintf(object, sizeof(object), "%s.delta", template_files[i]);
        if (snapshot_delta_put_file(vh->snapshots, set, object, template_files[i],
                                    snapshot_file(t, i), NULL, SNAPSHOT_DELTA_BLOCKS, files, NULL,
                                    e) < 0)
            goto out;
    }
    m = json_pack("{s:i, s:s, s:s, s:s, s:i, s:i, s:O}", "format", 1, "kind", "template",
                  "key", t->key, "build", build, "vcpus", (int)t->vcpus, "memory_mb",
                  (int)t->memory_mb, "files", files);
    bool built = m && (!named || json_object_set(m, "named", named) == 0);
    rc = built ? snapshot_store_put_manifest(vh->snapshots, set, m, e)
               : airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "template manifest: out of memory");
out:
    json_decref(files);
    json_decref(m);
    return rc;
}

int snapshot_template_publish(struct vmhost *vh, const struct template_snapshot *t,
                              const char *build, json_t *named, struct airlock_error *e)
{
    char set[256];
    snprintf(set, sizeof(set), "templates/%s-%s", t->key, build);
    pthread_mutex_lock(&vh->snapshots_lock);
    int rc = 0;
    if (!snapshot_store_has_set(vh->snapshots, set)) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = publish_locked(vh, t, set, build, named, e);
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (rc == 0)
            log_info("template published to the snapshot store", "template=%s set=%s ms=%lld",
                     t->name, set,
                     (long long)((t1.tv_sec - t0.tv_sec) * 1000 +
                                 (t1.tv_nsec - t0.tv_nsec) / 1000000));
    }
    pthread_mutex_unlock(&vh->snapshots_lock);
    if (rc < 0)
        airlock_error_prefix(e, "publish template %s: ", t->name);
    return rc;
}

int snapshot_template_fetch_files(struct vmhost *vh, const char *set, const json_t *m,
                                  const char *dir, struct airlock_error *e)
{
    json_t *files = json_object_get(m, "files");
    if (!json_is_object(files))
        return airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS,
                                 "snapshot store %s: %s's manifest is not a template's",
                                 snapshot_store_where(vh->snapshots), set);
    for (size_t i = 0; i < N_TEMPLATE_FILES; i++) {
        char object[64], path[PATH_MAX];
        snprintf(object, sizeof(object), "%s.delta", template_files[i]);
        if (fs_path(path, sizeof(path), "%s/%s", dir, template_files[i]) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "path too long: %s", dir);
        if (snapshot_delta_get_file(vh->snapshots, set, object, template_files[i], files, NULL,
                                    path, true, e) < 0)
            return -1;
        /* Every sandbox's jail maps the memory file as its own uid (jail.c). */
        if (strcmp(template_files[i], "mem") == 0 && chmod(path, 0644) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "chmod %s: %s", path,
                                     strerror(errno));
    }
    return 0;
}

/* The store's template set into dir (made here), each file checked. */
static int fetch_into(struct vmhost *vh, const char *set, const char *dir,
                      struct airlock_error *e)
{
    json_t *m;
    if (snapshot_store_get_manifest(vh->snapshots, set, &m, e) < 0)
        return -1;
    int rc = -1;
    if (snapshot_template_fetch_files(vh, set, m, dir, e) < 0)
        goto out;
    char path[PATH_MAX];
    char *dump = json_dumps(m, JSON_COMPACT);
    rc = dump && fs_path(path, sizeof(path), "%s/%s", dir, FETCHED_MANIFEST) == 0
             ? fs_write_file_atomic(path, dump, strlen(dump), 0600, AIRLOCK_ERROR_MSG(e))
             : airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    free(dump);
out:
    json_decref(m);
    return rc;
}

int snapshot_template_fetch(struct vmhost *vh, const char *key, const char *build,
                            char disk[PATH_MAX], char mem[PATH_MAX], struct airlock_error *e)
{
    char shared[PATH_MAX], dir[PATH_MAX], set[256], manifest[PATH_MAX];
    snprintf(set, sizeof(set), "templates/%s-%s", key, build);
    if (fs_path(shared, sizeof(shared), "%s/%s", vh->store.templates_dir, TEMPLATE_SHARED_DIR) <
            0 ||
        fs_path(dir, sizeof(dir), "%s/%s-%s", shared, key, build) < 0 ||
        fs_path(manifest, sizeof(manifest), "%s/%s", dir, FETCHED_MANIFEST) < 0 ||
        fs_path(disk, PATH_MAX, "%s/disk.ext4", dir) < 0 ||
        fs_path(mem, PATH_MAX, "%s/mem", dir) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "template path too long");
    pthread_mutex_lock(&vh->snapshots_lock);
    int rc = 0;
    if (access(manifest, F_OK) != 0) { /* the manifest is written last: complete */
        char tmp[PATH_MAX], ignored[256];
        rc = -1;
        if (fs_mkdir_p(shared, 0700, AIRLOCK_ERROR_MSG(e)) < 0 ||
            fs_path(tmp, sizeof(tmp), "%s/.fetch-XXXXXX", shared) < 0 || !mkdtemp(tmp)) {
            if (!airlock_error_is_set(e))
                airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create a directory in %s: %s",
                                  shared, strerror(errno));
        } else if (fetch_into(vh, set, tmp, e) == 0 && fs_fsync_dir(tmp, AIRLOCK_ERROR_MSG(e)) == 0) {
            fs_remove_tree(dir, ignored, sizeof(ignored)); /* an incomplete one */
            if (rename(tmp, dir) == 0)
                rc = 0;
            else
                airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s to %s: %s", tmp, dir,
                                  strerror(errno));
        }
        if (rc < 0)
            fs_remove_tree(tmp, ignored, sizeof(ignored));
        else
            log_info("template fetched from the snapshot store", "set=%s dir=%s", set, dir);
    }
    pthread_mutex_unlock(&vh->snapshots_lock);
    if (rc < 0)
        airlock_error_prefix(e, "fetch template %s-%s: ", key, build);
    return rc;
}
