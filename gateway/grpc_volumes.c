/* Service airlock.v1.Volumes (protos/airlock/v1/volumes.proto): the calls
 * of REST's /v1/volumes routes on the scheduler, which checks every value,
 * scopes each call to the caller's project and answers the public message
 * itself, relayed as it is. */
#include "grpc_call.h"

typedef Airlock__Scheduler__V1__VolumeCall VolumeCall;

/* The scheduler's method and its answer, relayed. */
static void relay(struct grpc_request *r, const char *method, VolumeCall *c,
                  const ProtobufCMessageDescriptor *answer)
{
    GW_CALLER_FILL((*c), &r->caller);
    ProtobufCMessage *resp = NULL;
    if (!grpc_unary(r, r->gw->scheduler, method, &c->base, answer, GW_SCHEDULER_TIMEOUT_MS, &resp))
        return;
    grpc_reply(r, resp);
    protobuf_c_message_free_unpacked(resp, NULL);
}

void grpc_create_volume(struct grpc_request *r)
{
    const Airlock__V1__CreateVolumeRequest *in = (const void *)r->msg;
    VolumeCall c = AIRLOCK__SCHEDULER__V1__VOLUME_CALL__INIT;
    c.name = in->name;
    c.size_mb = in->size_mb;
    c.from_snapshot = in->from_snapshot;
    relay(r, SCHEDULER_METHOD("CreateVolume"), &c, &airlock__v1__volume__descriptor);
}

void grpc_list_volumes(struct grpc_request *r)
{
    VolumeCall c = AIRLOCK__SCHEDULER__V1__VOLUME_CALL__INIT;
    relay(r, SCHEDULER_METHOD("ListVolumes"), &c, &airlock__v1__list_volumes_response__descriptor);
}

/* A call naming one volume (VolumeRequest). */
static void volume_call(struct grpc_request *r, const char *method,
                        const ProtobufCMessageDescriptor *answer)
{
    const Airlock__V1__VolumeRequest *in = (const void *)r->msg;
    VolumeCall c = AIRLOCK__SCHEDULER__V1__VOLUME_CALL__INIT;
    c.name = in->name;
    relay(r, method, &c, answer);
}

void grpc_get_volume(struct grpc_request *r)
{
    volume_call(r, SCHEDULER_METHOD("GetVolume"), &airlock__v1__volume__descriptor);
}

void grpc_delete_volume(struct grpc_request *r)
{
    volume_call(r, SCHEDULER_METHOD("DeleteVolume"), &airlock__v1__volume__descriptor);
}

void grpc_list_volume_snapshots(struct grpc_request *r)
{
    volume_call(r, SCHEDULER_METHOD("ListVolumeSnapshots"),
                &airlock__v1__list_volume_snapshots_response__descriptor);
}

void grpc_grow_volume(struct grpc_request *r)
{
    const Airlock__V1__GrowVolumeRequest *in = (const void *)r->msg;
    VolumeCall c = AIRLOCK__SCHEDULER__V1__VOLUME_CALL__INIT;
    c.name = in->name;
    c.size_mb = in->size_mb;
    relay(r, SCHEDULER_METHOD("GrowVolume"), &c, &airlock__v1__volume__descriptor);
}

/* A call naming a volume's snapshot (VolumeSnapshotRequest). */
static void snapshot_call(struct grpc_request *r, const char *method)
{
    const Airlock__V1__VolumeSnapshotRequest *in = (const void *)r->msg;
    VolumeCall c = AIRLOCK__SCHEDULER__V1__VOLUME_CALL__INIT;
    c.name = in->volume;
    c.snapshot = in->name;
    relay(r, method, &c, &airlock__v1__volume_snapshot__descriptor);
}

void grpc_create_volume_snapshot(struct grpc_request *r)
{
    snapshot_call(r, SCHEDULER_METHOD("CreateVolumeSnapshot"));
}

void grpc_delete_volume_snapshot(struct grpc_request *r)
{
    snapshot_call(r, SCHEDULER_METHOD("DeleteVolumeSnapshot"));
}
