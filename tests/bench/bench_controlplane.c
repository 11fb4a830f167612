/* Section "controlplane": the whole stack (tests/controlplane/cp_stack.h:
 * PostgreSQL, nats-server, vault, egress, vmhost, scheduler, gateway),
 * measured from outside as a client sees it, with vmhost's own figures
 * beside each so the control plane's added cost is visible:
 *
 *   POST /v1/sandboxes → 201 (running, guest answered its init), with a
 *     full warm pool at concurrency 1, then without pool at concurrency 1,
 *     8 and 32 (AIRLOCK_BENCH_CP_CREATES each, default 200); beside them
 *     CreateSandbox straight to the same vmhost (AIRLOCK_BENCH_CP_DIRECT,
 *     default 40) and, for the very creates the REST calls made, the
 *     gateway's time (authentication apart), the scheduler's (insert,
 *     node, commit) and vmhost's own (their logs);
 *   exec `true` through the gateway against vmhost's Exec;
 *   events: the lifecycle events of pause/resume storms as delivered on
 *     /v1/events, and the SSE relay's capacity for events published
 *     straight to NATS. */
#include <nats/nats.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_log.h"
#include "bench_rest.h"
#include "cp_nats.h"
#include "cp_pki.h"
#include "cp_stack.h"
#include "fsutil.h"

#define CP_POOL "8"
#define CP_POOL_SIZE 8
#define CP_POOL_TIMEOUT_MS 300000
#define CP_MAX_WORKERS 32
#define CP_EXECS 100
#define CP_STORM_SANDBOXES 4
#define CP_STORM_CYCLES 25
#define CP_SYNTHETIC_EVENTS 20000
#define CP_EVENTS_TIMEOUT_MS 30000
#define CP_MAX_TIMED 1024

/* A REST create's answer time, to set beside vmhost's own time for the
 * same sandbox (its log). */
struct timed_create {
    char id[64];
    double ms;
};

struct cp {
    struct bench_ctx *ctx;
    struct cp_stack st;
    struct bench_rest rest;
    char project[64];
    bool via_rest;  /* else CreateSandbox on vmhost */
    bool wait_pool;
    int seq;
    char *ids[CP_MAX_WORKERS];
    /* Each worker's kept connection to the gateway, as an API client
     * holds one: a request pays no TCP connect or gateway thread start. */
    struct http_conn conns[CP_MAX_WORKERS];
    pthread_mutex_t timed_lock;
    struct timed_create timed[CP_MAX_TIMED];
    int n_timed;
    /* REST creates at concurrency 1: an exec `true` through the gateway
     * right after each create (not in its time), what a client does
     * next, into this series (NULL: none). */
    struct bench_series *first_exec;
};

/* ---- creates ---- */

static int wait_pool(void *arg, int w, int r)
{
    (void)r;
    struct cp *c = arg;
    return w > 0 || !c->wait_pool ||
                   itest_wait_pool_ready(&c->st.nodes[0].vmhost, CP_POOL_SIZE, CP_POOL_TIMEOUT_MS)
               ? 0
               : -1;
}

static int create(void *arg, int w, int r)
{
    struct cp *c = arg;
    if (!c->via_rest) {
        char id[64];
        snprintf(id, sizeof(id), "direct-%d-%d-%d", c->seq, r, w);
        c->ids[w] = bench_create(&c->st.nodes[0].vmhost, id);
        return c->ids[w] ? 0 : -1;
    }
    json_t *out = NULL;
    double started = bench_now_ms();
    int status = bench_rest_call(&c->rest, &c->conns[w], "POST", "/v1/sandboxes", "{}", &out);
    double ms = bench_now_ms() - started;
    const char *id = json_string_value(json_object_get(out, "id"));
    const char *state = json_string_value(json_object_get(out, "state"));
    if (status == 201 && id && state && strcmp(state, "running") == 0)
        c->ids[w] = strdup(id);
    if (c->ids[w]) {
        pthread_mutex_lock(&c->timed_lock);
        if (c->n_timed < CP_MAX_TIMED) {
            snprintf(c->timed[c->n_timed].id, sizeof(c->timed[c->n_timed].id), "%s", id);
            c->timed[c->n_timed++].ms = ms;
        }
        pthread_mutex_unlock(&c->timed_lock);
    } else
        fprintf(stderr, "bench: POST /v1/sandboxes answered %d\n", status);
    json_decref(out);
    return c->ids[w] ? 0 : -1;
}

static int exec_rest(void *arg, int w, int r);

static int delete(void *arg, int w, int r)
{
    struct cp *c = arg;
    if (!c->ids[w])
        return 0;
    int rc = 0;
    if (c->first_exec) {
        double started = bench_now_ms();
        rc = exec_rest(c, w, r);
        bench_series_add(c->first_exec, bench_now_ms() - started);
    }
    if (c->via_rest) {
        char path[128];
        json_t *out = NULL;
        snprintf(path, sizeof(path), "/v1/sandboxes/%s", c->ids[w]);
        if (bench_rest_call(&c->rest, &c->conns[w], "DELETE", path, NULL, &out) != 204)
            rc = -1;
        json_decref(out);
    } else if (bench_delete(&c->st.nodes[0].vmhost, c->ids[w]) < 0) {
        rc = -1;
    }
    free(c->ids[w]);
    c->ids[w] = NULL;
    return rc;
}

/* vmhost's own time (ms) for sandbox id in its log text, or -1. */
static double own_ms(char *log, const char *id)
{
    char needle[96];
    snprintf(needle, sizeof(needle), "msg=\"sandbox created\" sandbox=%s ", id);
    const char *line = strstr(log, needle);
    const char *us = line ? strstr(line, " us=") : NULL;
    const char *end = line ? strchr(line, '\n') : NULL;
    return us && (!end || us < end) ? strtod(us + 4, NULL) / 1000 : -1;
}

/* Per create: the REST answer minus vmhost's own time for the same
 * sandbox, so a slow VM start does not look like control-plane cost. */
static void added_per_create(struct cp *c, long mark, int from)
{
    struct bench_series *s = bench_report_series(c->ctx->report, "ms", "  └ added, per create");
    char *text = NULL;
    size_t len = 0;
    if (fs_read_file(c->st.nodes[0].vmhost.log_path, 64u << 20, &text, &len, NULL, 0) == 0 &&
        (size_t)mark <= len) {
        for (int i = from; i < c->n_timed; i++) {
            double own = own_ms(text + mark, c->timed[i].id);
            if (own >= 0)
                bench_series_add(s, c->timed[i].ms - own);
        }
    }
    free(text);
    bench_series_note(s, "REST answer minus vmhost's own time for the same sandbox (target <= 5 ms)");
}

/* workers x rounds creates; with the REST ones, vmhost's own time for
 * them from its log, and what the control plane added (difference of the
 * medians). Returns the series of the creates. */
static struct bench_series *creates(struct cp *c, bool via_rest, int workers, int total,
                                    int *rc)
{
    struct bench_report *r = c->ctx->report;
    c->via_rest = via_rest;
    c->seq++;
    int rounds = (total + workers - 1) / workers;
    struct bench_series *s = bench_report_series(
        r, "ms", "%s, concurrency %d", via_rest ? "POST /v1/sandboxes → 201 running" :
                                                  "vmhost CreateSandbox (direct)", workers);
    fprintf(stderr, "bench: %s (%d x %d)\n", s->name, rounds, workers);
    char gateway_log[PATH_MAX], scheduler_log[PATH_MAX];
    fs_path(gateway_log, sizeof(gateway_log), "%s/gateway.log", c->st.dir);
    fs_path(scheduler_log, sizeof(scheduler_log), "%s/scheduler.log", c->st.dir);
    long mark = bench_log_mark(c->st.nodes[0].vmhost.log_path);
    long gateway_mark = bench_log_mark(gateway_log);
    long scheduler_mark = bench_log_mark(scheduler_log);
    struct bench_op op = { .before = wait_pool, .run = create, .after = delete, .arg = c };
    int timed_from = c->n_timed;
    if (via_rest && workers == 1)
        c->first_exec = bench_report_series(r, "ms", "  then exec `true` through the gateway");
    if (bench_rounds(&op, workers, rounds, s) < 0)
        *rc = -1;
    if (c->first_exec)
        bench_series_note(c->first_exec, "the first exec in the new sandbox, right after its "
                                         "create answered");
    c->first_exec = NULL;
    if (via_rest) {
        /* From the outside in: each service's own time for these creates. */
        static const struct bench_stage gateway[] = {
            { "us", "gateway's time (its log)" },
            { "auth_us", "gateway: authentication (cached/scheduler)" },
            { NULL, NULL }
        };
        static const struct bench_stage scheduler[] = {
            { "us", "scheduler's time (its log)" },
            { "insert_us", "scheduler: insert, placed (one statement)" },
            { "node_us", "scheduler: NATS request + vmhost's create" },
            { "commit_us", "scheduler: commit of running" },
            { NULL, NULL }
        };
        /* Pooled creates attach to egress at hand-out (policy_us),
         * restores while QEMU starts and loads the state (what is left
         * of it when the load is done: attach_wait_us); init_us includes
         * the sandbox CA's install in the guest. */
        static const struct bench_stage own_pool[] = {
            { "us", "vmhost's own time (its log)" },
            { "policy_us", "vmhost: egress attach (sandbox CA issued)" },
            { "init_us", "vmhost: guest session init (with the CA)" },
            { NULL, NULL }
        };
        static const struct bench_stage own_snapshot[] = {
            { "us", "vmhost's own time (its log)" },
            { "net_us", "vmhost: network namespace (egress attach aside)" },
            { "attach_wait_us", "vmhost: egress attach left after the state load" },
            { "init_us", "vmhost: guest session init (with the CA)" },
            { NULL, NULL }
        };
        static const char *const gateway_lines[] = { "msg=\"http request\"",
                                                     "route=\"POST /v1/sandboxes\"",
                                                     "status=201", NULL };
        static const char *const scheduler_lines[] = { "msg=\"sandbox created\"", NULL };
        bench_log_series(r, gateway_log, gateway_mark, gateway_lines, gateway);
        bench_log_series(r, scheduler_log, scheduler_mark, scheduler_lines, scheduler);
        size_t own_first = r->n_series; /* the breakdown's first series: vmhost's total */
        bench_log_breakdown(r, &c->st.nodes[0].vmhost, mark, c->wait_pool ? "pool" : "snapshot",
                            c->wait_pool ? own_pool : own_snapshot);
        const struct bench_series *mine = r->series[own_first];
        struct bench_series *added =
            bench_report_series(r, "ms", "  └ added by gateway + scheduler + NATS");
        if (mine->n && s->n)
            bench_series_add(added, bench_series_percentile(s, 50) -
                                        bench_series_percentile(mine, 50));
        bench_series_note(added, "median of the REST answers minus median of vmhost's own "
                                 "time");
        added_per_create(c, mark, timed_from);
    }
    return s;
}

/* The pool's target through the API, then wait until the node has it. */
static int set_pool(struct cp *c, unsigned target)
{
    char body[64];
    snprintf(body, sizeof(body), "{\"target\":%u}", target);
    json_t *out = NULL;
    struct bench_rest admin;
    if (bench_rest_init(&admin, c->st.gateway_url, c->st.admin_key) < 0)
        return -1;
    int status =
        bench_rest_call(&admin, NULL, "PUT", "/v1/templates/default/warm-pool", body, &out);
    json_decref(out);
    if (status != 200) {
        fprintf(stderr, "bench: PUT warm-pool answered %d\n", status);
        return -1;
    }
    for (int i = 0; i < CP_POOL_TIMEOUT_MS / 200; i++) {
        Airlock__Vmhost__V1__NodeStats *ns = itest_node_stats(&c->st.nodes[0].vmhost);
        bool done = ns && ns->pool_target == target && ns->pool_ready == target;
        if (ns)
            protobuf_c_message_free_unpacked(&ns->base, NULL);
        if (done)
            return 0;
        usleep(200 * 1000);
    }
    fprintf(stderr, "bench: the node's pool did not reach %u\n", target);
    return -1;
}

/* ---- exec ---- */

static int exec_rest(void *arg, int w, int r)
{
    (void)r;
    struct cp *c = arg;
    char path[128];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/exec", c->ids[w]);
    json_t *out = NULL;
    int status =
        bench_rest_call(&c->rest, &c->conns[w], "POST", path, "{\"cmd\":[\"true\"]}", &out);
    bool ok = status == 200 && json_integer_value(json_object_get(out, "exit_code")) == 0;
    json_decref(out);
    return ok ? 0 : -1;
}

static int exec_direct(void *arg, int w, int r)
{
    (void)r;
    struct cp *c = arg;
    return bench_exec_true(&c->st.nodes[0].vmhost, c->ids[w]);
}

/* *through: the series of the execs through the gateway. */
static int execs(struct cp *c, struct bench_series **through)
{
    struct bench_report *r = c->ctx->report;
    c->via_rest = true;
    if (create(c, 0, 0) < 0)
        return -1;
    fprintf(stderr, "bench: exec through the gateway and direct (%d each)\n", CP_EXECS);
    struct bench_series *via = bench_report_series(r, "ms", "exec `true` through the gateway");
    struct bench_series *direct = bench_report_series(r, "ms", "exec `true` on vmhost (direct)");
    struct bench_op rest_op = { .run = exec_rest, .arg = c };
    struct bench_op direct_op = { .run = exec_direct, .arg = c };
    /* Interleaved, each first every other time: an exec's ~50 ms drift
     * with the host by more than the gateway's part, which two series run
     * one after the other would show as the difference. */
    int rc = 0;
    for (int i = 0; i < CP_EXECS; i++) {
        bool rest_first = i % 2 == 0;
        if (bench_rounds(rest_first ? &rest_op : &direct_op, 1, 1, rest_first ? via : direct) < 0 ||
            bench_rounds(rest_first ? &direct_op : &rest_op, 1, 1, rest_first ? direct : via) < 0)
            rc = -1;
    }
    *through = via;
    struct bench_series *added = bench_report_series(r, "ms", "  └ added by the gateway");
    if (via->n && direct->n)
        bench_series_add(added,
                         bench_series_percentile(via, 50) - bench_series_percentile(direct, 50));
    bench_series_note(added, "scheduler GetSandbox (tenancy, node address) + HTTP + relay");
    if (delete(c, 0, 0) < 0)
        rc = -1;
    return rc;
}

/* ---- events ---- */

struct event_reader {
    struct http_response resp;
    pthread_t thread;
    pthread_mutex_t lock;
    int received;
    double first_ms, last_ms;
};

static void *read_events(void *arg)
{
    struct event_reader *e = arg;
    struct strbuf line = { 0 };
    while (http_read_line(&e->resp, &line) == 1) {
        if (strcmp(strbuf_str(&line), "event: sandbox") != 0)
            continue;
        double now = bench_now_ms();
        pthread_mutex_lock(&e->lock);
        if (e->received++ == 0)
            e->first_ms = now;
        e->last_ms = now;
        pthread_mutex_unlock(&e->lock);
    }
    strbuf_free(&line);
    return NULL;
}

static int events_open(struct cp *c, struct event_reader *e)
{
    memset(e, 0, sizeof(*e));
    pthread_mutex_init(&e->lock, NULL);
    if (bench_rest_open_sse(&c->rest, "/v1/events", &e->resp) < 0)
        return -1;
    /* ": subscribed": from here on nothing is missed. */
    struct strbuf line = { 0 };
    int rc = http_read_line(&e->resp, &line) == 1 && strstr(strbuf_str(&line), "subscribed")
                 ? 0
                 : -1;
    strbuf_free(&line);
    if (rc == 0 && pthread_create(&e->thread, NULL, read_events, e) != 0)
        rc = -1;
    if (rc < 0)
        http_close(&e->resp);
    return rc;
}

/* Waits until want events came (or the timeout), then closes the stream;
 * returns how many came. */
static int events_close(struct event_reader *e, int want)
{
    double deadline = bench_now_ms() + CP_EVENTS_TIMEOUT_MS;
    for (;;) {
        pthread_mutex_lock(&e->lock);
        int got = e->received;
        pthread_mutex_unlock(&e->lock);
        if (got >= want || bench_now_ms() > deadline)
            break;
        usleep(10 * 1000);
    }
    http_cancel(&e->resp);
    pthread_join(e->thread, NULL);
    http_close(&e->resp);
    pthread_mutex_destroy(&e->lock);
    return e->received;
}

static int storm(void *arg, int w, int r)
{
    (void)r;
    struct cp *c = arg;
    char path[128];
    static const char *const ops[] = { "pause", "resume" };
    for (int i = 0; i < CP_STORM_CYCLES * 2; i++) {
        json_t *out = NULL;
        snprintf(path, sizeof(path), "/v1/sandboxes/%s/%s", c->ids[w], ops[i % 2]);
        int status = bench_rest_call(&c->rest, &c->conns[w], "POST", path, NULL, &out);
        json_decref(out);
        if (status != 200)
            return -1;
    }
    return 0;
}

static void events_rate(struct bench_report *r, const struct event_reader *e, int got, int want,
                        double start_ms, const char *name, const char *what)
{
    struct bench_series *s = bench_report_series(r, "events/s", "%s", name);
    double span = e->last_ms - start_ms;
    if (got > 0 && span > 0)
        bench_series_add(s, got / (span / 1e3));
    bench_series_note(s, "%d of %d delivered; %s", got, want, what);
}

/* Events come from the scheduler: publish as its NATS user. */
static natsStatus nats_connect_as_scheduler(struct cp *c, natsConnection **nc)
{
    char creds[PATH_MAX];
    struct cp_tls tls;
    if (cp_stack_nats_credentials(&c->st, "scheduler", creds, sizeof(creds)) < 0 ||
        cp_tls_of(c->st.pki_dir, "scheduler", &tls) < 0)
        return NATS_ERR;
    return cp_nats_connect(c->st.nats_url, creds, &tls.files, NULL, NULL, nc);
}

static int events(struct cp *c)
{
    struct bench_report *r = c->ctx->report;
    int rc = 0;
    c->via_rest = true;
    for (int w = 0; w < CP_STORM_SANDBOXES; w++)
        if (create(c, w, 0) < 0)
            rc = -1;
    struct event_reader e;
    if (rc == 0 && events_open(c, &e) == 0) {
        fprintf(stderr, "bench: events of pause/resume storms\n");
        int want = CP_STORM_SANDBOXES * CP_STORM_CYCLES * 2;
        double t0 = bench_now_ms();
        struct bench_series *cycle = bench_report_series(
            r, "ms", "%d x pause+resume through REST (per sandbox, %d at once)", CP_STORM_CYCLES,
            CP_STORM_SANDBOXES);
        struct bench_op op = { .run = storm, .arg = c };
        if (bench_rounds(&op, CP_STORM_SANDBOXES, 1, cycle) < 0)
            rc = -1;
        int got = events_close(&e, want);
        events_rate(r, &e, got, want, t0, "lifecycle events delivered on /v1/events",
                    "as fast as the transitions happen (bounded by them)");
    } else {
        rc = -1;
    }
    for (int w = 0; w < CP_STORM_SANDBOXES; w++)
        if (delete(c, w, 0) < 0)
            rc = -1;

    /* The relay's own capacity: events published straight to NATS. */
    natsConnection *nc = NULL;
    if (nats_connect_as_scheduler(c, &nc) != NATS_OK || events_open(c, &e) < 0) {
        natsConnection_Destroy(nc);
        return -1;
    }
    fprintf(stderr, "bench: %d events published to NATS, relayed as SSE\n", CP_SYNTHETIC_EVENTS);
    char subject[128];
    snprintf(subject, sizeof(subject), "airlock.events.%s", c->project);
    double t0 = bench_now_ms();
    for (int i = 0; i < CP_SYNTHETIC_EVENTS; i++)
        natsConnection_PublishString(nc, subject,
                                     "{\"id\":\"sb_bench\",\"state\":\"paused\","
                                     "\"previous\":\"running\",\"at\":\"2026-01-01T00:00:00Z\"}");
    natsConnection_Flush(nc);
    int got = events_close(&e, CP_SYNTHETIC_EVENTS);
    events_rate(r, &e, got, CP_SYNTHETIC_EVENTS, t0, "events relayed NATS → SSE (capacity)",
                "core NATS: a slow consumer may drop");
    natsConnection_Destroy(nc);
    return rc;
}

/* ---- the section ---- */

static int project_key(struct cp *c)
{
    return bench_rest_project(c->st.gateway_url, c->st.admin_key, &c->rest, c->project,
                              sizeof(c->project));
}

/* ---- what mutual TLS between the services costs ---- */

static void tls_added(struct bench_report *r, const char *what, const struct bench_series *tls,
                      const struct bench_series *plain, const char *target)
{
    struct bench_series *added = bench_report_series(r, "ms", "  └ mutual TLS adds per %s", what);
    if (tls && tls->n && plain->n)
        bench_series_add(added, bench_series_percentile(tls, 50) -
                                    bench_series_percentile(plain, 50));
    bench_series_note(added, target);
}

/* The pooled creates at concurrency 1 and the execs again, on a stack
 * whose services speak gRPC and NATS without TLS (made anew: the section's own
 * stack runs with it, as make up does), beside the same with TLS. */
static int plaintext_comparison(struct cp *c, const struct cp_stack_options *with_tls,
                                const struct bench_series *tls_creates,
                                const struct bench_series *tls_execs, int total)
{
    struct bench_report *r = c->ctx->report;
    for (int i = 0; i < CP_MAX_WORKERS; i++)
        http_conn_close(&c->conns[i]);
    struct cp_stack_options plain = *with_tls;
    plain.plaintext = true;
    fprintf(stderr, "bench: the same without internal TLS\n");
    if (cp_stack_stop(&c->st) < 0 || cp_stack_start(&c->st, &plain) != 0 || project_key(c) < 0)
        return -1;
    c->via_rest = true;
    c->wait_pool = true;
    c->seq++;
    struct bench_series *creates_plain = bench_report_series(
        r, "ms", "POST /v1/sandboxes → 201 running, concurrency 1, internal TLS off");
    struct bench_op create_op = { .before = wait_pool, .run = create, .after = delete, .arg = c };
    int rc = bench_rounds(&create_op, 1, total, creates_plain);
    tls_added(r, "create", tls_creates, creates_plain,
              "median with TLS minus without (target <= 1 ms at concurrency 1)");
    c->wait_pool = false;
    if (create(c, 0, 0) < 0)
        return -1;
    struct bench_series *execs_plain =
        bench_report_series(r, "ms", "exec `true` through the gateway, internal TLS off");
    struct bench_op exec_op = { .run = exec_rest, .arg = c };
    if (bench_rounds(&exec_op, 1, CP_EXECS, execs_plain) < 0)
        rc = -1;
    tls_added(r, "exec", tls_execs, execs_plain, "median with TLS minus without");
    if (delete(c, 0, 0) < 0)
        rc = -1;
    return rc;
}

int bench_section_controlplane(struct bench_ctx *ctx)
{
    ctx->report->section = "control plane: gateway → scheduler → NATS → vmhost";
    struct cp *c = calloc(1, sizeof(*c));
    if (!c)
        return -1;
    c->ctx = ctx; /* calloc: c->conns have no connection open yet */
    pthread_mutex_init(&c->timed_lock, NULL);
    /* 32 creates at once beside the pool: the node's budget
     * (node_budget.h) is not what this measures. */
    const char *const vmhost_args[] = { "--warm-pool", CP_POOL, "--max-sandboxes", "80",
                                        "--node-cpus", "80", "--cpu-overcommit", "1",
                                        "--memory-overcommit", "4", NULL };
    const struct cp_stack_options opts = { .vmhost_args = vmhost_args };
    int started = cp_stack_start(&c->st, &opts);
    int rc = started == 0 && project_key(c) == 0 ? 0 : -1;
    int total = bench_env_count("AIRLOCK_BENCH_CP_CREATES", 200);
    int direct = bench_env_count("AIRLOCK_BENCH_CP_DIRECT", 40);
    struct bench_series *tls_creates = NULL, *tls_execs = NULL;
    if (rc == 0) {
        /* As many as without pool: with 20, the median of a few ms moved
         * by more than a millisecond from run to run. */
        c->wait_pool = true;
        tls_creates = creates(c, true, 1, total, &rc);
        creates(c, false, 1, direct, &rc);
        c->wait_pool = false;
        if (set_pool(c, 0) < 0)
            rc = -1;
        static const int levels[] = { 1, 8, 32 };
        for (size_t i = 0; rc == 0 && i < sizeof(levels) / sizeof(*levels); i++) {
            creates(c, true, levels[i], total, &rc);
            creates(c, false, levels[i], direct < levels[i] ? levels[i] : direct, &rc);
        }
        if (execs(c, &tls_execs) < 0 || events(c) < 0)
            rc = -1;
        if (rc == 0 && plaintext_comparison(c, &opts, tls_creates, tls_execs, total) < 0)
            rc = -1;
    }
    if (started == 77) {
        bench_series_note(bench_report_series(ctx->report, "ms", "not measured"),
                          "PostgreSQL or nats-server is not installed");
        rc = 0;
    }
    for (int i = 0; i < CP_MAX_WORKERS; i++)
        http_conn_close(&c->conns[i]);
    if (cp_stack_stop(&c->st) < 0)
        rc = -1;
    pthread_mutex_destroy(&c->timed_lock);
    free(c);
    return rc;
}
