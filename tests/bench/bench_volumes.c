/* Section "volumes" (docs/volumes.md): what a volume adds to a create,
 * and what snapshots and clones cost as a volume grows.
 *
 *   create, no volume          the reference: a restore (no warm pool)
 *   create + 1 volume          the same with a volume in its slot, told to
 *                              the guest and mounted before the answer
 *   create + 1 new volume      its first use: the node makes and formats it
 *   snapshot, clone            reflinks of a detached 1 GiB and 16 GiB
 *                              volume, every block allocated (fallocate:
 *                              the image's extents as a full volume has
 *                              them), so "flat" is measured, not assumed
 *
 * Every sandbox is deleted after its create, every snapshot and clone
 * after it was timed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_log.h"

#define VOLUMES_TIMEOUT_MS 120000
#define VOLUMES_STORE_GB "40" /* two allocated volumes of 1 and 16 GiB and their clones' metadata */

struct volumes {
    struct itest_vmhost *vh;
    const char *volume_id;     /* the volume attached, or snapshotted and cloned */
    uint64_t size_mb;
    bool fresh;                /* a new volume id per round (its first use) */
};

static void round_volume_id(const struct volumes *v, int r, char *out, size_t outlen)
{
    if (v->fresh)
        snprintf(out, outlen, "%s-%d", v->volume_id, r);
    else
        snprintf(out, outlen, "%s", v->volume_id);
}

static void round_sandbox_id(int r, char *out, size_t outlen)
{
    snprintf(out, outlen, "bench-vol-%d", r);
}

static int volume_call(struct volumes *v, const char *method, const char *volume_id,
                       const char *snapshot_id, const char *new_volume_id)
{
    Airlock__Vmhost__V1__VolumeRef ref = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
    ref.volume_id = (char *)volume_id;
    ref.snapshot_id = (char *)(snapshot_id ? snapshot_id : "");
    ref.new_volume_id = (char *)(new_volume_id ? new_volume_id : "");
    bool empty = strncmp(method, "Delete", 6) == 0;
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    grpc_status_code st =
        rpc_unary(v->vh->ch, method, &ref.base,
                  empty ? &airlock__vmhost__v1__empty__descriptor
                        : &airlock__vmhost__v1__volume__descriptor,
                  &resp, &details, VOLUMES_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        fprintf(stderr, "bench: %s %s: %s %s\n", method, volume_id, rpc_status_name(st),
                details ? details : "");
    free(details);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st == GRPC_STATUS_OK ? 0 : -1;
}

/* CreateSandbox of round r's id, with v's volume at /data unless
 * volume_id is NULL. */
static int create(struct volumes *v, int r)
{
    char id[64], volume_id[64];
    round_sandbox_id(r, id, sizeof(id));
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = id;
    Airlock__Vmhost__V1__VolumeAttachment a = AIRLOCK__VMHOST__V1__VOLUME_ATTACHMENT__INIT;
    Airlock__Vmhost__V1__VolumeAttachment *list[] = { &a };
    if (v->volume_id) {
        round_volume_id(v, r, volume_id, sizeof(volume_id));
        a.volume_id = volume_id;
        a.path.data = (uint8_t *)"/data";
        a.path.len = strlen("/data");
        a.size_mb = v->size_mb;
        a.name = volume_id;
        req.volumes = list;
        req.n_volumes = 1;
    }
    grpc_status_code st;
    char *details = NULL;
    char *got = itest_create_sandbox_with(v->vh, &req, &st, &details);
    if (!got)
        fprintf(stderr, "bench: CreateSandbox with %s: %s: %s\n",
                v->volume_id ? volume_id : "no volume", rpc_status_name(st),
                details ? details : "");
    free(details);
    free(got);
    return got ? 0 : -1;
}

static int delete_sandbox(void *arg, int w, int r)
{
    (void)w;
    struct volumes *v = arg;
    char id[64];
    round_sandbox_id(r, id, sizeof(id));
    int rc = bench_delete(v->vh, id);
    if (rc == 0 && v->fresh) {
        char volume_id[64];
        round_volume_id(v, r, volume_id, sizeof(volume_id));
        rc = volume_call(v, ITEST_METHOD("DeleteVolume"), volume_id, NULL, NULL);
    }
    return rc;
}

static int op_create(void *arg, int w, int r)
{
    (void)w;
    return create(arg, r);
}

static int op_snapshot(void *arg, int w, int r)
{
    (void)w;
    struct volumes *v = arg;
    char snap[32];
    snprintf(snap, sizeof(snap), "s%d", r);
    return volume_call(v, ITEST_METHOD("SnapshotVolume"), v->volume_id, snap, NULL);
}

static int op_snapshot_delete(void *arg, int w, int r)
{
    (void)w;
    struct volumes *v = arg;
    char snap[32];
    snprintf(snap, sizeof(snap), "s%d", r);
    return volume_call(v, ITEST_METHOD("DeleteVolumeSnapshot"), v->volume_id, snap, NULL);
}

static void clone_id(const struct volumes *v, int r, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s-clone-%d", v->volume_id, r);
}

static int op_clone(void *arg, int w, int r)
{
    (void)w;
    struct volumes *v = arg;
    char clone[64];
    clone_id(v, r, clone, sizeof(clone));
    return volume_call(v, ITEST_METHOD("CloneVolume"), v->volume_id, "base", clone);
}

static int op_clone_delete(void *arg, int w, int r)
{
    (void)w;
    struct volumes *v = arg;
    char clone[64];
    clone_id(v, r, clone, sizeof(clone));
    return volume_call(v, ITEST_METHOD("DeleteVolume"), clone, NULL, NULL);
}

/* The volume made at its first use (a create that attaches it), then
 * every block of its image allocated. */
static int make_allocated_volume(struct volumes *v, const char *id, uint64_t size_mb)
{
    struct volumes made = { .vh = v->vh, .volume_id = id, .size_mb = size_mb };
    if (create(&made, 0) < 0 || delete_sandbox(&made, 0, 0) < 0)
        return -1;
    char image[PATH_MAX + 128];
    snprintf(image, sizeof(image), "%s/store/volumes/%s/disk.img", v->vh->data_dir, id);
    int fd = open(image, O_RDWR | O_CLOEXEC);
    int rc = fd >= 0 ? fallocate(fd, 0, 0, (off_t)(size_mb << 20)) : -1;
    if (rc < 0)
        perror(image);
    if (fd >= 0)
        close(fd);
    return rc;
}

static const struct bench_stage create_stages[] = {
    { "disk_us", "disk reflink" },
    { "net_us", "network namespace, TAP, nftables" },
    { "qemu_us", "QEMU start → QMP answers" },
    { "restore_us", "state load + cont" },
    { "volumes_us", "volumes: made, told to the guest, mounted" },
    { "init_us", "guest init" },
    { NULL, NULL },
};

static int measure_creates(struct bench_ctx *ctx, struct volumes *v, const char *name, int runs)
{
    fprintf(stderr, "bench: %s (%d)\n", name, runs);
    struct bench_op op = { .run = op_create, .after = delete_sandbox, .arg = v };
    long mark = bench_log_mark(v->vh->log_path);
    int rc = bench_rounds(&op, 1, runs, bench_report_series(ctx->report, "ms", "%s", name));
    bench_log_breakdown(ctx->report, v->vh, mark, "restore", create_stages);
    return rc;
}

static int measure_reflinks(struct bench_ctx *ctx, struct volumes *v, const char *size, int runs)
{
    struct bench_op snapshot = { .run = op_snapshot, .after = op_snapshot_delete, .arg = v };
    struct bench_op clone = { .run = op_clone, .after = op_clone_delete, .arg = v };
    fprintf(stderr, "bench: snapshot and clone of %s (%d each)\n", size, runs);
    int rc = bench_rounds(&snapshot, 1, runs,
                          bench_report_series(ctx->report, "ms",
                                              "snapshot of a detached %s volume", size));
    if (volume_call(v, ITEST_METHOD("SnapshotVolume"), v->volume_id, "base", NULL) < 0)
        return -1;
    if (bench_rounds(&clone, 1, runs,
                     bench_report_series(ctx->report, "ms", "clone of a snapshot of %s", size)) <
        0)
        rc = -1;
    return rc;
}

int bench_section_volumes(struct bench_ctx *ctx)
{
    ctx->report->section = "volumes (create with one, snapshots and clones)";
    struct itest_vmhost vh;
    const char *const args[] = { "--store-size-gb", VOLUMES_STORE_GB, NULL };
    if (itest_vmhost_start(&vh, args) < 0)
        return -1;
    int runs = bench_env_count("AIRLOCK_BENCH_VOLUME_RUNS", 10);
    struct volumes none = { .vh = &vh };
    struct volumes one = { .vh = &vh, .volume_id = "bench-attached", .size_mb = 1024 };
    struct volumes fresh = { .vh = &vh, .volume_id = "bench-fresh", .size_mb = 1024,
                             .fresh = true };
    struct volumes small = { .vh = &vh, .volume_id = "bench-1g", .size_mb = 1024 };
    struct volumes big = { .vh = &vh, .volume_id = "bench-16g", .size_mb = 16384 };
    int rc = 0;
    if (measure_creates(ctx, &none, "create (restore), no volume", runs) < 0 ||
        create(&one, 0) < 0 || delete_sandbox(&one, 0, 0) < 0 || /* made before it is timed */
        measure_creates(ctx, &one, "create (restore) + 1 volume mounted", runs) < 0 ||
        measure_creates(ctx, &fresh, "create (restore) + 1 new 1 GiB volume (made, formatted)",
                        runs / 2 ? runs / 2 : 1) < 0 ||
        make_allocated_volume(&small, small.volume_id, small.size_mb) < 0 ||
        make_allocated_volume(&big, big.volume_id, big.size_mb) < 0 ||
        measure_reflinks(ctx, &small, "1 GiB", runs) < 0 ||
        measure_reflinks(ctx, &big, "16 GiB", runs) < 0)
        rc = -1;
    if (itest_vmhost_stop(&vh) < 0)
        rc = -1;
    return rc;
}
