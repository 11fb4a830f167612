/* Section "volumes" (docs/volumes.md): what a volume adds to a create, and
 * the clone of a volume's snapshot at two sizes.
 *
 *   create, no volume            restore from the template snapshot (the
 *                                reference: no pool, as every create with a
 *                                volume restores a VM of its own)
 *   create, 1 new 64 MiB volume  the node makes and formats it first
 *   create, 1 existing volume    attached as it is
 *   vmhost's stages              the volume's attach (make, hold) and its
 *                                size notice + guestd's mount
 *   clone of a snapshot          CloneVolume of a 1 GiB and a 16 GiB
 *                                volume's snapshot: a reflink, flat in size
 *
 * AIRLOCK_BENCH_VOLUME_CREATES (default 10), AIRLOCK_BENCH_VOLUME_CLONES
 * (default 10). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_log.h"

struct volume_run {
    struct bench_ctx *ctx;
    struct itest_vmhost *vh;
    const char *volume;   /* NULL: no volume; "new": a new one per round */
    char *id;
    char volume_id[64];
    int seq;
};

static int create_once(void *arg, int worker, int round)
{
    (void)worker;
    struct volume_run *v = arg;
    char id[64];
    snprintf(id, sizeof(id), "bench-vol-%d-%d", v->seq, round);
    const char *volume = v->volume;
    if (volume && strcmp(volume, "new") == 0) {
        snprintf(v->volume_id, sizeof(v->volume_id), "bench-new-%d-%d", v->seq, round);
        volume = v->volume_id;
    }
    v->id = volume ? bench_create_with_volume(v->vh, id, volume, 64) : bench_create(v->vh, id);
    return v->id ? 0 : -1;
}

static int remove_created(void *arg, int worker, int round)
{
    (void)worker;
    (void)round;
    struct volume_run *v = arg;
    if (v->id)
        bench_record_accel(v->ctx, v->vh, v->id);
    int rc = v->id ? bench_delete(v->vh, v->id) : 0;
    free(v->id);
    v->id = NULL;
    if (rc == 0 && v->volume && strcmp(v->volume, "new") == 0)
        rc = bench_volume_call(v->vh, ITEST_METHOD("DeleteVolume"), v->volume_id, NULL, NULL);
    return rc;
}

static const struct bench_stage volume_stages[] = {
    { "volumes_attach_us", "volume attach (make + format, or hold)" },
    { "volumes_mount_us", "size notice (block_resize) + guestd mount" },
    { "restore_us", "device state load + cont" },
    { "hello_us", "guest's first answer" },
    { NULL, NULL },
};

static int measure_creates(struct bench_ctx *ctx, struct itest_vmhost *vh, const char *volume,
                           const char *label, int rounds)
{
    static int seq;
    struct volume_run v = { .ctx = ctx, .vh = vh, .volume = volume, .seq = ++seq };
    struct bench_series *s = bench_report_series(ctx->report, "ms", "%s", label);
    fprintf(stderr, "bench: %s (%d)\n", label, rounds);
    long mark = bench_log_mark(vh->log_path);
    struct bench_op op = { .run = create_once, .after = remove_created, .arg = &v };
    int rc = bench_rounds(&op, 1, rounds, s);
    if (volume)
        bench_log_breakdown(ctx->report, vh, mark, "snapshot", volume_stages);
    return rc;
}

struct clone_run {
    struct itest_vmhost *vh;
    const char *source;
    char clone[64];
};

static int clone_once(void *arg, int worker, int round)
{
    (void)worker;
    struct clone_run *c = arg;
    snprintf(c->clone, sizeof(c->clone), "%s-c%d", c->source, round);
    return bench_volume_call(c->vh, ITEST_METHOD("CloneVolume"), c->source, "s", c->clone);
}

static int remove_clone(void *arg, int worker, int round)
{
    (void)worker;
    (void)round;
    struct clone_run *c = arg;
    return bench_volume_call(c->vh, ITEST_METHOD("DeleteVolume"), c->clone, NULL, NULL);
}

/* A volume of size_mb made by a sandbox's first use, snapshotted; its
 * clones timed. */
static int measure_clones(struct bench_ctx *ctx, struct itest_vmhost *vh, uint64_t size_mb,
                          int rounds)
{
    char source[32];
    snprintf(source, sizeof(source), "bench-src-%llu", (unsigned long long)size_mb);
    char *id = bench_create_with_volume(vh, "bench-vol-src", source, size_mb);
    if (!id || bench_delete(vh, id) < 0 ||
        bench_volume_call(vh, ITEST_METHOD("SnapshotVolume"), source, "s", NULL) < 0) {
        free(id);
        return -1;
    }
    free(id);
    struct bench_series *s = bench_report_series(ctx->report, "ms",
                                                 "clone of a %llu GiB volume's snapshot",
                                                 (unsigned long long)(size_mb >> 10));
    struct clone_run c = { .vh = vh, .source = source };
    struct bench_op op = { .run = clone_once, .after = remove_clone, .arg = &c };
    int rc = bench_rounds(&op, 1, rounds, s);
    if (bench_volume_call(vh, ITEST_METHOD("DeleteVolume"), source, NULL, NULL) < 0)
        rc = -1;
    return rc;
}

int bench_section_volumes(struct bench_ctx *ctx)
{
    ctx->report->section = "volumes (docs/volumes.md)";
    struct itest_vmhost vh;
    if (itest_vmhost_start(&vh, NULL) < 0)
        return -1;
    int creates = bench_env_count("AIRLOCK_BENCH_VOLUME_CREATES", 10);
    int clones = bench_env_count("AIRLOCK_BENCH_VOLUME_CLONES", 10);
    int rc = measure_creates(ctx, &vh, NULL, "create (restore), no volume", creates);
    if (measure_creates(ctx, &vh, "new", "create (restore), 1 new 64 MiB volume", creates) < 0)
        rc = -1;
    /* Made by a first use that is not timed. */
    char *primer = bench_create_with_volume(&vh, "bench-vol-primer", "bench-kept", 64);
    if (!primer || bench_delete(&vh, primer) < 0 ||
        measure_creates(ctx, &vh, "bench-kept", "create (restore), 1 existing volume", creates) < 0)
        rc = -1;
    free(primer);
    if (bench_volume_call(&vh, ITEST_METHOD("DeleteVolume"), "bench-kept", NULL, NULL) < 0)
        rc = -1;
    if (measure_clones(ctx, &vh, 1024, clones) < 0 || measure_clones(ctx, &vh, 16384, clones) < 0)
        rc = -1;
    if (itest_vmhost_stop(&vh) < 0)
        rc = -1;
    return rc;
}
