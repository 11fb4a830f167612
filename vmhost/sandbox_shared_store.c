#include "sandbox_shared_store.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "sandbox_internal.h"
#include "sandbox_record.h"
#include "sandbox_volume.h"
#include "sandbox_volume_sets.h"
#include "snapshot_delta.h"
#include "snapshot_template.h"
#include "template_registry.h"
#include "template_shared.h"
#include "template_version.h"
#include "vmhost.h"

/* One file of the set: its name there, where it comes from, its base. */
struct set_file {
    const char *key;    /* in the manifest's "files" */
    const char *object; /* its name in the set */
    enum snapshot_delta_kind kind;
};

static const struct set_file set_files[] = {
    { "disk.ext4", "disk.delta", SNAPSHOT_DELTA_BLOCKS },
    { "state", "state.delta", SNAPSHOT_DELTA_PAGES },
    { SANDBOX_POLICY_FILE, "policy.delta", SNAPSHOT_DELTA_BLOCKS },
};
#define N_SET_FILES (sizeof(set_files) / sizeof(set_files[0]))

/* The kinds of set: where each lives in the store (<root>/<id>/<name>),
 * what its manifest calls it, and when it was made. A migration's is a
 * live migration's first pass (sandbox_migrate.h): disk and policy only,
 * the memory streams between the nodes. */
struct set_kind {
    const char *root, *kind, *time_key;
};
static const struct set_kind SUSPEND = { "sandboxes", "suspend", "suspended_unix_ms" };
static const struct set_kind CHECKPOINT = { "checkpoints", "checkpoint", "checkpointed_unix_ms" };
static const struct set_kind MIGRATION = { "migrations", "migration", "stored_unix_ms" };

/* A set's manifest (checkpoint: its name, for a checkpoint's). */
static json_t *manifest_of(struct sandbox *sb, const struct set_kind *kind,
                           const char *checkpoint, const char *build, json_t *files)
{
    const struct template_snapshot *t = &sb->tmpl->snap;
    json_t *m = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:I, s:I, s:O}", "format",
                          1, "kind", kind->kind, "id", sb->id, "template", sb->template_name,
                          "template_key", t->key, "template_build", build, "vcpus",
                          (int)sb->vcpus, "memory_mb", (int)sb->memory_mb, "project_id",
                          sb->project_id, "created_unix_ms", (json_int_t)sb->created_unix_ms,
                          kind->time_key, (json_int_t)clock_realtime_ms(), "files", files);
    if (m && checkpoint && json_object_set_new(m, "checkpoint", json_string(checkpoint)) < 0) {
        json_decref(m);
        return NULL;
    }
    return m;
}

/* sb's state (NULL for a migration's) and disk (and its policy) as object
 * set `set` of kind, against its template's build (published first), with
 * its volumes (read-write ones from volumes_dir when not NULL: a
 * checkpoint's copies); checkpoint: its name for a checkpoint's. Nothing
 * is left in the store on failure. */
static int upload_set(struct sandbox *sb, const char *set, const struct set_kind *kind,
                      const char *checkpoint, const char *state, const char *disk,
                      const char *volumes_dir, struct airlock_error *e)
{
    struct vmhost *vh = sb->vh;
    if (!sb->tmpl)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "sandbox %s was cold-booted: only a sandbox restored from a "
                                 "template can go to the snapshot store",
                                 sb->id);
    int64_t started = clock_monotonic_ms();
    char build[SNAPSHOT_BUILD_ID_LEN + 1];
    char policy[PATH_MAX];
    if (fs_path(policy, sizeof(policy), "%s/%s", sb->dir, SANDBOX_POLICY_FILE) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "path too long: %s", sb->dir);
    if (snapshot_template_build_id(&sb->tmpl->snap, build, e) < 0 ||
        snapshot_template_publish(vh, &sb->tmpl->snap, build, NULL, e) < 0)
        return -1;
    /* Where the time went, per file, for the log (make bench shows it). */
    int64_t step_ms[N_SET_FILES] = { 0 }, published = clock_monotonic_ms();
    const char *paths[N_SET_FILES] = { disk, state, policy };
    const char *bases[N_SET_FILES] = { sb->tmpl->snap.disk, sb->tmpl->snap.mem, NULL };
    json_t *files = json_object();
    json_t *m = NULL, *volumes = NULL;
    uint64_t stored = 0, size = 0;
    for (size_t i = 0; i < N_SET_FILES; i++) {
        if (i == 2 && access(policy, F_OK) != 0)
            continue; /* no policy: deny everything */
        if (!paths[i])
            continue; /* a migration's: no state */
        struct file_delta_stats st;
        int64_t t0 = clock_monotonic_ms();
        if (snapshot_delta_put_file(vh->snapshots, set, set_files[i].object, set_files[i].key,
                                    paths[i], bases[i], set_files[i].kind, files, &st, e) < 0)
            goto fail;
        step_ms[i] = clock_monotonic_ms() - t0;
        stored += st.delta_bytes;
        size += st.target_bytes;
    }
    int64_t volumes_started = clock_monotonic_ms();
    if (sandbox_volume_sets_put(sb, set, volumes_dir, files, &volumes, &stored, &size, e) < 0)
        goto fail;
    int64_t volumes_ms = clock_monotonic_ms() - volumes_started;
    m = manifest_of(sb, kind, checkpoint, build, files);
    if (m && volumes && json_object_set(m, "volumes", volumes) < 0) {
        json_decref(m);
        m = NULL;
    }
    if (!m) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "manifest: out of memory");
        goto fail;
    }
    if (snapshot_store_put_manifest(vh->snapshots, set, m, e) < 0)
        goto fail;
    json_decref(files);
    json_decref(volumes);
    json_decref(m);
    log_info("sandbox set stored", "kind=%s sandbox=%s set=%s ms=%lld publish_ms=%lld disk_ms=%lld "
             "state_ms=%lld volumes_ms=%lld bytes=%llu of=%llu",
             kind->kind, sb->id, set, (long long)(clock_monotonic_ms() - started),
             (long long)(published - started), (long long)step_ms[0], (long long)step_ms[1],
             (long long)volumes_ms, (unsigned long long)stored, (unsigned long long)size);
    return 0;
fail:
    json_decref(files);
    json_decref(volumes);
    json_decref(m);
    struct airlock_error ignored;
    snapshot_store_remove_set(vh->snapshots, set, &ignored);
    if (checkpoint)
        airlock_error_prefix(e, "store checkpoint %s of sandbox %s: ", checkpoint, sb->id);
    else
        airlock_error_prefix(e, "store the %s of sandbox %s: ", kind->kind, sb->id);
    return -1;
}

int sandbox_shared_store_upload(struct sandbox *sb, const char *state, const char *disk,
                                struct airlock_error *e)
{
    const struct set_kind *kind = state ? &SUSPEND : &MIGRATION;
    char set[SANDBOX_STORE_OBJECT_SIZE];
    snprintf(set, sizeof(set), "%s/%s/%lld", kind->root, sb->id, (long long)clock_realtime_ms());
    if (upload_set(sb, set, kind, NULL, state, disk, NULL, e) < 0)
        return -1;
    pthread_mutex_lock(&sb->lock);
    snprintf(sb->store_object, sizeof(sb->store_object), "%s", set);
    pthread_mutex_unlock(&sb->lock);
    return 0;
}

/* checkpoints/<id>/<name>, or "" when the name does not fit. */
static void checkpoint_set(const char *id, const char *name, char set[SANDBOX_STORE_OBJECT_SIZE])
{
    if (snprintf(set, SANDBOX_STORE_OBJECT_SIZE, "checkpoints/%s/%s", id, name) >=
        SANDBOX_STORE_OBJECT_SIZE)
        set[0] = '\0';
}

int sandbox_shared_store_put_checkpoint(struct sandbox *sb, const char *name, const char *state,
                                        const char *disk, const char *volumes_dir,
                                        char set[SANDBOX_STORE_OBJECT_SIZE],
                                        struct airlock_error *e)
{
    checkpoint_set(sb->id, name, set);
    if (!set[0])
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "checkpoint %s: name too long", name);
    if (upload_set(sb, set, &CHECKPOINT, name, state, disk, volumes_dir, e) < 0) {
        set[0] = '\0';
        return -1;
    }
    return 0;
}

int sandbox_shared_store_drop_checkpoint(struct sandbox *sb, const char *name,
                                         struct airlock_error *e)
{
    char set[SANDBOX_STORE_OBJECT_SIZE];
    checkpoint_set(sb->id, name, set);
    if (!sb->vh->snapshots || !set[0] || !snapshot_store_has_set(sb->vh->snapshots, set))
        return 0;
    if (snapshot_store_remove_set(sb->vh->snapshots, set, e) < 0)
        return -1;
    return 1;
}

void sandbox_shared_store_forget_checkpoints(struct sandbox *sb)
{
    char prefix[SANDBOX_STORE_OBJECT_SIZE];
    snprintf(prefix, sizeof(prefix), "checkpoints/%s", sb->id);
    struct airlock_error e;
    if (sb->vh->snapshots && snapshot_store_remove_set(sb->vh->snapshots, prefix, &e) < 0)
        log_warn("cannot remove checkpoints from the snapshot store", "sandbox=%s error=\"%s\"",
                 sb->id, e.message);
}

void sandbox_shared_store_forget(struct sandbox *sb, const char *keep)
{
    char set[SANDBOX_STORE_OBJECT_SIZE];
    pthread_mutex_lock(&sb->lock);
    snprintf(set, sizeof(set), "%s", sb->store_object);
    sb->store_object[0] = '\0';
    pthread_mutex_unlock(&sb->lock);
    struct airlock_error e;
    if (set[0] && sb->vh->snapshots && !(keep && strcmp(keep, set) == 0) &&
        snapshot_store_remove_set(sb->vh->snapshots, set, &e) < 0)
        log_warn("cannot remove a suspend from the snapshot store", "sandbox=%s set=%s "
                 "error=\"%s\"", sb->id, set, e.message);
}

/* What an import needs from the manifest. */
struct suspend_manifest {
    json_t *root;
    const char *template_name, *key, *build, *project_id;
    unsigned vcpus, memory_mb;
    int64_t created_unix_ms;
    json_t *files;
    const struct set_kind *kind;
};

/* Which of kinds (NULL-terminated) object is, a set of sandbox id's; NULL
 * when none. */
static const struct set_kind *set_kind_of(const char *id, const char *object,
                                          const struct set_kind *const *kinds)
{
    for (size_t i = 0; kinds[i]; i++) {
        char prefix[128];
        snprintf(prefix, sizeof(prefix), "%s/%s/", kinds[i]->root, id);
        size_t n = strlen(prefix);
        if (strncmp(object, prefix, n) == 0 && object[n] && !strchr(object + n, '/'))
            return kinds[i];
    }
    return NULL;
}

/* want: set_kind_of's answer for set, which its manifest must say too. */
static int manifest_read(struct vmhost *vh, const char *id, const char *set,
                         const struct set_kind *want, struct suspend_manifest *m,
                         struct airlock_error *e)
{
    if (snapshot_store_get_manifest(vh->snapshots, set, &m->root, e) < 0)
        return -1;
    const char *kind = json_string_value(json_object_get(m->root, "kind"));
    const char *sid = json_string_value(json_object_get(m->root, "id"));
    m->template_name = json_string_value(json_object_get(m->root, "template"));
    m->key = json_string_value(json_object_get(m->root, "template_key"));
    m->build = json_string_value(json_object_get(m->root, "template_build"));
    m->project_id = json_string_value(json_object_get(m->root, "project_id"));
    m->vcpus = (unsigned)json_integer_value(json_object_get(m->root, "vcpus"));
    m->memory_mb = (unsigned)json_integer_value(json_object_get(m->root, "memory_mb"));
    m->created_unix_ms = json_integer_value(json_object_get(m->root, "created_unix_ms"));
    m->files = json_object_get(m->root, "files");
    m->kind = want;
    if (!kind || strcmp(kind, want->kind) != 0 || !sid || !m->template_name || !m->key || !m->build ||
        !m->project_id || !m->vcpus || !m->memory_mb || !json_is_object(m->files))
        return airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS,
                                 "snapshot store %s: %s's manifest is not a %s's",
                                 snapshot_store_where(vh->snapshots), set, want->kind);
    if (strcmp(sid, id) != 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "snapshot store object %s is sandbox %s's, not %s", set, sid, id);
    return 0;
}

/* The template files its deltas were made against: this node's own
 * when it is the same build, else the store's. */
static int bases_of(struct vmhost *vh, const struct suspend_manifest *m,
                    const struct template_version *t, char disk[PATH_MAX], char mem[PATH_MAX],
                    struct airlock_error *e)
{
    if (strcmp(t->snap.key, m->key) != 0)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "it was suspended from template %s with key %.12s, and this "
                                 "node's has key %.12s: another QEMU, accelerator or CPU; "
                                 "resume it on a node like the one that suspended it",
                                 m->template_name, m->key, t->snap.key);
    char own[SNAPSHOT_BUILD_ID_LEN + 1];
    if (snapshot_template_build_id(&t->snap, own, e) < 0)
        return -1;
    if (strcmp(own, m->build) == 0) {
        snprintf(disk, PATH_MAX, "%s", t->snap.disk);
        snprintf(mem, PATH_MAX, "%s", t->snap.mem);
        return 0;
    }
    return snapshot_template_fetch(vh, m->key, m->build, disk, mem, e);
}

/* The set's files into sb's directory as a local suspend; durable:
 * synced, for a record to name them. */
static int materialize(struct sandbox *sb, const char *set, const struct suspend_manifest *m,
                       const char *base_disk, const char *base_mem, bool durable,
                       struct airlock_error *e)
{
    char dir[PATH_MAX];
    if (fs_path(dir, sizeof(dir), "%s/suspend", sb->dir) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "path too long: %s", sb->dir);
    if (mkdir(sb->dir, 0700) < 0 || mkdir(dir, 0700) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "create %s: %s", dir, strerror(errno));
    const char *bases[N_SET_FILES] = { base_disk, base_mem, NULL };
    for (size_t i = 0; i < N_SET_FILES; i++) {
        if (!json_object_get(m->files, set_files[i].key) && (i == 2 || m->kind == &MIGRATION))
            continue; /* no policy: deny everything; a migration's has no state */
        char path[PATH_MAX];
        if (fs_path(path, sizeof(path), "%s/%s", i == 2 ? sb->dir : dir, set_files[i].key) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "path too long: %s", dir);
        if (snapshot_delta_get_file(sb->vh->snapshots, set, set_files[i].object,
                                    set_files[i].key, m->files, bases[i], path, durable, e) < 0)
            return -1;
    }
    if (durable && (fs_fsync_dir(dir, AIRLOCK_ERROR_MSG(e)) < 0 ||
                    fs_fsync_dir(sb->dir, AIRLOCK_ERROR_MSG(e)) < 0))
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    return 0;
}

/* id from the store's set into the registry, suspended. kept: recorded,
 * as a sandbox this node keeps; else in memory only, for a resume right
 * away (its first record is the running one: a crash before leaves a
 * directory without a record, which the next start removes, and the store
 * still holds the suspend — so nothing is synced). */
static int import(struct vmhost *vh, const char *id, const char *object,
                  const struct set_kind *const *kinds, bool kept, struct sandbox **out,
                  struct airlock_error *e)
{
    if (!vh->snapshots)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "sandbox %s is not on this node, which has no snapshot store "
                                 "(--snapshot-store) to take it from",
                                 id);
    const struct set_kind *kind = set_kind_of(id, object, kinds);
    if (!kind)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "%s is not a %s%s of sandbox %s in the snapshot store", object,
                                 kinds[0]->kind, kinds[1] ? " or checkpoint" : "", id);
    int64_t started = clock_monotonic_ms();
    struct suspend_manifest m = { 0 };
    struct template_version *t = NULL;
    struct sandbox *sb = NULL;
    char disk[PATH_MAX], mem[PATH_MAX];
    char tmpl_set[TEMPLATE_SET_SIZE];
    if (manifest_read(vh, id, object, kind, &m, e) < 0)
        goto fail;
    /* A named template this node lacks comes from the store as well. */
    snprintf(tmpl_set, sizeof(tmpl_set), "templates/%s-%s", m.key, m.build);
    if (template_acquire_shared(vh, m.template_name, m.vcpus, m.memory_mb, tmpl_set, &t, e) < 0 ||
        bases_of(vh, &m, t, disk, mem, e) < 0)
        goto fail;
    int64_t based = clock_monotonic_ms(); /* a template fetch is in it */
    struct sandbox_create_params p = { .id = id, .vcpus = m.vcpus, .memory_mb = m.memory_mb };
    if (sandbox_reserve(vh, &p, false, &sb, e) < 0)
        goto fail;
    snprintf(sb->template_name, sizeof(sb->template_name), "%s", m.template_name);
    snprintf(sb->project_id, sizeof(sb->project_id), "%s", m.project_id);
    sb->tmpl = t; /* the sandbox's from here on */
    t = NULL;
    sb->restored = true;
    sb->created_unix_ms = m.created_unix_ms;
    if (materialize(sb, object, &m, disk, mem, kept, e) < 0 ||
        sandbox_volume_sets_get(sb, object, m.root, kept, e) < 0)
        goto fail;
    pthread_mutex_lock(&sb->lock);
    /* A suspend's or migration's set is used once (it goes once the VM
     * runs); a checkpoint's stays, as the checkpoint. */
    if (m.kind != &CHECKPOINT)
        snprintf(sb->store_object, sizeof(sb->store_object), "%s", object);
    sandbox_transition(sb, SB_SUSPENDED);
    if (kept)
        sb->recorded_state = SB_SUSPENDED;
    pthread_mutex_unlock(&sb->lock);
    if (kept && sandbox_record_save(sb, AIRLOCK_ERROR_MSG(e)) < 0) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto fail;
    }
    if (kept)
        sandbox_volumes_keep(sb);
    log_info("sandbox taken from the snapshot store", "sandbox=%s set=%s ms=%lld base_ms=%lld "
             "files_ms=%lld kept=%d",
             id, object, (long long)(clock_monotonic_ms() - started),
             (long long)(based - started), (long long)(clock_monotonic_ms() - based), kept);
    json_decref(m.root);
    *out = sb;
    return 0;
fail:
    airlock_error_prefix(e, "take sandbox %s from the snapshot store: ", id);
    log_warn("sandbox not taken from the snapshot store", "sandbox=%s set=%s error=\"%.300s\"",
             id, object, e->message);
    if (sb)
        sandbox_unreserve(sb); /* its directory goes; the store keeps the set */
    template_release(t);
    json_decref(m.root);
    return -1;
}

/* What a resume or take starts from. */
static const struct set_kind *const kept_kinds[] = { &SUSPEND, &CHECKPOINT, NULL };

int sandbox_shared_store_resume(struct vmhost *vh, const char *id, const char *object,
                                struct sandbox **out, struct airlock_error *e)
{
    struct sandbox *sb;
    if (import(vh, id, object, kept_kinds, false, &sb, e) < 0)
        return -1;
    if (sandbox_resume(sb, e) < 0) {
        sandbox_unreserve(sb); /* as in import: the store keeps the set */
        return -1;
    }
    sandbox_volumes_keep(sb); /* the volumes it brought are this node's now */
    *out = sb;
    return 0;
}

int sandbox_shared_store_receive(struct vmhost *vh, const char *id, const char *object,
                                 struct sandbox **out, struct airlock_error *e)
{
    static const struct set_kind *const kinds[] = { &MIGRATION, NULL };
    return import(vh, id, object, kinds, false, out, e);
}

int sandbox_shared_store_take(struct vmhost *vh, const char *id, const char *object,
                              struct sandbox **out, struct airlock_error *e)
{
    struct sandbox *sb = sandbox_get(vh, id);
    if (!sb)
        return import(vh, id, object, kept_kinds, true, out, e);
    pthread_mutex_lock(&sb->lock);
    bool same = sb->state == SB_SUSPENDED && strcmp(sb->store_object, object) == 0;
    enum sb_state state = sb->state;
    pthread_mutex_unlock(&sb->lock);
    if (same) {
        *out = sb;
        return 0;
    }
    sandbox_put(sb);
    return airlock_error_set(e, AIRLOCK_ERR_EXISTS, "sandbox %s is already on this node (%s)", id,
                             sb_state_name(state));
}
