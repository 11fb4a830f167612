/* Timing, workers and the vmhost calls shared by the sections. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define BENCH_FORK_TIMEOUT_MS 300000 /* a whole-RAM checkpoint and a restore under TCG */

double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int bench_env_count(const char *name, int fallback)
{
    const char *v = getenv(name);
    int n = v ? atoi(v) : 0;
    return n > 0 ? n : fallback;
}

struct worker {
    const struct bench_op *op;
    int index, rounds;
    pthread_barrier_t *barrier;
    struct bench_series *s;
    int failed;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    const struct bench_op *op = w->op;
    for (int r = 0; r < w->rounds; r++) {
        if (op->before && op->before(op->arg, w->index, r) < 0)
            w->failed = 1;
        pthread_barrier_wait(w->barrier);
        double t0 = bench_now_ms();
        int rc = op->run(op->arg, w->index, r);
        double t1 = bench_now_ms();
        if (rc == 0)
            bench_series_add(w->s, t1 - t0);
        else
            w->failed = 1;
        pthread_barrier_wait(w->barrier);
        if (op->after && op->after(op->arg, w->index, r) < 0)
            w->failed = 1;
        pthread_barrier_wait(w->barrier);
    }
    return NULL;
}

int bench_rounds(const struct bench_op *op, int workers, int rounds, struct bench_series *s)
{
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)workers);
    struct worker *w = calloc((size_t)workers, sizeof(*w));
    pthread_t *t = calloc((size_t)workers, sizeof(*t));
    if (!w || !t) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < workers; i++) {
        w[i] = (struct worker){ .op = op, .index = i, .rounds = rounds, .barrier = &barrier,
                                .s = s };
        if (pthread_create(&t[i], NULL, worker_main, &w[i]) != 0) {
            fprintf(stderr, "bench: cannot start worker threads\n");
            exit(1);
        }
    }
    int rc = 0;
    for (int i = 0; i < workers; i++) {
        pthread_join(t[i], NULL);
        if (w[i].failed)
            rc = -1;
    }
    pthread_barrier_destroy(&barrier);
    free(w);
    free(t);
    return rc;
}

char *bench_create(struct itest_vmhost *vh, const char *id)
{
    return bench_create_with_volume(vh, id, NULL, 0);
}

char *bench_create_with_volume(struct itest_vmhost *vh, const char *id, const char *volume_id,
                               uint64_t size_mb)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = (char *)(id ? id : "");
    Airlock__Vmhost__V1__VolumeAttachment att = AIRLOCK__VMHOST__V1__VOLUME_ATTACHMENT__INIT;
    Airlock__Vmhost__V1__VolumeAttachment *atts[] = { &att };
    if (volume_id) {
        att.volume_id = (char *)volume_id;
        att.path.data = (uint8_t *)"/bench";
        att.path.len = strlen("/bench");
        att.size_mb = size_mb;
        req.volumes = atts;
        req.n_volumes = 1;
    }
    grpc_status_code st;
    char *details = NULL;
    char *got = itest_create_sandbox_with(vh, &req, &st, &details);
    if (!got)
        fprintf(stderr, "bench: CreateSandbox: %s: %s\n", rpc_status_name(st),
                details ? details : "");
    free(details);
    return got;
}

int bench_volume_call(struct itest_vmhost *vh, const char *method, const char *id,
                      const char *snapshot_id, const char *new_id)
{
    Airlock__Vmhost__V1__VolumeRef req = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
    req.volume_id = (char *)id;
    req.snapshot_id = (char *)(snapshot_id ? snapshot_id : "");
    req.new_volume_id = (char *)(new_id ? new_id : "");
    bool empty = strstr(method, "Delete") != NULL;
    char *details = NULL;
    grpc_status_code st = itest_call(vh, method, &req.base,
                                     empty ? &airlock__vmhost__v1__empty__descriptor
                                           : &airlock__vmhost__v1__volume__descriptor,
                                     &details);
    if (st != GRPC_STATUS_OK)
        fprintf(stderr, "bench: %s %s: %s: %s\n", method, id, rpc_status_name(st),
                details ? details : "");
    free(details);
    return st == GRPC_STATUS_OK ? 0 : -1;
}

int bench_delete(struct itest_vmhost *vh, const char *id)
{
    grpc_status_code st = itest_delete_sandbox(vh, id);
    if (st == GRPC_STATUS_OK)
        return 0;
    fprintf(stderr, "bench: DeleteSandbox %s: %s\n", id, rpc_status_name(st));
    return -1;
}

char *bench_fork(struct itest_vmhost *vh, const char *id)
{
    Airlock__Vmhost__V1__ForkSandboxRequest req = AIRLOCK__VMHOST__V1__FORK_SANDBOX_REQUEST__INIT;
    req.sandbox_id = (char *)id;
    req.count = 1;
    Airlock__Vmhost__V1__ForkSandboxResponse *resp = NULL;
    char *details = NULL, *fork_id = NULL;
    grpc_status_code st =
        rpc_unary(vh->ch, ITEST_METHOD("ForkSandbox"), &req.base,
                  &airlock__vmhost__v1__fork_sandbox_response__descriptor,
                  (ProtobufCMessage **)&resp, &details, BENCH_FORK_TIMEOUT_MS);
    if (st == GRPC_STATUS_OK && resp->n_sandboxes == 1)
        fork_id = strdup(resp->sandboxes[0]->id);
    else
        fprintf(stderr, "bench: ForkSandbox %s: %s %s\n", id, rpc_status_name(st),
                details ? details : "");
    free(details);
    if (resp)
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    return fork_id;
}

int bench_sandbox_call(struct itest_vmhost *vh, const char *method, const char *id)
{
    grpc_status_code st;
    char *details = NULL;
    Airlock__Vmhost__V1__Sandbox *sb = itest_sandbox_call(vh, method, id, &st, &details);
    if (!sb)
        fprintf(stderr, "bench: %s %s: %s: %s\n", method, id, rpc_status_name(st),
                details ? details : "");
    free(details);
    if (!sb)
        return -1;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return 0;
}

int bench_exec_true(struct itest_vmhost *vh, const char *id)
{
    const char *argv[] = { "true", NULL };
    struct itest_exec_result r;
    itest_exec(vh, id, argv, NULL, &r);
    bool ok = r.status == GRPC_STATUS_OK && r.exited && r.exit_code == 0;
    if (!ok)
        fprintf(stderr, "bench: exec true in %s: %s %s\n", id, rpc_status_name(r.status),
                r.details ? r.details : "");
    itest_exec_result_free(&r);
    return ok ? 0 : -1;
}

int bench_qemu_pid(struct itest_vmhost *vh, const char *id)
{
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb = itest_sandbox_call(vh, ITEST_METHOD("GetSandbox"), id, &st,
                                                          NULL);
    if (!sb)
        return -1;
    int pid = sb->qemu_pid;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return pid > 0 ? pid : -1;
}

void bench_record_accel(struct bench_ctx *ctx, struct itest_vmhost *vh, const char *id)
{
    if (ctx->report->accel[0])
        return;
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb = itest_sandbox_call(vh, ITEST_METHOD("GetSandbox"), id, &st,
                                                          NULL);
    if (!sb)
        return;
    snprintf(ctx->report->accel, sizeof(ctx->report->accel), "%s", sb->accel);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
}
