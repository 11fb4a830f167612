#include "bench_rest.h"

#include <stdio.h>
#include <string.h>

#include "strbuf.h"

int bench_rest_init(struct bench_rest *r, const char *url, const char *key)
{
    char err[256];
    if (http_target_parse(url, &r->target, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench: gateway URL %s: %s\n", url, err);
        return -1;
    }
    snprintf(r->auth, sizeof(r->auth), "Authorization: Bearer %s", key);
    return 0;
}

static int send_request(const struct bench_rest *r, struct http_conn *conn,
                        struct http_request *req, const char *extra, struct http_response *resp)
{
    const char *headers[] = { r->auth, extra, NULL };
    req->headers = headers;
    char err[256];
    int rc = conn ? http_send_on(conn, &r->target, req, resp, err, sizeof(err))
                  : http_send(&r->target, req, resp, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "bench: %s %s: %s\n", req->method, req->path, err);
        return -1;
    }
    return 0;
}

int bench_rest_call(const struct bench_rest *r, struct http_conn *conn, const char *method,
                    const char *path, const char *body, json_t **out)
{
    *out = NULL;
    struct http_request req = { .method = method, .path = path, .body = body,
                                .body_len = body ? strlen(body) : 0, .body_fd = -1 };
    struct http_response resp;
    if (send_request(r, conn, &req, body ? "Content-Type: application/json" : NULL, &resp) < 0)
        return -1;
    struct strbuf answer = { 0 };
    int rc = -1;
    if (http_read_all(&resp, &answer) == 0) {
        rc = resp.status;
        if (answer.len)
            *out = json_loadb(answer.data, answer.len, 0, NULL);
    }
    strbuf_free(&answer);
    http_close(&resp);
    return rc;
}

int bench_rest_open_sse(const struct bench_rest *r, const char *path, struct http_response *resp)
{
    struct http_request req = { .method = "GET", .path = path, .body_fd = -1 };
    if (send_request(r, NULL, &req, "Accept: text/event-stream", resp) < 0)
        return -1;
    if (resp->status == 200)
        return 0;
    fprintf(stderr, "bench: GET %s answered %d\n", path, resp->status);
    http_close(resp);
    return -1;
}

int bench_rest_project(const char *url, const char *admin_key, struct bench_rest *r, char *project,
                       size_t projectlen)
{
    struct bench_rest admin;
    json_t *p = NULL, *k = NULL;
    int rc = -1;
    if (bench_rest_init(&admin, url, admin_key) < 0 ||
        bench_rest_call(&admin, NULL, "POST", "/v1/projects", "{\"name\":\"bench\"}", &p) != 201)
        goto out;
    const char *id = json_string_value(json_object_get(p, "id"));
    char path[160];
    snprintf(path, sizeof(path), "/v1/projects/%s/keys", id ? id : "");
    if (!id || bench_rest_call(&admin, NULL, "POST", path, "{}", &k) != 201)
        goto out;
    const char *key = json_string_value(json_object_get(k, "key"));
    snprintf(project, projectlen, "%s", id);
    if (key && bench_rest_init(r, url, key) == 0)
        rc = 0;
out:
    if (rc < 0)
        fprintf(stderr, "bench: cannot make a project and key\n");
    json_decref(p);
    json_decref(k);
    return rc;
}

int bench_http_do(const struct http_target *t, struct http_conn *conn, const char *method,
                  const char *path, const char *const *headers, const void *body, size_t len,
                  long *got)
{
    struct http_request req = { .method = method, .path = path, .headers = headers,
                                .body = body, .body_len = len, .body_fd = -1 };
    struct http_response resp;
    char err[256], buf[65536];
    int rc = conn ? http_send_on(conn, t, &req, &resp, err, sizeof(err))
                  : http_send(t, &req, &resp, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "bench: %s %s: %s\n", method, path, err);
        return -1;
    }
    *got = 0;
    ssize_t n;
    while ((n = http_read_body(&resp, buf, sizeof(buf))) > 0)
        *got += n;
    int status = resp.status;
    http_close(&resp);
    if (n < 0) {
        fprintf(stderr, "bench: %s %s: the answer broke off\n", method, path);
        return -1;
    }
    return status;
}
