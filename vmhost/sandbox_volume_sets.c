/* A sandbox's volumes in the shared snapshot store (sandbox_volume_sets.h). */
#include "sandbox_volume_sets.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_internal.h"
#include "sandbox_volume.h"
#include "snapshot_delta.h"

/* vol<slot>.delta and vol<slot>: the slot's object in a set and its key
 * in the manifest's files. */
static void slot_names(unsigned slot, char object[32], char key[16])
{
    snprintf(object, 32, "vol%u.delta", slot);
    snprintf(key, 16, "vol%u", slot);
}

int sandbox_volume_sets_put(struct sandbox *sb, const char *set, const char *volumes_dir,
                            json_t *files, json_t **volumes, uint64_t *stored, uint64_t *size,
                            struct airlock_error *e)
{
    *volumes = NULL;
    if (!sandbox_volumes_any(sb))
        return 0;
    json_t *list = json_array();
    if (!list)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "manifest: out of memory");
    for (unsigned i = 0; i < VM_VOLUME_SLOTS && sb->volumes[i].used; i++) {
        const struct sandbox_volume *v = &sb->volumes[i];
        char src[PATH_MAX], object[32], key[16];
        snprintf(src, sizeof(src), "%s", v->image);
        if (volumes_dir && !v->read_only &&
            sandbox_volume_copy_path(volumes_dir, i, src, sizeof(src)) < 0) {
            airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "path too long: %s", volumes_dir);
            goto fail;
        }
        slot_names(i, object, key);
        struct file_delta_stats st;
        if (snapshot_delta_put_file(sb->vh->snapshots, set, object, key, src, NULL,
                                    SNAPSHOT_DELTA_BLOCKS, files, &st, e) < 0) {
            airlock_error_prefix(e, "volume %s: ", v->name);
            goto fail;
        }
        *stored += st.delta_bytes;
        *size += st.target_bytes;
        json_t *item = json_pack("{s:i, s:s, s:s, s:s, s:s, s:b}", "slot", (int)i, "volume_id",
                                 v->volume_id, "snapshot_id", v->snapshot_id, "name", v->name,
                                 "path", v->path, "read_only", v->read_only);
        if (!item || json_array_append_new(list, item) < 0) {
            airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "manifest: out of memory");
            goto fail;
        }
    }
    *volumes = list;
    return 0;
fail:
    json_decref(list);
    return -1;
}

/* The manifest's volumes as attachments, checked as a create's are (a set
 * is another node's writing: never trusted). */
static int parse(const json_t *list, Airlock__Vmhost__V1__VolumeAttachment att[VM_VOLUME_SLOTS],
                 Airlock__Vmhost__V1__VolumeAttachment *ptrs[VM_VOLUME_SLOTS], size_t *n,
                 struct airlock_error *e)
{
    *n = json_array_size(list);
    if (!json_is_array(list) || *n > VM_VOLUME_SLOTS)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "volumes: not a list of at most %d",
                                 VM_VOLUME_SLOTS);
    for (size_t i = 0; i < *n; i++) {
        const json_t *item = json_array_get(list, i);
        Airlock__Vmhost__V1__VolumeAttachment *a = &att[i];
        airlock__vmhost__v1__volume_attachment__init(a);
        const char *path = json_string_value(json_object_get(item, "path"));
        a->volume_id = (char *)json_string_value(json_object_get(item, "volume_id"));
        a->snapshot_id = (char *)json_string_value(json_object_get(item, "snapshot_id"));
        a->name = (char *)json_string_value(json_object_get(item, "name"));
        a->read_only = json_is_true(json_object_get(item, "read_only"));
        /* Slots fill from 0: the list's order is the VM's. */
        if (json_integer_value(json_object_get(item, "slot")) != (json_int_t)i || !path ||
            !a->volume_id || !a->snapshot_id || !a->name)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID, "volumes[%zu]: not a volume's", i);
        a->path.data = (uint8_t *)path;
        a->path.len = strlen(path);
        ptrs[i] = a;
    }
    return sandbox_volumes_check(ptrs, *n, e);
}

/* Slot i of sb from a, its disk rebuilt at copy: a snapshot's stays there,
 * a volume's goes into the volume store (copy removed) and is held. */
static int take_slot(struct sandbox *sb, unsigned i, const Airlock__Vmhost__V1__VolumeAttachment *a,
                     const char *copy, struct airlock_error *e)
{
    struct volume_store *vs = sb->vh->volumes;
    struct sandbox_volume v;
    sandbox_volume_from(a, &v);
    snprintf(v.image, sizeof(v.image), "%s", copy);
    int rc = 0;
    if (!*a->snapshot_id) {
        char had[PATH_MAX];
        struct airlock_error ignored;
        bool made = volume_image(vs, a->volume_id, NULL, had, sizeof(had), &ignored) < 0;
        rc = volume_install(vs, a->volume_id, copy, e);
        unlink(copy); /* the volume's image is its own now */
        if (rc == 0) {
            sb->volumes_made[i] = made;
            rc = volume_image(vs, a->volume_id, NULL, v.image, sizeof(v.image), e);
        }
        if (rc == 0)
            rc = volume_hold(vs, a->volume_id, sb->id, e);
    }
    /* Filled even on failure: the detach undoes what is recorded. */
    pthread_mutex_lock(&sb->lock);
    sb->volumes[i] = v;
    pthread_mutex_unlock(&sb->lock);
    return rc;
}

int sandbox_volume_sets_get(struct sandbox *sb, const char *set, const json_t *manifest,
                            bool durable, struct airlock_error *e)
{
    const json_t *list = json_object_get(manifest, "volumes");
    const json_t *files = json_object_get(manifest, "files");
    if (!list)
        return 0;
    Airlock__Vmhost__V1__VolumeAttachment att[VM_VOLUME_SLOTS];
    Airlock__Vmhost__V1__VolumeAttachment *ptrs[VM_VOLUME_SLOTS];
    char copies[VM_VOLUME_SLOTS][PATH_MAX];
    size_t n = 0, rebuilt = 0;
    if (parse(list, att, ptrs, &n, e) < 0) {
        airlock_error_prefix(e, "snapshot store object %s: manifest: ", set);
        return airlock_error_classify(e, AIRLOCK_ERR_DATA_LOSS);
    }
    /* Every disk checked before any volume changes here. */
    for (; rebuilt < n; rebuilt++) {
        char object[32], key[16];
        slot_names((unsigned)rebuilt, object, key);
        if (sandbox_volume_copy_path(sb->dir, (unsigned)rebuilt, copies[rebuilt],
                                     sizeof(copies[rebuilt])) < 0) {
            airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "path too long: %s", sb->dir);
            goto fail;
        }
        if (snapshot_delta_get_file(sb->vh->snapshots, set, object, key, files, NULL,
                                    copies[rebuilt], durable, e) < 0) {
            airlock_error_prefix(e, "volume %s: ", ptrs[rebuilt]->name);
            goto fail;
        }
    }
    for (unsigned i = 0; i < n; i++)
        if (take_slot(sb, i, ptrs[i], copies[i], e) < 0) {
            airlock_error_prefix(e, "volume %s: ", ptrs[i]->name);
            sandbox_volumes_detach(sb);
            goto fail;
        }
    return 0;
fail:
    for (size_t i = 0; i < rebuilt; i++)
        unlink(copies[i]); /* a volume's went already: ENOENT */
    return -1;
}
