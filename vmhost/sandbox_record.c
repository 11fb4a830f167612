#include "sandbox_record.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "sandbox_internal.h"
#include "sandbox_net.h"
#include "volume_path.h"

#define SANDBOX_RECORD_FORMAT 1
#define SANDBOX_RECORD_MAX_BYTES (1 << 20)
#define SANDBOX_POLICY_MAX_BYTES (4 << 20)

static void copy_string(json_t *r, const char *key, char *out, size_t outlen)
{
    const char *s = json_string_value(json_object_get(r, key));
    snprintf(out, outlen, "%s", s ? s : "");
}

/* What the record is made of, copied under sb->lock. */
struct record_view {
    enum sb_state state;
    enum sb_state stop_suspended_from;
    pid_t qemu_pid;
    unsigned long long qemu_start_time;
    bool egress_attached;
    char store_object[SANDBOX_STORE_OBJECT_SIZE];
    char error[sizeof(((struct sandbox *)0)->error)];
    struct sandbox_volume volumes[VM_VOLUME_SLOTS];
};

/* False when there is nothing to write: being deleted, or not created yet
 * (the first record is a running sandbox's; a create that fails before it
 * leaves none, even when its VM died first). */
static bool take_view(struct sandbox *sb, struct record_view *v)
{
    pthread_mutex_lock(&sb->lock);
    enum sb_state s = sb->state;
    bool gone = s == SB_DELETING || s == SB_DELETED;
    bool created = sb->recorded_state != 0 || s == SB_RUNNING;
    v->state = sb_state_stable(s) ? s : sb->recorded_state;
    bool write = !gone && created && v->state != 0;
    if (write) {
        sb->recorded_state = v->state;
        v->stop_suspended_from = sb->stop_suspended_from;
        v->egress_attached = sb->egress_attached;
        memcpy(v->store_object, sb->store_object, sizeof(v->store_object));
        memcpy(v->volumes, sb->volumes, sizeof(v->volumes));
        snprintf(v->error, sizeof(v->error), "%s", v->state == SB_ERROR ? sb->error : "");
        v->qemu_pid = 0;
        if (sb->vm && v->state != SB_ERROR && v->state != SB_SUSPENDED &&
            vm_start_time(sb->vm, &v->qemu_start_time) == 0)
            v->qemu_pid = vm_pid(sb->vm);
    }
    pthread_mutex_unlock(&sb->lock);
    return write;
}

/* The volume slots: what a restart gives the VM again (sandbox_volume.h). */
static json_t *volumes_json(const struct sandbox_volume *vols)
{
    json_t *a = json_array();
    for (unsigned i = 0; a && i < VM_VOLUME_SLOTS; i++) {
        const struct sandbox_volume *v = &vols[i];
        if (!v->used)
            continue;
        json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:s, s:b, s:s}", "slot", (int)i, "volume_id",
                              v->volume_id, "snapshot_id", v->snapshot_id, "name", v->name,
                              "path", v->path, "read_only", v->read_only, "image", v->image);
        if (json_array_append_new(a, j) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* The record's volumes, checked: ids, slots and paths as a create checks
 * them (a record is vmhost's own, but a path made of it is never trusted). */
static const char *volumes_read(json_t *arr, struct sandbox_volume *out)
{
    size_t i;
    json_t *j;
    json_array_foreach(arr, i, j) {
        json_int_t slot = json_integer_value(json_object_get(j, "slot"));
        if (slot < 0 || slot >= VM_VOLUME_SLOTS || out[slot].used)
            return "a bad volume slot";
        struct sandbox_volume *v = &out[slot];
        v->used = true;
        copy_string(j, "volume_id", v->volume_id, sizeof(v->volume_id));
        copy_string(j, "snapshot_id", v->snapshot_id, sizeof(v->snapshot_id));
        copy_string(j, "name", v->name, sizeof(v->name));
        copy_string(j, "path", v->path, sizeof(v->path));
        copy_string(j, "image", v->image, sizeof(v->image));
        v->read_only = json_is_true(json_object_get(j, "read_only"));
        char msg[256];
        bool bad_snapshot = *v->snapshot_id && !sandbox_id_valid(v->snapshot_id);
        if (!sandbox_id_valid(v->volume_id) || bad_snapshot ||
            volume_path_check(v->path, sizeof(v->path), msg, sizeof(msg)) < 0 || v->image[0] != '/')
            return "a bad volume";
    }
    return NULL;
}

static json_t *record_json(const struct sandbox *sb, const struct record_view *v)
{
    char netns[256] = "";
    sandbox_net_netns_path(sb->id, netns, sizeof(netns));
    json_t *r = json_pack("{s:i, s:s, s:s, s:s, s:s, s:i, s:i, s:b, s:b, s:I, s:s, s:s, s:b}",
                          "format", SANDBOX_RECORD_FORMAT, "id", sb->id, "state",
                          sb_state_name(v->state), "template", sb->template_name,
                          "project_id", sb->project_id, "vcpus", (int)sb->vcpus, "memory_mb",
                          (int)sb->memory_mb, "restored", sb->restored, "from_pool",
                          sb->from_pool, "created_unix_ms", (json_int_t)sb->created_unix_ms,
                          "disk", sb->disk, "netns", netns, "egress_attached",
                          v->egress_attached);
    if (!r)
        return NULL;
    int bad = 0;
    if (v->stop_suspended_from)
        bad |= json_object_set_new(r, "stop_suspended_from",
                                   json_string(sb_state_name(v->stop_suspended_from)));
    if (v->state == SB_ERROR)
        bad |= json_object_set_new(r, "error", json_string(v->error));
    if (v->store_object[0])
        bad |= json_object_set_new(r, "store_object", json_string(v->store_object));
    if (v->qemu_pid) {
        char qmp[PATH_MAX + 16], agent[PATH_MAX + 16];
        snprintf(qmp, sizeof(qmp), "%s/vm/qmp.sock", sb->dir);
        snprintf(agent, sizeof(agent), "%s/vm/agent.sock", sb->dir);
        bad |= json_object_set_new(r, "qemu",
                                   json_pack("{s:i, s:I, s:s, s:s}", "pid", (int)v->qemu_pid,
                                             "start_time", (json_int_t)v->qemu_start_time,
                                             "qmp_socket", qmp, "agent_socket", agent));
    }
    bad |= json_object_set_new(r, "volumes", volumes_json(v->volumes));
    if (v->state == SB_SUSPENDED) {
        char snap[PATH_MAX + 16];
        snprintf(snap, sizeof(snap), "%s/suspend", sb->dir);
        bad |= json_object_set_new(r, "suspend_dir", json_string(snap));
    }
    if (bad) {
        json_decref(r);
        return NULL;
    }
    return r;
}

static int record_save(struct sandbox *sb, bool durable, char *err, size_t errlen);

int sandbox_record_save(struct sandbox *sb, char *err, size_t errlen)
{
    return record_save(sb, true, err, errlen);
}

int sandbox_record_save_nosync(struct sandbox *sb, char *err, size_t errlen)
{
    return record_save(sb, false, err, errlen);
}

static int record_save(struct sandbox *sb, bool durable, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/%s", sb->dir, SANDBOX_RECORD_FILE) < 0) {
        snprintf(err, errlen, "sandbox directory path too long: %s", sb->dir);
        return -1;
    }
    /* Held from the view to the rename: records land in state order. */
    pthread_mutex_lock(&sb->record_lock);
    struct record_view v;
    int rc = 0;
    if (take_view(sb, &v)) {
        json_t *r = record_json(sb, &v);
        char *text = r ? json_dumps(r, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
        if (!text) {
            snprintf(err, errlen, "record of sandbox %s: out of memory", sb->id);
            rc = -1;
        } else {
            rc = durable ? fs_write_file_atomic(path, text, strlen(text), 0600, err, errlen)
                         : fs_write_file_replace(path, text, strlen(text), 0600, err, errlen);
        }
        free(text);
        json_decref(r);
    }
    pthread_mutex_unlock(&sb->record_lock);
    return rc;
}

bool sandbox_record_exists(const char *dir)
{
    char path[PATH_MAX];
    return fs_path(path, sizeof(path), "%s/%s", dir, SANDBOX_RECORD_FILE) == 0 &&
           access(path, F_OK) == 0;
}


int sandbox_record_read(const char *dir, struct sandbox_record *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/%s", dir, SANDBOX_RECORD_FILE) < 0) {
        snprintf(err, errlen, "sandbox directory path too long: %s", dir);
        return -1;
    }
    json_error_t jerr;
    json_t *r = json_load_file(path, 0, &jerr);
    if (!r) {
        snprintf(err, errlen, "%s: %s", path, jerr.text);
        return -1;
    }
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    json_t *qemu = json_object_get(r, "qemu");
    copy_string(r, "id", out->id, sizeof(out->id));
    copy_string(r, "error", out->error, sizeof(out->error));
    copy_string(r, "template", out->template_name, sizeof(out->template_name));
    copy_string(r, "store_object", out->store_object, sizeof(out->store_object));
    copy_string(r, "project_id", out->project_id, sizeof(out->project_id));
    out->state = sb_state_from_name(json_string_value(json_object_get(r, "state")));
    out->stop_suspended_from =
        sb_state_from_name(json_string_value(json_object_get(r, "stop_suspended_from")));
    json_int_t vcpus = json_integer_value(json_object_get(r, "vcpus"));
    json_int_t memory = json_integer_value(json_object_get(r, "memory_mb"));
    out->vcpus = vcpus > 0 && vcpus < 1024 ? (unsigned)vcpus : 0;
    out->memory_mb = memory > 0 && memory < (1 << 24) ? (unsigned)memory : 0;
    out->restored = json_is_true(json_object_get(r, "restored"));
    out->from_pool = json_is_true(json_object_get(r, "from_pool"));
    out->created_unix_ms = json_integer_value(json_object_get(r, "created_unix_ms"));
    out->qemu_pid = (pid_t)json_integer_value(json_object_get(qemu, "pid"));
    out->qemu_start_time = (unsigned long long)json_integer_value(json_object_get(qemu, "start_time"));
    const char *bad_volumes = volumes_read(json_object_get(r, "volumes"), out->volumes);
    const char *problem =
        json_integer_value(json_object_get(r, "format")) != SANDBOX_RECORD_FORMAT
            ? "an unknown format"
        : bad_volumes ? bad_volumes
        : !sandbox_id_valid(out->id) || strcmp(out->id, base) != 0 ? "another sandbox's id"
        : !out->state                ? "no valid state"
        : !out->vcpus || !out->memory_mb ? "no valid size"
                                         : NULL;
    json_decref(r);
    if (problem) {
        snprintf(err, errlen, "%s: the record has %s", path, problem);
        return -1;
    }
    return 0;
}

/* Unlinks dir/name and makes that durable. */
static void remove_durably(const char *dir, const char *name)
{
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/%s", dir, name) < 0 || unlink(path) < 0)
        return;
    fs_fsync_dir(dir, NULL, 0);
}

void sandbox_record_remove(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->record_lock);
    remove_durably(sb->dir, SANDBOX_RECORD_FILE);
    pthread_mutex_unlock(&sb->record_lock);
}

int sandbox_policy_save(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy, char *err,
                        size_t errlen)
{
    if (!policy) {
        remove_durably(sb->dir, SANDBOX_POLICY_FILE);
        return 0;
    }
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/%s", sb->dir, SANDBOX_POLICY_FILE) < 0) {
        snprintf(err, errlen, "sandbox directory path too long: %s", sb->dir);
        return -1;
    }
    size_t len = airlock__egress__v1__policy__get_packed_size(policy);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        snprintf(err, errlen, "policy of sandbox %s: out of memory", sb->id);
        return -1;
    }
    airlock__egress__v1__policy__pack(policy, buf);
    int rc = fs_write_file_atomic(path, buf, len, 0600, err, errlen);
    free(buf);
    return rc;
}

int sandbox_policy_load(struct sandbox *sb, Airlock__Egress__V1__Policy **out, char *err,
                        size_t errlen)
{
    *out = NULL;
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/%s", sb->dir, SANDBOX_POLICY_FILE) < 0) {
        snprintf(err, errlen, "sandbox directory path too long: %s", sb->dir);
        return -1;
    }
    if (access(path, F_OK) < 0 && errno == ENOENT)
        return 0; /* deny everything */
    char *data = NULL;
    size_t len = 0;
    if (fs_read_file(path, SANDBOX_POLICY_MAX_BYTES, &data, &len, err, errlen) < 0)
        return -1;
    *out = airlock__egress__v1__policy__unpack(NULL, len, (const uint8_t *)data);
    free(data);
    if (!*out) {
        snprintf(err, errlen, "%s: not a valid policy", path);
        return -1;
    }
    return 0;
}
