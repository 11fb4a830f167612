/* Section "store": the shared snapshot store (docs/snapshot-store.md).
 * Two vmhosts, A and B, share a store directory; a third, C, has none.
 * Each round a 512 MiB sandbox dirties 16 MiB of memory (random bytes in
 * /dev/shm), then:
 *
 *   suspend to the store       on A: local snapshot + deltas into the store
 *   resume on another node     on B, from the store (B's first resume
 *                              fetches A's template build: round 1 shows it)
 *   suspend / resume, no store on C: the same sandbox work on one node
 *   bytes stored per suspend   the suspend's deltas (state + disk + policy)
 *                              beside the 16 MiB the guest dirtied
 *   live migration             A to B while the guest runs and keeps writing
 *                              (memory and a synced file): total, from the
 *                              first pass to the target's answer, and the
 *                              time the guest was stopped (the source's
 *                              switchover, then the target's finish: an
 *                              upper bound of what the guest sees)
 *   with a volume              the same move of a sandbox with a 256 MiB
 *                              volume into which the guest wrote 16 MiB
 *                              (docs/volumes.md "Across nodes")
 *   vmhost's own stages        from A's and B's logs: template publish, the
 *                              disk's, state's and volumes' deltas; B's base
 *                              (template fetch), rebuilt files, the resume
 *
 * AIRLOCK_BENCH_STORE_ROUNDS (default 5). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_log.h"
#include "fsutil.h"

/* /dev/shm is a tmpfs in the guest: the bytes live in guest memory. */
#define DIRTY_SCRIPT "head -c 16M /dev/urandom > /dev/shm/dirty"

/* SuspendSandbox on vh; its store object (malloc'd, "" without a store),
 * or NULL. */
static char *suspend(struct itest_vmhost *vh, const char *id, double *ms)
{
    grpc_status_code st;
    char *details = NULL;
    double t0 = bench_now_ms();
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(vh, ITEST_METHOD("SuspendSandbox"), id, &st, &details);
    *ms = bench_now_ms() - t0;
    if (st != GRPC_STATUS_OK) {
        fprintf(stderr, "bench: SuspendSandbox: %s %s\n", rpc_status_name(st),
                details ? details : "");
        free(details);
        return NULL;
    }
    char *object = strdup(sb->store_object);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    free(details);
    return object;
}

static int resume_from(struct itest_vmhost *vh, const char *id, const char *object, double *ms)
{
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = (char *)id;
    req.store_object = (char *)object;
    char *details = NULL;
    double t0 = bench_now_ms();
    grpc_status_code st = itest_call(vh, ITEST_METHOD("ResumeSandbox"), &req.base,
                                     &airlock__vmhost__v1__sandbox__descriptor, &details);
    *ms = bench_now_ms() - t0;
    if (st != GRPC_STATUS_OK)
        fprintf(stderr, "bench: ResumeSandbox: %s %s\n", rpc_status_name(st),
                details ? details : "");
    free(details);
    return st == GRPC_STATUS_OK ? 0 : -1;
}

/* The suspend's stored bytes, summed over its manifest's files. */
static double stored_mib(const char *store, const char *object)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s/manifest.json", store, object);
    json_t *m = json_load_file(path, 0, NULL);
    const char *name;
    json_t *f;
    double bytes = 0;
    json_object_foreach(json_object_get(m, "files"), name, f)
        bytes += (double)json_integer_value(json_object_get(f, "stored"));
    json_decref(m);
    return bytes / (1024.0 * 1024.0);
}

static int dirty(struct itest_vmhost *vh, const char *id)
{
    struct itest_exec_result r;
    itest_sh(vh, id, DIRTY_SCRIPT, &r);
    int rc = r.status == GRPC_STATUS_OK && r.exited && r.exit_code == 0 ? 0 : -1;
    if (rc < 0)
        fprintf(stderr, "bench: dirtying the guest failed: %s\n", r.details ? r.details : "");
    itest_exec_result_free(&r);
    return rc;
}

struct store_series {
    struct bench_series *suspend, *resume, *local_suspend, *local_resume, *stored;
    struct bench_series *migrate_total, *migrate_stopped;
};

#define VOLUME_MB 256

/* 16 MiB of random bytes into the sandbox's volume, on its disk. */
static int volume_write(struct itest_vmhost *vh, const char *id)
{
    struct itest_exec_result r;
    itest_sh(vh, id, "head -c 16M /dev/urandom > /bench/written && sync", &r);
    int rc = r.status == GRPC_STATUS_OK && r.exited && r.exit_code == 0 ? 0 : -1;
    if (rc < 0)
        fprintf(stderr, "bench: writing the volume failed: %s\n", r.details ? r.details : "");
    itest_exec_result_free(&r);
    return rc;
}

/* A migration step on vh: 0 with *out (freed by the caller), or -1. */
static int migrate_step(struct itest_vmhost *vh, const char *method, const ProtobufCMessage *req,
                        const ProtobufCMessageDescriptor *resp, ProtobufCMessage **out)
{
    char *details = NULL;
    *out = NULL;
    grpc_status_code st = rpc_unary(vh->ch, method, req, resp, out, &details, 300000);
    if (st != GRPC_STATUS_OK)
        fprintf(stderr, "bench: %s: %s %s\n", method, rpc_status_name(st), details ? details : "");
    free(details);
    return st == GRPC_STATUS_OK ? 0 : -1;
}

/* Live migration of id from a to b, as the scheduler's drain does it. */
static int migrate(struct itest_vmhost *a, struct itest_vmhost *b, const char *id,
                   const struct store_series *s)
{
    Airlock__Vmhost__V1__SandboxRef ref = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    ref.id = (char *)id;
    Airlock__Vmhost__V1__Migration req = AIRLOCK__VMHOST__V1__MIGRATION__INIT;
    req.id = (char *)id;
    ProtobufCMessage *begun = NULL, *prepared = NULL, *sent = NULL, *finished = NULL;
    const ProtobufCMessageDescriptor *mig = &airlock__vmhost__v1__migration__descriptor;
    int rc = -1;
    double t0 = bench_now_ms();
    if (migrate_step(a, ITEST_METHOD("MigrateBegin"), &ref.base, mig, &begun) < 0)
        goto out;
    req.store_object = ((Airlock__Vmhost__V1__Migration *)begun)->store_object;
    req.peer_node = "a";
    if (migrate_step(b, ITEST_METHOD("MigratePrepare"), &req.base, mig, &prepared) < 0)
        goto out;
    req.store_object = "";
    req.peer_node = "b";
    req.address = ((Airlock__Vmhost__V1__Migration *)prepared)->address;
    req.token = ((Airlock__Vmhost__V1__Migration *)prepared)->token;
    if (migrate_step(a, ITEST_METHOD("MigrateSend"), &req.base, mig, &sent) < 0)
        goto out;
    double t_sent = bench_now_ms();
    if (migrate_step(b, ITEST_METHOD("MigrateFinish"), &ref.base,
                     &airlock__vmhost__v1__sandbox__descriptor, &finished) < 0)
        goto out;
    double t_done = bench_now_ms();
    bench_series_add(s->migrate_total, t_done - t0);
    bench_series_add(s->migrate_stopped,
                     (double)((Airlock__Vmhost__V1__Migration *)sent)->stopped_ms +
                         (t_done - t_sent));
    rc = bench_delete(a, id);
out:
    if (rc < 0) {
        /* Given up on both sides: the guest runs on A. */
        itest_call(a, ITEST_METHOD("MigrateAbort"), &ref.base,
                   &airlock__vmhost__v1__empty__descriptor, NULL);
        itest_call(b, ITEST_METHOD("MigrateAbort"), &ref.base,
                   &airlock__vmhost__v1__empty__descriptor, NULL);
    }
    ProtobufCMessage *msgs[] = { begun, prepared, sent, finished };
    for (size_t i = 0; i < 4; i++)
        if (msgs[i])
            protobuf_c_message_free_unpacked(msgs[i], NULL);
    return rc;
}

/* A guest that keeps writing while it moves: memory and a synced file. */
#define BUSY_SCRIPT                                                                      \
    "setsid sh -c 'while true; do head -c 256K /dev/urandom > /dev/shm/busy;"           \
    " date >> /root/synced; sync; sleep 0.1; done' </dev/null >/dev/null 2>&1 &"

static int round_migrated(struct itest_vmhost *a, struct itest_vmhost *b,
                          const struct store_series *s)
{
    char *id = bench_create(a, NULL);
    if (!id)
        return -1;
    int rc = -1;
    struct itest_exec_result r;
    itest_sh(a, id, BUSY_SCRIPT, &r);
    bool busy = r.status == GRPC_STATUS_OK && r.exited && r.exit_code == 0;
    itest_exec_result_free(&r);
    if (busy && dirty(a, id) == 0 && migrate(a, b, id, s) == 0 && bench_exec_true(b, id) == 0)
        rc = bench_delete(b, id);
    else
        bench_delete(a, id);
    free(id);
    return rc;
}

/* The series of one kind of move: suspend on A, resume on B, stored. */
struct move_series {
    struct bench_series *suspend, *resume, *stored;
};

/* One round on the shared store: A → B; with volume (not NULL) the
 * sandbox has that volume, into which the guest also writes 16 MiB. */
static int round_moved(struct itest_vmhost *a, struct itest_vmhost *b, const char *store,
                       const char *volume, const struct move_series *s)
{
    char *id = volume ? bench_create_with_volume(a, NULL, volume, VOLUME_MB) : bench_create(a, NULL);
    if (!id)
        return -1;
    double ms;
    char *object = NULL;
    int rc = -1;
    if (dirty(a, id) < 0 || (volume && volume_write(a, id) < 0) ||
        !(object = suspend(a, id, &ms)) || !*object)
        goto out;
    bench_series_add(s->suspend, ms);
    bench_series_add(s->stored, stored_mib(store, object));
    if (resume_from(b, id, object, &ms) < 0 || bench_exec_true(b, id) < 0)
        goto out;
    bench_series_add(s->resume, ms);
    rc = bench_delete(b, id);
out:
    if (bench_delete(a, id) < 0)
        rc = -1;
    /* The volume moved to B; A keeps its image (no scheduler told it). */
    if (volume && (bench_volume_call(b, ITEST_METHOD("DeleteVolume"), volume, "", "") < 0 ||
                   bench_volume_call(a, ITEST_METHOD("DeleteVolume"), volume, "", "") < 0))
        rc = -1;
    free(object);
    free(id);
    return rc;
}

/* The same work on one node without a store. */
static int round_local(struct itest_vmhost *c, const struct store_series *s)
{
    char *id = bench_create(c, NULL);
    if (!id)
        return -1;
    double ms;
    char *object = NULL;
    int rc = -1;
    if (dirty(c, id) < 0 || !(object = suspend(c, id, &ms)))
        goto out;
    bench_series_add(s->local_suspend, ms);
    if (resume_from(c, id, "", &ms) < 0 || bench_exec_true(c, id) < 0)
        goto out;
    bench_series_add(s->local_resume, ms);
    rc = 0;
out:
    if (bench_delete(c, id) < 0)
        rc = -1;
    free(object);
    free(id);
    return rc;
}

int bench_section_store(struct bench_ctx *ctx)
{
    ctx->report->section = "shared snapshot store: a 512 MiB guest that dirtied 16 MiB";
    char store[] = "/tmp/airlock-bench-store-XXXXXX";
    if (!mkdtemp(store))
        return -1;
    const char *const args[] = { "--snapshot-store", store, NULL };
    /* B's namespaces are named apart from A's: a migrating sandbox has one
     * on each node for a moment. */
    const char *const args_b[] = { "--snapshot-store", store, "--netns-prefix", "airlock-b-",
                                   NULL };
    struct itest_vmhost a, b, c;
    int rc = -1;
    bool started_a = false, started_b = false, started_c = false;
    if (!(started_a = itest_vmhost_start(&a, args) == 0) ||
        !(started_b = itest_vmhost_start(&b, args_b) == 0) ||
        !(started_c = itest_vmhost_start(&c, NULL) == 0))
        goto out;
    struct bench_report *r = ctx->report;
    struct store_series s = {
        .suspend = bench_report_series(r, "ms", "suspend to the store (node A)"),
        .resume = bench_report_series(r, "ms", "resume on another node from the store (node B)"),
        .local_suspend = bench_report_series(r, "ms", "reference: suspend, no store"),
        .local_resume = bench_report_series(r, "ms", "reference: resume on the same node"),
        .stored = bench_report_series(r, "MiB", "stored per suspend (the guest dirtied 16)"),
        .migrate_total = bench_report_series(r, "ms", "live migration A → B: total"),
        .migrate_stopped = bench_report_series(r, "ms", "live migration: guest stopped (at most)"),
    };
    const struct move_series plain = { s.suspend, s.resume, s.stored };
    const struct move_series with_volume = {
        bench_report_series(r, "ms", "suspend to the store, with a 256 MiB volume holding 16 MiB"),
        bench_report_series(r, "ms", "resume on another node, the volume with it"),
        bench_report_series(r, "MiB", "stored per suspend with the volume (the guest wrote 32)"),
    };
    int rounds = bench_env_count("AIRLOCK_BENCH_STORE_ROUNDS", 5);
    long mark_a = bench_log_mark(a.log_path), mark_b = bench_log_mark(b.log_path);
    rc = 0;
    /* Interleaved, so both see the same host. */
    for (int i = 0; i < rounds && rc == 0; i++) {
        char volume[64];
        snprintf(volume, sizeof(volume), "bench-store-volume-%d", i);
        if (round_moved(&a, &b, store, NULL, &plain) < 0 || round_local(&c, &s) < 0 ||
            round_migrated(&a, &b, &s) < 0 || round_moved(&a, &b, store, volume, &with_volume) < 0)
            rc = -1;
    }
    bench_series_note(s.migrate_stopped, "source switchover to the target's answer: the last "
                                         "memory, the disk's changes, cont, guest init");
    bench_series_note(s.resume, "includes fetching node A's template build once (round 1)");
    static const char *const stored[] = { "sandbox set stored", "kind=suspend", NULL };
    static const struct bench_stage suspend_stages[] = {
        { "publish_ms", "  node A: template build published (round 1)" },
        { "disk_ms", "  node A: disk delta" },
        { "state_ms", "  node A: state delta" },
        { "volumes_ms", "  node A: volumes' deltas (0 without volumes)" },
        { NULL, NULL },
    };
    static const char *const taken[] = { "sandbox taken from the snapshot store", NULL };
    static const struct bench_stage take_stages[] = {
        { "base_ms", "  node B: manifest + template build (fetched in round 1)" },
        { "files_ms", "  node B: disk and state rebuilt" },
        { NULL, NULL },
    };
    static const char *const resumed[] = { "sandbox resumed from suspend", NULL };
    static const struct bench_stage resume_stages[] = {
        { "ms", "  node B: resume of the rebuilt suspend" },
        { NULL, NULL },
    };
    static const char *const sent[] = { "sandbox migration sent", NULL };
    static const struct bench_stage sent_stages[] = {
        { "ms", "  node A: migration sent (the memory, then the switchover)" },
        { "stopped_ms", "  node A: guest stopped there" },
        { NULL, NULL },
    };
    static const char *const finished[] = { "sandbox migration finished", NULL };
    static const struct bench_stage finish_stages[] = {
        { "ms", "  node B: finish (last bytes, cont, guest init)" },
        { NULL, NULL },
    };
    bench_log_series(r, a.log_path, mark_a, stored, suspend_stages);
    bench_log_series(r, a.log_path, mark_a, sent, sent_stages);
    bench_log_series(r, b.log_path, mark_b, finished, finish_stages);
    bench_log_series(r, b.log_path, mark_b, taken, take_stages);
    bench_log_series(r, b.log_path, mark_b, resumed, resume_stages);
out:
    if (started_c && itest_vmhost_stop(&c) < 0)
        rc = -1;
    if (started_b && itest_vmhost_stop(&b) < 0)
        rc = -1;
    if (started_a && itest_vmhost_stop(&a) < 0)
        rc = -1;
    char err[256];
    fs_remove_tree(store, err, sizeof(err));
    return rc;
}
