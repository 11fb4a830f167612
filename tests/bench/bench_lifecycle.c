/* Section "lifecycle": the state changes of running sandboxes (512 MiB
 * guests restored from the template), at concurrency 1 and 8 — each
 * worker on a sandbox of its own:
 *
 *   pause, resume                 QMP stop / cont (+ guest clock)
 *   suspend, resume from suspended the whole VM to disk (fsync), QEMU
 *                                 quits / a new QEMU loads it
 *   checkpoint disk, full         the disk (sync in the guest + reflink) /
 *                                 disk, memory and devices; deleted after
 *   fork                          ForkSandbox count 1 of the live sandbox
 *                                 (a temporary full checkpoint); the fork
 *                                 is deleted after; with vmhost's
 *                                 breakdown of the forks at concurrency 1
 *
 * AIRLOCK_BENCH_LIFECYCLE=fork,suspend,... measures only the operations
 * whose names start with one of those words (default: all). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_log.h"

#define LIFECYCLE_WORKERS 8
#define LIFECYCLE_TIMEOUT_MS 300000

struct lifecycle {
    struct itest_vmhost *vh;
    char *ids[LIFECYCLE_WORKERS];
    char *forks[LIFECYCLE_WORKERS];
    Airlock__Vmhost__V1__CheckpointKind kind;
};

static int op_pause(void *arg, int w, int r)
{
    (void)r;
    struct lifecycle *l = arg;
    return bench_sandbox_call(l->vh, ITEST_METHOD("PauseSandbox"), l->ids[w]);
}

static int op_resume(void *arg, int w, int r)
{
    (void)r;
    struct lifecycle *l = arg;
    return bench_sandbox_call(l->vh, ITEST_METHOD("ResumeSandbox"), l->ids[w]);
}

static int op_suspend(void *arg, int w, int r)
{
    (void)r;
    struct lifecycle *l = arg;
    return bench_sandbox_call(l->vh, ITEST_METHOD("SuspendSandbox"), l->ids[w]);
}

static void checkpoint_name(char *out, size_t outlen, int w, int r)
{
    snprintf(out, outlen, "bench-%d-%d", r, w);
}

static int checkpoint(void *arg, int w, int r)
{
    struct lifecycle *l = arg;
    char name[32];
    checkpoint_name(name, sizeof(name), w, r);
    Airlock__Vmhost__V1__CreateCheckpointRequest req =
        AIRLOCK__VMHOST__V1__CREATE_CHECKPOINT_REQUEST__INIT;
    req.sandbox_id = l->ids[w];
    req.name = name;
    req.kind = l->kind;
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    grpc_status_code st =
        rpc_unary(l->vh->ch, ITEST_METHOD("CreateCheckpoint"), &req.base,
                  &airlock__vmhost__v1__checkpoint__descriptor, &resp, &details,
                  LIFECYCLE_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK)
        fprintf(stderr, "bench: CreateCheckpoint: %s %s\n", rpc_status_name(st),
                details ? details : "");
    free(details);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st == GRPC_STATUS_OK ? 0 : -1;
}

static int delete_checkpoint(void *arg, int w, int r)
{
    struct lifecycle *l = arg;
    char name[32];
    checkpoint_name(name, sizeof(name), w, r);
    Airlock__Vmhost__V1__CheckpointRequest req = AIRLOCK__VMHOST__V1__CHECKPOINT_REQUEST__INIT;
    req.sandbox_id = l->ids[w];
    req.name = name;
    ProtobufCMessage *resp = NULL;
    grpc_status_code st = rpc_unary(l->vh->ch, ITEST_METHOD("DeleteCheckpoint"), &req.base,
                                    &airlock__vmhost__v1__empty__descriptor, &resp, NULL,
                                    LIFECYCLE_TIMEOUT_MS);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st == GRPC_STATUS_OK ? 0 : -1;
}

static int fork_one(void *arg, int w, int r)
{
    (void)r;
    struct lifecycle *l = arg;
    l->forks[w] = bench_fork(l->vh, l->ids[w]);
    return l->forks[w] ? 0 : -1;
}

static int delete_fork(void *arg, int w, int r)
{
    (void)r;
    struct lifecycle *l = arg;
    if (!l->forks[w])
        return 0;
    int rc = bench_delete(l->vh, l->forks[w]);
    free(l->forks[w]);
    l->forks[w] = NULL;
    return rc;
}

/* Whether AIRLOCK_BENCH_LIFECYCLE (unset: all) names an operation name
 * starts with. */
static bool chosen(const char *name)
{
    const char *list = getenv("AIRLOCK_BENCH_LIFECYCLE");
    if (!list || !*list)
        return true;
    char *copy = strdup(list), *save = NULL;
    bool found = false;
    for (char *w = copy ? strtok_r(copy, ",", &save) : NULL; w && !found;
         w = strtok_r(NULL, ",", &save))
        found = strncmp(name, w, strlen(w)) == 0;
    free(copy);
    return found;
}

/* A fork's stages from vmhost's log: its temporary checkpoint, then the
 * create of the fork (from=checkpoint). */
static const struct bench_stage fork_stages[] = {
    { "checkpoint_ms", "fork: temporary checkpoint of the source" },
    { "create_ms", "fork: create of the fork from it" },
    { NULL, NULL },
};
static const struct bench_stage checkpoint_stages[] = {
    { "stop_us", "checkpoint: QMP stop" },
    { "save_us", "checkpoint: VM state saved (guest RAM)" },
    { "disk_us", "checkpoint: disk reflink" },
    { "cont_us", "checkpoint: QMP cont" },
    { "fsync_us", "checkpoint: fsync" },
    { NULL, NULL },
};
static const struct bench_stage fork_create_stages[] = {
    { "net_us", "create: network" },
    { "qemu_us", "create: QEMU start → QMP" },
    { "restore_us", "create: state load + cont" },
    { "hello_us", "create: guest's first answer" },
    { "init_us", "create: guest init" },
    { NULL, NULL },
};

static void fork_breakdown(struct bench_report *rep, const struct itest_vmhost *vh, long mark)
{
    const char *const forked[] = { "msg=\"sandbox forked\"", " from=live ", NULL };
    const char *const written[] = { "msg=\"checkpoint written\"", "(temporary)", NULL };
    bench_log_series(rep, vh->log_path, mark, forked, fork_stages);
    bench_log_series(rep, vh->log_path, mark, written, checkpoint_stages);
    bench_log_breakdown(rep, vh, mark, "checkpoint", fork_create_stages);
}

/* One operation at concurrency 1 (runs) and 8 (rounds of 8). */
static int both(struct bench_ctx *ctx, const struct bench_op *op, const char *name, int runs,
                int rounds)
{
    if (!chosen(name))
        return 0;
    fprintf(stderr, "bench: %s (%d, then %d x %d)\n", name, runs, rounds, LIFECYCLE_WORKERS);
    struct bench_report *rep = ctx->report;
    struct lifecycle *l = op->arg;
    long mark = bench_log_mark(l->vh->log_path);
    int rc = bench_rounds(op, 1, runs, bench_report_series(rep, "ms", "%s, concurrency 1", name));
    if (op->run == fork_one)
        fork_breakdown(rep, l->vh, mark);
    if (bench_rounds(op, LIFECYCLE_WORKERS, rounds,
                     bench_report_series(rep, "ms", "%s, concurrency %d", name,
                                         LIFECYCLE_WORKERS)) < 0)
        rc = -1;
    return rc;
}

int bench_section_lifecycle(struct bench_ctx *ctx)
{
    ctx->report->section = "lifecycle of a running 512 MiB sandbox";
    struct itest_vmhost vh;
    if (itest_vmhost_start(&vh, NULL) < 0)
        return -1;
    struct lifecycle l = { .vh = &vh };
    int rc = 0;
    for (int i = 0; i < LIFECYCLE_WORKERS && rc == 0; i++)
        if (!(l.ids[i] = bench_create(&vh, NULL)))
            rc = -1;
    int rounds = bench_env_count("AIRLOCK_BENCH_ROUNDS", 3);
    int few = rounds < 2 ? rounds : 2; /* whole-RAM operations: slow */
    const struct bench_op ops[] = {
        { .run = op_pause, .after = op_resume, .arg = &l },
        { .before = op_pause, .run = op_resume, .arg = &l },
        { .run = op_suspend, .after = op_resume, .arg = &l },
        { .before = op_suspend, .run = op_resume, .arg = &l },
        { .run = checkpoint, .after = delete_checkpoint, .arg = &l },
        { .run = checkpoint, .after = delete_checkpoint, .arg = &l },
        { .run = fork_one, .after = delete_fork, .arg = &l },
    };
    if (rc == 0 && (both(ctx, &ops[0], "pause", 50, 10) < 0 ||
                    both(ctx, &ops[1], "resume (incl. guest clock)", 50, 10) < 0 ||
                    both(ctx, &ops[2], "suspend (whole guest to disk, fsync)", 5, few) < 0 ||
                    both(ctx, &ops[3], "resume from suspended", 5, few) < 0))
        rc = -1;
    l.kind = AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_DISK;
    if (rc == 0 && both(ctx, &ops[4], "checkpoint disk", 10, rounds) < 0)
        rc = -1;
    l.kind = AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_FULL;
    if (rc == 0 && (both(ctx, &ops[5], "checkpoint full (disk + memory)", 5, few) < 0 ||
                    both(ctx, &ops[6], "fork of the live sandbox → fork ready", 5, few) < 0))
        rc = -1;
    for (int i = 0; i < LIFECYCLE_WORKERS; i++) {
        if (l.ids[i] && bench_delete(&vh, l.ids[i]) < 0)
            rc = -1;
        free(l.ids[i]);
        delete_fork(&l, i, 0);
    }
    if (itest_vmhost_stop(&vh) < 0)
        rc = -1;
    return rc;
}
