/* What every operation of ops.h shares, below them all: the lookup, and
 * answers held, released and put in vmhost.proto's messages — the one
 * place vmhost's own states and checkpoint kinds become the API's. */
#include <stdlib.h>
#include <string.h>

#include "ops.h"

int op_lookup(struct vmhost *vh, const char *id, struct sandbox **out, struct airlock_error *e)
{
    if (!*id)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "id: required");
    *out = sandbox_get(vh, id);
    if (!*out)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "sandbox %s not found", id);
    return 0;
}

int op_answer_sandbox(struct op_answer *out, struct sandbox *sb, struct airlock_error *e)
{
    out->sandboxes = malloc(sizeof(*out->sandboxes));
    if (!out->sandboxes) {
        sandbox_put(sb);
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    }
    out->sandboxes[0] = sb;
    out->n_sandboxes = 1;
    return 0;
}

void op_answer_release(struct op_answer *a)
{
    for (size_t i = 0; a->sandboxes && i < a->n_sandboxes; i++)
        sandbox_put(a->sandboxes[i]);
    free(a->sandboxes);
    free(a->checkpoints);
    volume_info_free(&a->volume);
    *a = (struct op_answer){ 0 };
}

static Airlock__Vmhost__V1__SandboxState state_msg(enum sb_state s)
{
#define MAP(x) case SB_##x: return AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##x
    switch (s) {
    MAP(CREATING);
    MAP(RUNNING);
    MAP(PAUSED);
    MAP(SUSPENDING);
    MAP(SUSPENDED);
    MAP(RESUMING);
    MAP(CHECKPOINTING);
    MAP(RESTORING);
    MAP(MIGRATING);
    MAP(ERROR);
    MAP(DELETING);
    MAP(DELETED);
    case SB_NONE: break;
    }
#undef MAP
    return AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_UNSPECIFIED;
}

void sandbox_snapshot_take(struct sandbox *sb, struct sandbox_snapshot *out)
{
    struct sandbox_view *v = &out->view;
    sandbox_view_take(sb, v);
    airlock__vmhost__v1__sandbox__init(&out->msg);
    out->msg.id = v->id;
    out->msg.state = state_msg(v->state);
    out->msg.template_ = v->template_name;
    out->msg.vcpus = v->vcpus;
    out->msg.memory_mb = v->memory_mb;
    out->msg.created_unix_ms = v->created_unix_ms;
    out->msg.last_activity_unix_ms = v->last_activity_unix_ms;
    out->msg.qemu_pid = v->qemu_pid;
    out->msg.accel = (char *)v->accel;
    out->msg.error = v->error;
    out->msg.image_hash = v->image_hash;
    out->msg.restored = v->restored;
    out->msg.from_pool = v->from_pool;
    out->msg.store_object = v->store_object;
    size_t n = 0;
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        struct sandbox_volume *sv = &v->volumes[i];
        if (!sv->used)
            continue;
        Airlock__Vmhost__V1__VolumeAttachment *m = &out->volume_msgs[n];
        airlock__vmhost__v1__volume_attachment__init(m);
        m->volume_id = sv->volume_id;
        m->snapshot_id = sv->snapshot_id;
        m->path.data = (uint8_t *)sv->path;
        m->path.len = strlen(sv->path);
        m->read_only = sv->read_only;
        m->name = sv->name;
        out->volumes[n++] = m;
    }
    out->msg.volumes = out->volumes;
    out->msg.n_volumes = n;
}

static void checkpoint_msg(const char *sandbox_id, const struct checkpoint_info *ci,
                           Airlock__Vmhost__V1__Checkpoint *m)
{
    airlock__vmhost__v1__checkpoint__init(m);
    m->sandbox_id = (char *)sandbox_id;
    m->name = (char *)ci->name;
    m->kind = ci->kind == CHECKPOINT_FULL ? AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL
                                          : AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK;
    m->created_unix_ms = ci->created_unix_ms;
    m->store_object = (char *)ci->store_object;
}

int op_answer_encode(const struct op_answer *a, struct op_encoded *e)
{
    *e = (struct op_encoded){ 0 };
    size_t ns = a->n_sandboxes, nc = a->n_checkpoints;
    e->snapshots = calloc(ns ? ns : 1, sizeof(*e->snapshots));
    e->sandboxes = calloc(ns ? ns : 1, sizeof(*e->sandboxes));
    e->checkpoint_msgs = calloc(nc ? nc : 1, sizeof(*e->checkpoint_msgs));
    e->checkpoints = calloc(nc ? nc : 1, sizeof(*e->checkpoints));
    if (!e->snapshots || !e->sandboxes || !e->checkpoint_msgs || !e->checkpoints) {
        op_encoded_free(e);
        return -1;
    }
    for (size_t i = 0; i < ns; i++) {
        sandbox_snapshot_take(a->sandboxes[i], &e->snapshots[i]);
        e->sandboxes[i] = &e->snapshots[i].msg;
    }
    for (size_t i = 0; i < nc; i++) {
        checkpoint_msg(a->sandbox_id, &a->checkpoints[i], &e->checkpoint_msgs[i]);
        e->checkpoints[i] = &e->checkpoint_msgs[i];
    }
    e->n_sandboxes = ns;
    e->n_checkpoints = nc;
    Airlock__Vmhost__V1__Migration m = AIRLOCK__VMHOST__V1__MIGRATION__INIT;
    m.id = (char *)a->sandbox_id;
    m.store_object = (char *)a->migration.store_object;
    m.address = (char *)a->migration.address;
    m.token = (char *)a->migration.token;
    m.stopped_ms = a->migration.stopped_ms;
    e->migration = m;
    airlock__vmhost__v1__volume__init(&e->volume);
    if (a->has_volume) {
        const struct volume_info *vi = &a->volume;
        e->volume_snapshots = calloc(vi->n_snapshots ? vi->n_snapshots : 1, sizeof(char *));
        if (!e->volume_snapshots) {
            op_encoded_free(e);
            return -1;
        }
        for (size_t i = 0; i < vi->n_snapshots; i++)
            e->volume_snapshots[i] = (char *)vi->snapshots[i];
        e->volume.id = (char *)vi->id;
        e->volume.size_mb = vi->size_bytes >> 20;
        e->volume.used_bytes = vi->used_bytes;
        e->volume.attached_sandbox = (char *)vi->holder;
        e->volume.snapshots = e->volume_snapshots;
        e->volume.n_snapshots = vi->n_snapshots;
    }
    return 0;
}

void op_encoded_free(struct op_encoded *e)
{
    free(e->snapshots);
    free(e->sandboxes);
    free(e->checkpoint_msgs);
    free(e->checkpoints);
    free(e->volume_snapshots);
    *e = (struct op_encoded){ 0 };
}
