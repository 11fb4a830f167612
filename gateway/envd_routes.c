/* envd's route table, how a request is recognised as envd's, its
 * authentication, and the three error shapes of its calls. */
#include "envd_routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect_protocol.h"
#include "e2b_key.h"
#include "json_input.h"
#include "reply.h"
#include "sandbox_access.h"
#include "vmhost.pb-c.h"

#define CONNECT(service, method, handle) \
    { "POST", "/" service "/" method, GW_AUTH_KEY, handle, NULL, NULL, NULL }
#define PROCESS "process.Process"
#define FILESYSTEM "filesystem.Filesystem"

const struct gw_route envd_routes[] = {
    CONNECT(PROCESS, "Start", envd_process_start),
    CONNECT(PROCESS, "Connect", envd_process_connect),
    CONNECT(PROCESS, "List", envd_process_list),
    CONNECT(PROCESS, "SendInput", envd_process_send_input),
    /* Client streaming: Connect over HTTP/1.1 sends the whole request
     * body before any answer, so it cannot feed a process as it types;
     * the SDK sends input with SendInput. */
    CONNECT(PROCESS, "StreamInput", envd_unimplemented),
    CONNECT(PROCESS, "SendSignal", envd_process_send_signal),
    CONNECT(PROCESS, "Update", envd_process_update),
    CONNECT(PROCESS, "CloseStdin", envd_process_close_stdin),
    CONNECT(FILESYSTEM, "Stat", envd_fs_stat),
    CONNECT(FILESYSTEM, "ListDir", envd_fs_list_dir),
    CONNECT(FILESYSTEM, "MakeDir", envd_fs_make_dir),
    CONNECT(FILESYSTEM, "Move", envd_fs_move),
    CONNECT(FILESYSTEM, "Remove", envd_fs_remove),
    CONNECT(FILESYSTEM, "WatchDir", envd_fs_watch_dir),
    CONNECT(FILESYSTEM, "CreateWatcher", envd_unimplemented),
    CONNECT(FILESYSTEM, "GetWatcherEvents", envd_unimplemented),
    CONNECT(FILESYSTEM, "RemoveWatcher", envd_unimplemented),
    { "GET", "/health", GW_AUTH_KEY, envd_health, NULL, NULL, NULL },
    { "GET", "/files", GW_AUTH_KEY, envd_files_get, NULL, NULL, NULL },
    /* multipart/form-data (or a raw body), streamed to vmhost WriteFile. */
    { "POST", "/files", GW_AUTH_KEY, envd_files_post, envd_files_post_begin,
      envd_files_post_chunk, envd_files_post_cleanup },
};

const size_t envd_routes_count = sizeof(envd_routes) / sizeof(*envd_routes);

/* Whether r is a Connect call, and a streaming one. */
static bool is_connect(const struct gw_request *r)
{
    return strncmp(r->envd_path, "/" PROCESS "/", sizeof(PROCESS) + 1) == 0 ||
           strncmp(r->envd_path, "/" FILESYSTEM "/", sizeof(FILESYSTEM) + 1) == 0;
}

static bool is_stream(const struct gw_request *r)
{
    const char *type = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
    return type && strncmp(type, CONNECT_STREAM_TYPE, strlen(CONNECT_STREAM_TYPE)) == 0;
}

/* The sandbox id of an envd request into id: from E2B's headers, or from
 * a Host 49983-<id>.<public domain>. False when r is not envd's. */
static bool envd_sandbox_id(struct gw_request *r, char *id, size_t idlen)
{
    const char *sid = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "E2b-Sandbox-Id");
    const char *port = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "E2b-Sandbox-Port");
    if (sid && port) {
        if (strcmp(port, ENVD_PORT) != 0)
            return false; /* another port of the sandbox: not envd */
        snprintf(id, idlen, "%s", sid);
        return true;
    }
    const char *host = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Host");
    const char *domain = r->gw->cfg.public_domain;
    if (!host || !domain || strncmp(host, ENVD_PORT "-", sizeof(ENVD_PORT)) != 0)
        return false;
    const char *start = host + sizeof(ENVD_PORT);
    const char *dot = strchr(start, '.');
    if (!dot)
        return false;
    size_t dlen = strlen(domain);
    const char *rest = dot + 1;
    if (strncmp(rest, domain, dlen) != 0 || (rest[dlen] != '\0' && rest[dlen] != ':'))
        return false;
    snprintf(id, idlen, "%.*s", (int)(dot - start), start);
    return true;
}

void envd_fail(struct gw_request *r, const struct airlock_error *e)
{
    gw_request_fail(r, connect_http_status(e->class), connect_code_name(e->class), "%s",
                    e->message);
}

/* X-Access-Token as gw_authenticate takes it ("Bearer ak_…"); then the
 * gateway's key check and rate limit. */
static void envd_authenticate(struct gw_request *r)
{
    const char *token = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Access-Token");
    char bearer[160] = "";
    struct airlock_error e;
    if (token && strncmp(token, E2B_KEY_PREFIX, strlen(E2B_KEY_PREFIX)) == 0) {
        if (e2b_key_bearer(token, bearer, sizeof(bearer)) < 0)
            bearer[0] = '\0';
    } else if (token && strncmp(token, AIRLOCK_KEY_PREFIX, strlen(AIRLOCK_KEY_PREFIX)) == 0) {
        snprintf(bearer, sizeof(bearer), "Bearer %.140s", token);
    }
    struct key_principal p;
    char why[256];
    if (!bearer[0]) {
        airlock_error_set(&e, AIRLOCK_ERR_UNAUTHENTICATED,
                          token ? "X-Access-Token is not an API key (e2b_<hex> or ak_<hex>)"
                                : "missing X-Access-Token header: an API key of the sandbox's "
                                  "project (e2b_<hex> or ak_<hex>)");
        envd_fail(r, &e);
    } else if (gw_authenticate(r->gw, bearer, "", &p, &e) < 0) {
        envd_fail(r, &e);
    } else if (rate_limit_take(&r->gw->rates, p.key_id, &r->retry_after_s, why, sizeof(why)) < 0) {
        airlock_error_set(&e, AIRLOCK_ERR_CAPACITY, "%s", why);
        envd_fail(r, &e);
    } else {
        snprintf(r->key_id, sizeof(r->key_id), "%s", p.key_id);
        snprintf(r->project_id, sizeof(r->project_id), "%s", p.project_id);
        r->admin = p.admin;
    }
}

bool envd_request_begin(struct gw_request *r, const char *method, const char *url)
{
    if (!envd_sandbox_id(r, r->path_id, sizeof(r->path_id)))
        return false;
    snprintf(r->envd_path, sizeof(r->envd_path), "%s", url);
    struct airlock_error e;
    bool path_known = false;
    for (size_t i = 0; i < envd_routes_count && !r->route; i++) {
        if (strcmp(envd_routes[i].pattern, url) != 0)
            continue;
        path_known = true;
        if (strcmp(envd_routes[i].method, method) == 0)
            r->route = &envd_routes[i];
    }
    if (!r->route) {
        if (is_connect(r))
            airlock_error_set(&e, AIRLOCK_ERR_UNIMPLEMENTED,
                              "%s %s is not a method of envd's API served here", method, url);
        else if (path_known)
            airlock_error_set(&e, AIRLOCK_ERR_INVALID, "method %s is not allowed on %s", method,
                              url);
        else
            airlock_error_set(&e, AIRLOCK_ERR_NOT_FOUND, "envd has no route %s %s", method, url);
        envd_fail(r, &e);
        return true;
    }
    if (gw_id_check(r->path_id, &e) < 0) {
        envd_fail(r, &e);
        return true;
    }
    envd_authenticate(r);
    if (!r->pending_status && r->route->upload_begin)
        r->route->upload_begin(r);
    return true;
}

/* The error (code: Connect's name, status: its HTTP status) in r's
 * shape. */
static enum MHD_Result reply_shaped(struct gw_request *r, unsigned status, const char *code,
                                    const char *message)
{
    if (is_connect(r) && is_stream(r)) {
        struct strbuf out = { 0 };
        connect_end_stream(&out, code, message);
        struct MHD_Response *resp = MHD_create_response_from_buffer(
            out.len, out.data ? out.data : "", MHD_RESPMEM_MUST_COPY);
        strbuf_free(&out);
        if (resp)
            MHD_add_response_header(resp, "Content-Type", CONNECT_STREAM_TYPE);
        return reply_queue(r, 200, resp);
    }
    json_t *body = is_connect(r) ? connect_error_json(code, message)
                                 : json_pack("{s:i,s:s}", "code", (int)status, "message", message);
    return reply_json(r, status, body);
}

enum MHD_Result envd_reply_pending(struct gw_request *r)
{
    return reply_shaped(r, r->pending_status, r->pending_code, r->pending_message);
}

enum MHD_Result envd_reply_error(struct gw_request *r, const struct airlock_error *e)
{
    return reply_shaped(r, connect_http_status(e->class), connect_code_name(e->class), e->message);
}

enum MHD_Result envd_reply_message(struct gw_request *r, json_t *msg)
{
    return reply_json(r, 200, msg);
}

int envd_request_message(struct gw_request *r, json_t **msg, struct airlock_error *e)
{
    if (is_stream(r))
        return connect_stream_request(r->body.data, r->body.len, msg, e);
    return connect_unary_request(r->body.data, r->body.len, msg, e);
}

void envd_request_user(struct gw_request *r, char *user, size_t userlen)
{
    user[0] = '\0';
    const char *auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
    if (!auth || strncmp(auth, "Basic ", 6) != 0)
        return;
    uint8_t *name = NULL;
    size_t len = 0;
    struct airlock_error e;
    if (json_input_base64(auth + 6, &name, &len, &e) < 0)
        return;
    const uint8_t *colon = memchr(name, ':', len);
    snprintf(user, userlen, "%.*s", (int)(colon ? (size_t)(colon - name) : len), (char *)name);
    free(name);
}

int envd_sandbox(struct gw_request *r, const char *what, Airlock__Scheduler__V1__Sandbox **sb,
                 struct rpc_channel **ch, struct airlock_error *e)
{
    struct gw_caller c = gw_request_caller(r);
    return gw_sandbox_open(r->gw, &c, r->path_id, what, sb, ch, e);
}

int envd_call_begin(struct gw_request *r, const char *what, const struct json_field *fields,
                    size_t n_fields, struct envd_call *c)
{
    memset(c, 0, sizeof(*c));
    if (envd_request_message(r, &c->msg, &c->e) < 0 ||
        (fields && json_input_check(c->msg, fields, n_fields, &c->e) < 0))
        return -1;
    return envd_sandbox(r, what, &c->sb, &c->ch, &c->e);
}

void envd_call_free(struct envd_call *c)
{
    json_decref(c->msg);
    if (c->sb)
        protobuf_c_message_free_unpacked(&c->sb->base, NULL);
    c->msg = NULL;
    c->sb = NULL;
}

enum MHD_Result envd_call_end(struct gw_request *r, struct envd_call *c, json_t *msg)
{
    enum MHD_Result rc = msg ? envd_reply_message(r, msg) : envd_reply_error(r, &c->e);
    envd_call_free(c);
    return rc;
}

int envd_vmhost_empty(struct envd_call *c, const char *method, ProtobufCMessage *req)
{
    ProtobufCMessage *empty = NULL;
    int rc = gw_unary(c->ch, method, req, &airlock__vmhost__v1__empty__descriptor, &empty,
                      GW_SCHEDULER_TIMEOUT_MS, &c->e);
    if (empty)
        protobuf_c_message_free_unpacked(empty, NULL);
    return rc;
}

int envd_string(json_t *obj, const char *name, bool required, const char **out,
                struct airlock_error *e)
{
    *out = json_string_value(json_object_get(obj, name));
    if (required && (!*out || !**out))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: required", name);
    return 0;
}

enum MHD_Result envd_unimplemented(struct gw_request *r)
{
    struct airlock_error e;
    const char *method = strrchr(r->envd_path, '/') + 1;
    if (strncmp(r->envd_path, "/" FILESYSTEM "/", sizeof(FILESYSTEM) + 1) == 0)
        airlock_error_set(&e, AIRLOCK_ERR_UNIMPLEMENTED,
                          "filesystem.Filesystem/%s: polling watchers are not supported; "
                          "watch a directory with WatchDir",
                          method);
    else
        airlock_error_set(&e, AIRLOCK_ERR_UNIMPLEMENTED,
                          "process.Process/%s: client-streaming input is not supported over "
                          "HTTP/1.1; send input with SendInput",
                          method);
    return envd_reply_error(r, &e);
}

/* 204 while the sandbox runs; 502, which the SDK takes for a sandbox
 * that is gone, otherwise. */
enum MHD_Result envd_health(struct gw_request *r)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct rpc_channel *ch;
    struct airlock_error e;
    int rc = envd_sandbox(r, "envd", &sb, &ch, &e);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    if (rc == 0)
        return reply_empty(r, 204);
    if (e.class == AIRLOCK_ERR_STATE || e.class == AIRLOCK_ERR_NOT_FOUND)
        return reply_json(r, 502, json_pack("{s:i,s:s}", "code", 502, "message", e.message));
    return envd_reply_error(r, &e);
}
