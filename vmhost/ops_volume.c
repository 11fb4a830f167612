/* The volume operations (ops.h; volume_store.h, sandbox_volume.h). */
#include <stdio.h>

#include "ops.h"
#include "sandbox_volume.h"
#include "volume_store.h"

/* The answer: the volume as it is after the operation. */
static int answer(struct vmhost *vh, const char *id, struct op_answer *out, struct airlock_error *e)
{
    if (volume_get(vh->volumes, id, &out->volume, e) < 0)
        return -1;
    out->has_volume = true;
    return 0;
}

int op_volume_get(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                  struct airlock_error *e)
{
    const Airlock__Vmhost__V1__VolumeRef *req = (const void *)msg;
    return answer(vh, req->volume_id, out, e);
}

int op_volume_snapshot(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                       struct airlock_error *e)
{
    const Airlock__Vmhost__V1__VolumeRef *req = (const void *)msg;
    if (sandbox_volume_snapshot(vh, req->volume_id, req->snapshot_id, e) < 0)
        return -1;
    return answer(vh, req->volume_id, out, e);
}

int op_volume_clone(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                    struct airlock_error *e)
{
    const Airlock__Vmhost__V1__VolumeRef *req = (const void *)msg;
    if (volume_clone(vh->volumes, req->volume_id, req->snapshot_id, req->new_volume_id, e) < 0)
        return -1;
    return answer(vh, req->new_volume_id, out, e);
}

int op_volume_grow(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                   struct airlock_error *e)
{
    const Airlock__Vmhost__V1__VolumeRef *req = (const void *)msg;
    if (sandbox_volume_grow(vh, req->volume_id, req->size_mb, e) < 0)
        return -1;
    return answer(vh, req->volume_id, out, e);
}

int op_volume_delete(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                     struct airlock_error *e)
{
    const Airlock__Vmhost__V1__VolumeRef *req = (const void *)msg;
    (void)out;
    return volume_delete(vh->volumes, req->volume_id, e);
}

int op_volume_snapshot_delete(struct vmhost *vh, const ProtobufCMessage *msg,
                              struct op_answer *out, struct airlock_error *e)
{
    const Airlock__Vmhost__V1__VolumeRef *req = (const void *)msg;
    (void)out;
    return volume_snapshot_delete(vh->volumes, req->volume_id, req->snapshot_id, e);
}
