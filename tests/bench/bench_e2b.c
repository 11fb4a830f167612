/* Section "e2b": the E2B-compatible path (docs/e2b.md: envd's API served
 * by the gateway) beside airlock's own REST API, on the whole stack
 * (cp_stack.h) and one sandbox:
 *
 *   an exec round trip: `true` through REST's exec (JSON) and through
 *     envd's process.Process/Start stream (AIRLOCK_BENCH_E2B_EXECS each,
 *     default 100);
 *   a 64 MiB file round trip, written then read back: REST's PUT and GET
 *     /v1/sandboxes/{id}/files and envd's multipart POST and GET /files
 *     (AIRLOCK_BENCH_E2B_FILES each, default 3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_rest.h"
#include "cp_stack.h"

#define E2B_FILE_BYTES (64u << 20)
#define E2B_BOUNDARY "airlock-bench-boundary"

struct e2b {
    struct cp_stack st;
    struct bench_rest rest;
    char project[64];
    char sandbox[64];
    char key_header[128];      /* X-Access-Token: e2b_<hex> */
    char id_header[128];       /* E2b-Sandbox-Id: <id> */
    char *file;                /* E2B_FILE_BYTES */
    char *multipart;           /* the file as envd's upload form */
    size_t multipart_len;
};

static int rest_exec(struct e2b *b)
{
    char path[128];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/exec", b->sandbox);
    json_t *out = NULL;
    int st = bench_rest_call(&b->rest, NULL, "POST", path, "{\"cmd\":[\"true\"]}", &out);
    int ok = st == 200 && json_integer_value(json_object_get(out, "exit_code")) == 0;
    json_decref(out);
    return ok ? 0 : -1;
}

static int envd_exec(struct e2b *b)
{
    static const char msg[] = "{\"process\":{\"cmd\":\"/bin/true\"}}";
    char body[64];
    size_t n = sizeof(msg) - 1;
    body[0] = 0; /* a Connect envelope: flags, then the length, big-endian */
    body[1] = (char)(n >> 24);
    body[2] = (char)(n >> 16);
    body[3] = (char)(n >> 8);
    body[4] = (char)n;
    memcpy(body + 5, msg, n);
    const char *headers[] = { b->id_header, "E2b-Sandbox-Port: 49983", b->key_header,
                              "Content-Type: application/connect+json", NULL };
    long got;
    int st = bench_http_do(&b->rest.target, NULL, "POST", "/process.Process/Start", headers, body,
                           n + 5, &got);
    return st == 200 && got > 0 ? 0 : -1;
}

static int rest_file(struct e2b *b)
{
    char path[160];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/files?path=/tmp/bench.bin", b->sandbox);
    const char *headers[] = { b->rest.auth, NULL };
    long got;
    if (bench_http_do(&b->rest.target, NULL, "PUT", path, headers, b->file, E2B_FILE_BYTES,
                      &got) != 204 ||
        bench_http_do(&b->rest.target, NULL, "GET", path, headers, NULL, 0, &got) != 200)
        return -1;
    return got == E2B_FILE_BYTES ? 0 : -1;
}

static int envd_file(struct e2b *b)
{
    const char *up[] = { b->id_header, "E2b-Sandbox-Port: 49983", b->key_header,
                         "Content-Type: multipart/form-data; boundary=" E2B_BOUNDARY, NULL };
    const char *down[] = { b->id_header, "E2b-Sandbox-Port: 49983", b->key_header, NULL };
    long got;
    if (bench_http_do(&b->rest.target, NULL, "POST", "/files?path=/tmp/bench-e2b.bin", up,
                      b->multipart, b->multipart_len, &got) != 200 ||
        bench_http_do(&b->rest.target, NULL, "GET", "/files?path=/tmp/bench-e2b.bin", down, NULL,
                      0, &got) != 200)
        return -1;
    return got == E2B_FILE_BYTES ? 0 : -1;
}

static int timed(struct bench_ctx *ctx, struct e2b *b, int (*op)(struct e2b *), int n,
                 const char *what)
{
    struct bench_series *s = bench_report_series(ctx->report, "ms", "%s", what);
    for (int i = 0; i < n; i++) {
        double t = bench_now_ms();
        if (op(b) < 0) {
            bench_series_note(s, "failed");
            return -1;
        }
        bench_series_add(s, bench_now_ms() - t);
    }
    return 0;
}

static int prepare(struct e2b *b)
{
    if (bench_rest_project(b->st.gateway_url, b->st.admin_key, &b->rest, b->project,
                           sizeof(b->project)) < 0)
        return -1;
    json_t *sb = NULL;
    int st = bench_rest_call(&b->rest, NULL, "POST", "/v1/sandboxes", "{}", &sb);
    const char *id = json_string_value(json_object_get(sb, "id"));
    if (st == 201 && id) {
        snprintf(b->sandbox, sizeof(b->sandbox), "%s", id);
        snprintf(b->id_header, sizeof(b->id_header), "E2b-Sandbox-Id: %s", id);
    }
    json_decref(sb);
    /* "Authorization: Bearer ak_<hex>" → "X-Access-Token: e2b_<hex>" */
    const char *hex = strstr(b->rest.auth, "ak_");
    snprintf(b->key_header, sizeof(b->key_header), "X-Access-Token: e2b_%s", hex ? hex + 3 : "");
    b->file = malloc(E2B_FILE_BYTES);
    static const char head[] = "--" E2B_BOUNDARY "\r\nContent-Disposition: form-data; "
                               "name=\"file\"; filename=\"bench-e2b.bin\"\r\n"
                               "Content-Type: application/octet-stream\r\n\r\n";
    static const char tail[] = "\r\n--" E2B_BOUNDARY "--\r\n";
    b->multipart_len = sizeof(head) - 1 + E2B_FILE_BYTES + sizeof(tail) - 1;
    b->multipart = malloc(b->multipart_len);
    if (!b->sandbox[0] || !hex || !b->file || !b->multipart)
        return -1;
    for (size_t i = 0; i < E2B_FILE_BYTES; i++)
        b->file[i] = (char)(i * 131 + (i >> 12));
    memcpy(b->multipart, head, sizeof(head) - 1);
    memcpy(b->multipart + sizeof(head) - 1, b->file, E2B_FILE_BYTES);
    memcpy(b->multipart + sizeof(head) - 1 + E2B_FILE_BYTES, tail, sizeof(tail) - 1);
    return 0;
}

int bench_section_e2b(struct bench_ctx *ctx)
{
    ctx->report->section = "E2B-compatible path against airlock's own REST API";
    struct e2b *b = calloc(1, sizeof(*b));
    if (!b)
        return -1;
    const struct cp_stack_options opts = { 0 };
    int started = cp_stack_start(&b->st, &opts);
    int rc = 0;
    int execs = bench_env_count("AIRLOCK_BENCH_E2B_EXECS", 100);
    int files = bench_env_count("AIRLOCK_BENCH_E2B_FILES", 3);
    if (started == 77) {
        bench_series_note(bench_report_series(ctx->report, "ms", "not measured"),
                          "PostgreSQL or nats-server is not installed");
    } else if (started != 0 || prepare(b) < 0 ||
               timed(ctx, b, rest_exec, execs, "exec `true`: REST POST …/exec (JSON)") < 0 ||
               timed(ctx, b, envd_exec, execs, "exec `true`: E2B envd process.Process/Start") < 0 ||
               timed(ctx, b, rest_file, files, "64 MiB written and read: REST PUT + GET …/files") <
                   0 ||
               timed(ctx, b, envd_file, files,
                     "64 MiB written and read: E2B envd POST (multipart) + GET /files") < 0) {
        rc = -1;
    }
    if (started != 77 && cp_stack_stop(&b->st) < 0)
        rc = -1;
    free(b->file);
    free(b->multipart);
    free(b);
    return rc;
}
