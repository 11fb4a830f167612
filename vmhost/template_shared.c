#include "template_shared.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "snapshot_store.h"
#include "snapshot_template.h"
#include "template_registry.h"
#include "vmhost.h"

#define SET_PREFIX "templates/"

/* Writes m as dir's manifest.json, atomically. */
static int write_manifest(const char *dir, const json_t *m, struct airlock_error *e)
{
    char path[PATH_MAX];
    char *dump = json_dumps(m, JSON_COMPACT);
    int rc = 0;
    if (!dump || fs_path(path, sizeof(path), "%s/manifest.json", dir) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "%s: out of memory", dir);
    else if (fs_write_file_atomic(path, dump, strlen(dump), 0644, AIRLOCK_ERROR_MSG(e)) < 0)
        rc = airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    free(dump);
    return rc;
}

int template_shared_publish(struct vmhost *vh, const char *dir, char set[TEMPLATE_SET_SIZE],
                            struct airlock_error *e)
{
    char path[PATH_MAX], build[SNAPSHOT_BUILD_ID_LEN + 1];
    json_error_t jerr;
    json_t *m = fs_path(path, sizeof(path), "%s/manifest.json", dir) == 0
                    ? json_load_file(path, 0, &jerr)
                    : NULL;
    json_t *tj = json_object_get(m, "template");
    const char *key = json_string_value(json_object_get(m, "key"));
    const char *name = json_string_value(json_object_get(tj, "name"));
    struct template_snapshot snap = { .vcpus = 0 };
    int rc = -1;
    if (!key || !name) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "%s: no complete manifest.json", dir);
        goto out;
    }
    snprintf(snap.name, sizeof(snap.name), "%s:%lld", name,
             (long long)json_integer_value(json_object_get(tj, "version")));
    snprintf(snap.key, sizeof(snap.key), "%s", key);
    snap.vcpus = (unsigned)json_integer_value(json_object_get(m, "vcpus"));
    snap.memory_mb = (unsigned)json_integer_value(json_object_get(m, "memory_mb"));
    if (template_snapshot_paths(&snap, dir, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto out;
    }
    if (snapshot_template_build_id(&snap, build, e) < 0)
        goto out;
    snprintf(set, TEMPLATE_SET_SIZE, SET_PREFIX "%s-%s", key, build);
    /* Recorded before publishing: the node that fetches it keeps it too. */
    json_object_set_new(m, "store_object", json_string(set));
    if (snapshot_template_publish(vh, &snap, build, m, e) < 0)
        goto out;
    if (write_manifest(dir, m, e) < 0) {
        struct airlock_error ignored;
        snapshot_store_remove_set(vh->snapshots, set, &ignored);
        goto out;
    }
    rc = 0;
out:
    json_decref(m);
    return rc;
}

/* The store's manifest of set, checked to hold named version name:version
 * (0: any version of name) that this host can restore; *named points into
 * *m (free *m). */
static int read_named(struct vmhost *vh, const char *set, const char *name, unsigned version,
                      json_t **m, json_t **named, struct airlock_error *e)
{
    if (snapshot_store_get_manifest(vh->snapshots, set, m, e) < 0)
        return -1;
    *named = json_object_get(*m, "named");
    json_t *tj = json_object_get(*named, "template");
    const char *has = json_string_value(json_object_get(tj, "name"));
    json_int_t has_version = json_integer_value(json_object_get(tj, "version"));
    const char *key = json_string_value(json_object_get(*named, "key"));
    const char *image = json_string_value(json_object_get(*named, "image"));
    if (!has || has_version <= 0 || !key || !image)
        return airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS,
                                 "snapshot store %s: %s's manifest holds no named template",
                                 snapshot_store_where(vh->snapshots), set);
    if (strcmp(has, name) != 0 || (version && (unsigned)has_version != version))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "snapshot store object %s is template %s:%lld, not %s:%u", set,
                                 has, (long long)has_version, name, version);
    char why[512];
    if (template_key_fits(vh, image,
                          (unsigned)json_integer_value(json_object_get(*named, "vcpus")),
                          (unsigned)json_integer_value(json_object_get(*named, "memory_mb")), key,
                          why, sizeof(why)) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_STATE, "%s was %s", set, why);
    return 0;
}

/* Under snapshots_lock: set's files into a build directory (removed at
 * the next start if vmhost dies meanwhile), its manifest the version's own
 * with no warm pool (the building node keeps that), renamed into
 * named/<name>/<version>/ and registered. */
static int fetch_locked(struct vmhost *vh, const char *name, unsigned version, const char *set,
                        struct airlock_error *e)
{
    json_t *m = NULL, *named;
    char tmp[PATH_MAX], name_dir[PATH_MAX], final[PATH_MAX];
    unsigned got = 0;
    bool renamed = false;
    int rc = -1;
    tmp[0] = '\0';
    if (read_named(vh, set, name, version, &m, &named, e) < 0)
        goto out;
    version = (unsigned)json_integer_value(json_object_get(json_object_get(named, "template"),
                                                           "version"));
    if (template_reserve(vh, name, version, &got, e) < 0)
        goto out;
    if (fs_path(tmp, sizeof(tmp), "%s/.build-XXXXXX", vh->store.templates_dir) < 0 ||
        fs_path(name_dir, sizeof(name_dir), "%s/" TEMPLATE_NAMED_DIR "/%s",
                vh->store.templates_dir, name) < 0 ||
        fs_path(final, sizeof(final), "%s/%u", name_dir, version) < 0 || !mkdtemp(tmp)) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "make a directory in %s: %s",
                          vh->store.templates_dir, strerror(errno));
        tmp[0] = '\0';
        goto out;
    }
    json_object_set_new(json_object_get(named, "template"), "warm_pool", json_integer(0));
    json_object_set_new(named, "store_object", json_string(set));
    json_object_set_new(named, "fetched_unix_ms", json_integer(clock_realtime_ms()));
    if (snapshot_template_fetch_files(vh, set, m, tmp, e) < 0 ||
        write_manifest(tmp, named, e) < 0)
        goto out;
    if (fs_fsync_dir(tmp, AIRLOCK_ERROR_MSG(e)) < 0 ||
        fs_mkdir_p(name_dir, 0755, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto out;
    }
    if (rename(tmp, final) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rename %s to %s: %s", tmp, final,
                          strerror(errno));
        goto out;
    }
    renamed = true;
    struct template_version *t;
    if (fs_fsync_dir(name_dir, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto out;
    }
    if (template_publish(vh, final, 0, &t, e) < 0)
        goto out;
    got = 0; /* registered: the reservation ended */
    log_info("template fetched from the snapshot store", "template=%s set=%s", t->ref, set);
    template_release(t);
    rc = 0;
out:
    if (rc < 0 && (renamed || tmp[0])) {
        fs_remove_tree(renamed ? final : tmp, NULL, 0);
        if (renamed)
            rmdir(name_dir); /* only if this was its first version here */
    }
    if (got)
        template_unreserve(vh, name, got);
    json_decref(m);
    return rc;
}

int template_acquire_shared(struct vmhost *vh, const char *ref, unsigned vcpus,
                            unsigned memory_mb, const char *set, struct template_version **out,
                            struct airlock_error *e)
{
    char name[TEMPLATE_NAME_MAX + 1];
    unsigned version;
    bool named = ref && *ref && strcmp(ref, TEMPLATE_DEFAULT_NAME) != 0 &&
                 template_ref_parse(ref, name, sizeof(name), &version);
    if (named && set && *set && vh->snapshots) {
        struct airlock_error ignored;
        struct template_version *t = template_lookup(vh, ref, &ignored);
        if (!t) {
            /* One fetch at a time: a create that waited finds it registered. */
            pthread_mutex_lock(&vh->snapshots_lock);
            t = template_lookup(vh, ref, &ignored);
            int rc = t ? 0 : fetch_locked(vh, name, version, set, e);
            pthread_mutex_unlock(&vh->snapshots_lock);
            if (rc < 0) {
                log_warn("template fetch failed", "template=%s set=%s error=\"%s\"", ref, set,
                         e->message);
                return airlock_error_prefix(e, "fetch template %s from the snapshot store: ",
                                            ref);
            }
        }
        template_release(t);
    }
    return template_acquire(vh, ref, vcpus, memory_mb, out, e);
}

int template_shared_forget(struct vmhost *vh, const char *set, struct airlock_error *e)
{
    bool prefixed = strncmp(set, SET_PREFIX, strlen(SET_PREFIX)) == 0;
    const char *rest = prefixed ? set + strlen(SET_PREFIX) : "";
    if (!*rest || strchr(rest, '/') || strstr(rest, ".."))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "store_object: %s is not a template in the snapshot store", set);
    if (!vh->snapshots)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "this node has no snapshot store (--snapshot-store) to remove "
                                 "%s from",
                                 set);
    pthread_mutex_lock(&vh->snapshots_lock);
    int rc = snapshot_store_remove_set(vh->snapshots, set, e);
    pthread_mutex_unlock(&vh->snapshots_lock);
    if (rc == 0)
        log_info("template removed from the snapshot store", "set=%s", set);
    return rc;
}
