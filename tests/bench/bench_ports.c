/* Section "ports": a server in a sandbox (tests/controlplane/
 * ports_guest_server.py, HTTP/1.1) reached through the gateway's ingress
 * by its port URL, beside the same requests made directly to the guest
 * from inside the sandbox's network namespace (what the relay itself
 * dials), on the whole stack (cp_stack.h):
 *
 *   a small GET on a new connection each, and on one kept connection
 *     (AIRLOCK_BENCH_PORT_REQUESTS each, default 200);
 *   a 64 MiB download (AIRLOCK_BENCH_PORT_DOWNLOADS, default 5), in MB/s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_rest.h"
#include "cp_stack.h"
#include "netns.h"
#include "sandbox_netdefs.h"
#include "strbuf.h"

#define PORT_SERVER_PORT 8000
#define PORT_BIG_MB 64
#define PORT_WAIT_TRIES 600

struct ports {
    struct bench_ctx *ctx;
    struct cp_stack st;
    struct bench_rest rest;
    char project[64];
    char sandbox[64];
    struct http_target target; /* the gateway, or the guest */
    char host_header[200];     /* "Host: 8000-<id>.localhost:<port>", or "" directly */
    int requests, downloads;
    struct bench_series *series; /* what run() adds to */
    const char *path;
    bool keep;                   /* one kept connection for the whole series */
    int rc;
};

static int exec_sh(struct ports *p, const char *script)
{
    json_t *body = json_pack("{s:[s,s,s],s:i}", "cmd", "sh", "-c", script, "timeout_s", 300);
    char *text = json_dumps(body, JSON_COMPACT), path[128];
    json_decref(body);
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/exec", p->sandbox);
    json_t *out = NULL;
    int st = bench_rest_call(&p->rest, NULL, "POST", path, text, &out);
    int ok = st == 200 && json_integer_value(json_object_get(out, "exit_code")) == 0;
    if (!ok)
        fprintf(stderr, "bench: exec %s: %d\n", script, st);
    free(text);
    json_decref(out);
    return ok ? 0 : -1;
}

/* The sandbox with the server listening: public ports, so the numbers are
 * the relay's and not a token check's. */
static int sandbox_serving(struct ports *p)
{
    json_t *sb = NULL;
    if (bench_rest_call(&p->rest, NULL, "POST", "/v1/sandboxes", "{\"public_ports\":true}", &sb) !=
        201) {
        json_decref(sb);
        return -1;
    }
    snprintf(p->sandbox, sizeof(p->sandbox), "%s", json_string_value(json_object_get(sb, "id")));
    json_decref(sb);
    FILE *f = fopen(AIRLOCK_PORTS_SERVER, "re");
    struct strbuf code = { 0 };
    char buf[4096];
    for (size_t n; f && (n = fread(buf, 1, sizeof(buf), f)) > 0;)
        strbuf_append_n(&code, buf, n);
    if (f)
        fclose(f);
    char path[160];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/files?path=/srv/server.py", p->sandbox);
    json_t *out = NULL;
    int put = code.len ? bench_rest_call(&p->rest, NULL, "PUT", path, code.data, &out) : -1;
    strbuf_free(&code);
    json_decref(out);
    char script[128];
    snprintf(script, sizeof(script), "echo hello > /srv/small && head -c %dM /dev/zero > /srv/big",
             PORT_BIG_MB);
    if (put != 204 || exec_sh(p, script) < 0)
        return -1;
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/processes", p->sandbox);
    if (bench_rest_call(&p->rest, NULL, "POST", path,
                        "{\"cmd\":[\"python3\",\"/srv/server.py\",\"8000\"]}", &out) != 201) {
        json_decref(out);
        return -1;
    }
    json_decref(out);
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/ports", p->sandbox);
    for (int i = 0; i < PORT_WAIT_TRIES; i++) {
        bool up = bench_rest_call(&p->rest, NULL, "GET", path, NULL, &out) == 200 &&
                  json_array_size(json_object_get(out, "ports")) > 0;
        json_decref(out);
        if (up)
            return 0;
        usleep(100000);
    }
    return -1;
}

/* One GET of p->path read to its end; the bytes read, or -1. */
static long get_once(struct ports *p, struct http_conn *conn)
{
    const char *headers[] = { p->host_header[0] ? p->host_header : NULL, NULL };
    long got;
    int status = bench_http_do(&p->target, conn, "GET", p->path, headers, NULL, 0, &got);
    return status == 200 ? got : -1;
}

/* The series of p (requests: ms each; downloads: MB/s each), here or on a
 * thread inside the sandbox's namespace (netns_run). */
static int run_series(void *arg)
{
    struct ports *p = arg;
    struct http_conn conn = { 0 };
    bool download = strcmp(p->path, "/file/big") == 0;
    int n = download ? p->downloads : p->requests;
    for (int i = 0; i < n; i++) {
        double t = bench_now_ms();
        long got = get_once(p, p->keep ? &conn : NULL);
        double ms = bench_now_ms() - t;
        if (got < 0) {
            p->rc = -1;
            break;
        }
        bench_series_add(p->series, download ? (double)got / (1 << 20) / (ms / 1000) : ms);
    }
    http_conn_close(&conn);
    return 0;
}

static void measure(struct ports *p, bool via_gateway, const char *path, bool keep,
                    const char *label, const char *unit)
{
    char err[256], ns[256], url[128];
    p->path = path;
    p->keep = keep;
    p->series = bench_report_series(p->ctx->report, unit, "%s: %s", label,
                                    via_gateway ? "port URL (gateway → vmhost → guest)"
                                                : "direct (in the sandbox's namespace)");
    if (via_gateway) {
        http_target_parse(p->st.gateway_url, &p->target, err, sizeof(err));
        snprintf(p->host_header, sizeof(p->host_header), "Host: %d-%s.localhost:%s",
                 PORT_SERVER_PORT, p->sandbox, strrchr(p->st.gateway_url, ':') + 1);
        run_series(p);
        return;
    }
    snprintf(url, sizeof(url), "http://%s:%d", SANDBOX_NET_GUEST_ADDR, PORT_SERVER_PORT);
    http_target_parse(url, &p->target, err, sizeof(err));
    p->host_header[0] = 0;
    snprintf(ns, sizeof(ns), "%s/%s%s", NETNS_RUN_DIR, SANDBOX_NET_NS_PREFIX, p->sandbox);
    if (netns_run(ns, run_series, p, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench: %s\n", err);
        p->rc = -1;
    }
}

int bench_section_ports(struct bench_ctx *ctx)
{
    ctx->report->section = "ports: a guest's HTTP server through the gateway";
    struct ports *p = calloc(1, sizeof(*p));
    if (!p)
        return -1;
    p->ctx = ctx;
    p->requests = bench_env_count("AIRLOCK_BENCH_PORT_REQUESTS", 200);
    p->downloads = bench_env_count("AIRLOCK_BENCH_PORT_DOWNLOADS", 5);
    const struct cp_stack_options opts = { 0 };
    int started = cp_stack_start(&p->st, &opts);
    if (started == 77) {
        bench_series_note(bench_report_series(ctx->report, "ms", "not measured"),
                          "PostgreSQL or nats-server is not installed");
    } else if (started != 0 ||
               bench_rest_project(p->st.gateway_url, p->st.admin_key, &p->rest, p->project,
                                  sizeof(p->project)) < 0 ||
               sandbox_serving(p) < 0) {
        p->rc = -1;
    } else {
        static const struct {
            const char *path, *label, *unit;
            bool keep;
        } rows[] = {
            { "/file/small", "GET 6 B, a new connection each", "ms", false },
            { "/file/small", "GET 6 B, one kept connection", "ms", true },
            { "/file/big", "GET 64 MiB, throughput", "MB/s", false },
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(*rows) && p->rc == 0; i++) {
            measure(p, true, rows[i].path, rows[i].keep, rows[i].label, rows[i].unit);
            measure(p, false, rows[i].path, rows[i].keep, rows[i].label, rows[i].unit);
        }
    }
    int rc = p->rc;
    if (started != 77 && cp_stack_stop(&p->st) < 0)
        rc = -1;
    free(p);
    return rc;
}
