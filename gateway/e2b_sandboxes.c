/* E2B's sandbox routes (docs/e2b.md): create, get, kill, pause, resume,
 * connect, timeout, refreshes, as scheduler calls of sandbox_access.c.
 * E2B's "paused" is airlock's suspended (memory on disk, kept until
 * deleted); its timeout a deadline of the scheduler's
 * (SetSandboxTimeout). */
#include <stdlib.h>
#include <string.h>

#include "e2b_convert.h"
#include "e2b_reply.h"
#include "e2b_routes.h"
#include "json_input.h"
#include "reply.h"
#include "sandbox_access.h"
#include "string_map_json.h"
#include "volume_json.h"

/* E2B's default timeout of a create or resume without one. */
#define E2B_DEFAULT_TIMEOUT_S 15

static int sandbox_call(struct gw_request *r, const char *method, Sandbox **sb,
                        struct airlock_error *e)
{
    struct gw_caller caller = gw_request_caller(r);
    return gw_sandbox_ref_call(r->gw, &caller, method, r->path_id,
                               &airlock__scheduler__v1__sandbox__descriptor,
                               (ProtobufCMessage **)sb, e);
}

static int set_timeout(struct gw_request *r, uint64_t timeout_s, bool extend_only,
                       struct airlock_error *e)
{
    struct gw_caller caller = gw_request_caller(r);
    Airlock__Scheduler__V1__SetSandboxTimeoutRequest req =
        AIRLOCK__SCHEDULER__V1__SET_SANDBOX_TIMEOUT_REQUEST__INIT;
    GW_CALLER_FILL(req, &caller);
    req.id = r->path_id;
    req.timeout_s = (uint32_t)timeout_s;
    req.extend_only = extend_only;
    Sandbox *sb = NULL;
    int rc = gw_unary(r->gw->scheduler, SCHEDULER_METHOD("SetSandboxTimeout"), &req.base,
                      &airlock__scheduler__v1__sandbox__descriptor, (ProtobufCMessage **)&sb,
                      GW_SCHEDULER_TIMEOUT_MS, e);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

/* The body, its fields all listed; NULL after answering 400. */
static json_t *body_parse(struct gw_request *r, const struct json_field *fields, size_t n,
                          enum MHD_Result *rc)
{
    json_t *body;
    struct airlock_error e;
    if (json_input_parse(r->body.data, r->body.len, fields, n, &body, &e) < 0) {
        *rc = e2b_reply_airlock_error(r, &e);
        return NULL;
    }
    return body;
}

/* A timeout field (seconds), `fallback` when absent; -1 with e when
 * required and absent, or out of range. */
static int timeout_field(json_t *body, const char *name, uint64_t min, uint64_t max,
                         uint64_t fallback, uint64_t *out, struct airlock_error *e)
{
    if (fallback == 0 && !json_object_get(body, name))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: required (seconds)", name);
    if (json_input_uint(body, name, max, fallback, out, e) < 0)
        return -1;
    if (*out < min)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: must be at least %llu", name,
                                 (unsigned long long)min);
    return 0;
}

/* memory: false asks for a filesystem-only pause or resume, which
 * airlock does not make. */
static int memory_supported(json_t *body, struct airlock_error *e)
{
    json_t *memory = json_object_get(body, "memory");
    if (memory && !json_is_true(memory))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "memory: false (a filesystem-only snapshot) is not supported");
    return 0;
}

static enum MHD_Result reply_sandbox(struct gw_request *r, unsigned status, Sandbox *sb)
{
    const char *key = e2b_request_key(r->conn);
    enum MHD_Result rc = reply_json(
        r, status, e2b_sandbox_json(sb, r->gw->cfg.public_domain, key ? key : ""));
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

/* Fields of a create that would change what the sandbox is or does and
 * that airlock has no counterpart for: each refused by name. */
static int create_unsupported(json_t *body, struct airlock_error *e)
{
    json_t *v;
    if (!json_object_get(body, "templateID"))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "templateID: required");
    if ((v = json_object_get(body, "autoPauseMemory")) && !json_is_true(v))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "autoPauseMemory: false (a filesystem-only pause) is not supported");
    if ((v = json_object_get(body, "autoResume")) && json_is_true(json_object_get(v, "enabled")))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "autoResume is not supported: resume a paused sandbox with connect");
    const char *key;
    json_t *value;
    json_object_foreach(json_object_get(body, "network"), key, value) {
        if (strcmp(key, "allowPublicTraffic") != 0)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "network.%s is not supported: allow_internet_access is", key);
        if (!json_is_boolean(value))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "network.allowPublicTraffic: must be true or false");
    }
    static const char *const refused[] = { "mcp", "iam" };
    for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
        if ((v = json_object_get(body, refused[i])) && !json_is_null(v))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s is not supported", refused[i]);
    return 0;
}

enum MHD_Result e2b_sandbox_create(struct gw_request *r)
{
    static const struct json_field fields[] = {
        { "templateID", JF_STRING },       { "timeout", JF_UINT },
        { "autoPause", JF_BOOL },          { "autoPauseMemory", JF_BOOL },
        { "autoResume", JF_OBJECT },       { "secure", JF_BOOL },
        { "allow_internet_access", JF_BOOL }, { "network", JF_OBJECT },
        { "metadata", JF_STRING_MAP },     { "envVars", JF_STRING_MAP },
        { "mcp", JF_OBJECT },              { "iam", JF_OBJECT },
        { "volumeMounts", JF_ARRAY },
    };
    enum MHD_Result rc = MHD_NO;
    json_t *body = body_parse(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    struct airlock_error e;
    uint64_t timeout;
    if (create_unsupported(body, &e) < 0 ||
        timeout_field(body, "timeout", 1, GW_IDLE_TIMEOUT_MAX_S, E2B_DEFAULT_TIMEOUT_S, &timeout,
                      &e) < 0) {
        json_decref(body);
        return e2b_reply_airlock_error(r, &e);
    }
    const char *idem = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Idempotency-Key");
    Airlock__Scheduler__V1__CreateSandboxRequest req =
        AIRLOCK__SCHEDULER__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.template_ = (char *)e2b_airlock_template(json_input_string(body, "templateID", ""));
    req.timeout_s = (uint32_t)timeout;
    req.on_timeout = json_is_true(json_object_get(body, "autoPause")) ? "suspend" : "delete";
    req.idempotency_key = (char *)(idem ? idem : "");
    req.env = (void *)string_map_from_json(
        json_object_get(body, "envVars"),
        &airlock__scheduler__v1__create_sandbox_request__env_entry__descriptor, &req.n_env);
    req.metadata = (void *)string_map_from_json(
        json_object_get(body, "metadata"),
        &airlock__scheduler__v1__create_sandbox_request__metadata_entry__descriptor,
        &req.n_metadata);
    /* E2B's sandboxes reach the internet unless told not to; airlock's
     * egress still keeps them from the node and its protected ranges. */
    Airlock__Egress__V1__Policy policy = AIRLOCK__EGRESS__V1__POLICY__INIT;
    json_t *internet = json_object_get(body, "allow_internet_access");
    policy.default_action = !internet || json_is_true(internet)
                                ? AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_ALLOW
                                : AIRLOCK__EGRESS__V1__DEFAULT_ACTION__DEFAULT_ACTION_DENY;
    req.network = &policy;
    /* E2B's ports are public unless network.allowPublicTraffic is false. */
    json_t *public_traffic = json_object_get(json_object_get(body, "network"), "allowPublicTraffic");
    req.public_ports = !public_traffic || json_is_true(public_traffic);
    struct gw_caller caller = gw_request_caller(r);
    Sandbox *sb = NULL;
    /* volumeMounts: airlock's volumes of the key's project, read-write. */
    int created = !req.env || !req.metadata
                      ? airlock_error_set(&e, AIRLOCK_ERR_CAPACITY, "out of memory")
                      : gw_volume_mounts_from_json(json_object_get(body, "volumeMounts"),
                                                   "volumeMounts", &req.volumes, &req.n_volumes,
                                                   &e);
    if (created == 0)
        created = gw_sandbox_create(r->gw, &caller, &req, &sb, &e);
    gw_volume_mounts_free(req.volumes);
    free(req.env);
    free(req.metadata);
    json_decref(body);
    return created == 0 ? reply_sandbox(r, 201, sb) : e2b_reply_airlock_error(r, &e);
}

enum MHD_Result e2b_sandbox_get(struct gw_request *r)
{
    Sandbox *sb = NULL;
    struct airlock_error e;
    if (sandbox_call(r, SCHEDULER_METHOD("GetSandbox"), &sb, &e) < 0)
        return e2b_reply_airlock_error(r, &e);
    const char *key = e2b_request_key(r->conn);
    enum MHD_Result rc =
        reply_json(r, 200, e2b_detail_json(sb, r->gw->cfg.public_domain, key ? key : ""));
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

/* One scheduler call answered 204 (or its error). */
static enum MHD_Result call_no_content(struct gw_request *r, const char *method)
{
    Sandbox *sb = NULL;
    struct airlock_error e;
    if (sandbox_call(r, method, &sb, &e) < 0)
        return e2b_reply_airlock_error(r, &e);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return reply_empty(r, 204);
}

enum MHD_Result e2b_sandbox_kill(struct gw_request *r)
{
    return call_no_content(r, SCHEDULER_METHOD("DeleteSandbox"));
}

enum MHD_Result e2b_sandbox_pause(struct gw_request *r)
{
    static const struct json_field fields[] = { { "memory", JF_BOOL } };
    enum MHD_Result rc = MHD_NO;
    json_t *body = body_parse(r, fields, 1, &rc);
    if (!body)
        return rc;
    struct airlock_error e;
    int ok = memory_supported(body, &e);
    json_decref(body);
    /* A paused sandbox (suspended) is 409, which the SDK reads as
     * "already paused". */
    return ok < 0 ? e2b_reply_airlock_error(r, &e)
                  : call_no_content(r, SCHEDULER_METHOD("SuspendSandbox"));
}

/* Resume (201) a stopped sandbox or, when already_running_ok, answer a
 * running one as it is (200), after moving its deadline: before the
 * resume, so a passed one cannot end the sandbox resumed. */
static enum MHD_Result resume(struct gw_request *r, uint64_t timeout, bool extend_only,
                              bool already_running_ok)
{
    Sandbox *sb = NULL;
    struct airlock_error e;
    if (sandbox_call(r, SCHEDULER_METHOD("GetSandbox"), &sb, &e) < 0)
        return e2b_reply_airlock_error(r, &e);
    bool running = strcmp(e2b_state(sb->state), "running") == 0;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    sb = NULL;
    if (running && !already_running_ok)
        return e2b_reply_error(r, 409, "sandbox %s is already running", r->path_id);
    if (set_timeout(r, timeout, extend_only, &e) < 0 ||
        sandbox_call(r, running ? SCHEDULER_METHOD("GetSandbox") : SCHEDULER_METHOD("ResumeSandbox"),
                     &sb, &e) < 0)
        return e2b_reply_airlock_error(r, &e);
    return reply_sandbox(r, running ? 200 : 201, sb);
}

enum MHD_Result e2b_sandbox_resume(struct gw_request *r)
{
    static const struct json_field fields[] = {
        { "timeout", JF_UINT }, { "autoPause", JF_BOOL }, { "memory", JF_BOOL }
    };
    enum MHD_Result rc = MHD_NO;
    json_t *body = body_parse(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    struct airlock_error e;
    uint64_t timeout;
    int ok = memory_supported(body, &e);
    if (ok == 0 && json_object_get(body, "autoPause"))
        ok = airlock_error_set(&e, AIRLOCK_ERR_INVALID,
                               "autoPause is not supported on resume: the create's stays");
    if (ok == 0)
        ok = timeout_field(body, "timeout", 1, GW_IDLE_TIMEOUT_MAX_S, E2B_DEFAULT_TIMEOUT_S,
                           &timeout, &e);
    json_decref(body);
    return ok < 0 ? e2b_reply_airlock_error(r, &e) : resume(r, timeout, false, false);
}

enum MHD_Result e2b_sandbox_connect(struct gw_request *r)
{
    static const struct json_field fields[] = { { "timeout", JF_UINT }, { "memory", JF_BOOL } };
    enum MHD_Result rc = MHD_NO;
    json_t *body = body_parse(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    struct airlock_error e;
    uint64_t timeout;
    int ok = memory_supported(body, &e);
    if (ok == 0)
        ok = timeout_field(body, "timeout", 0, GW_IDLE_TIMEOUT_MAX_S, E2B_DEFAULT_TIMEOUT_S,
                           &timeout, &e);
    json_decref(body);
    /* "TTL is only extended" (E2B's spec); the SDK's Sandbox.connect
     * without timeoutMs sends none. */
    return ok < 0 ? e2b_reply_airlock_error(r, &e) : resume(r, timeout, true, true);
}

/* /timeout (a new deadline) and /refreshes (only a later one). */
static enum MHD_Result deadline(struct gw_request *r, const char *field, uint64_t max,
                                uint64_t fallback, bool extend_only)
{
    const struct json_field fields[] = { { field, JF_UINT } };
    enum MHD_Result rc = MHD_NO;
    json_t *body = body_parse(r, fields, 1, &rc);
    if (!body)
        return rc;
    struct airlock_error e;
    uint64_t timeout;
    int ok = timeout_field(body, field, 0, max, fallback, &timeout, &e);
    json_decref(body);
    if (ok == 0)
        ok = set_timeout(r, timeout, extend_only, &e);
    return ok < 0 ? e2b_reply_airlock_error(r, &e) : reply_empty(r, 204);
}

enum MHD_Result e2b_sandbox_timeout(struct gw_request *r)
{
    return deadline(r, "timeout", GW_IDLE_TIMEOUT_MAX_S, 0, false);
}

enum MHD_Result e2b_sandbox_refresh(struct gw_request *r)
{
    return deadline(r, "duration", 3600, E2B_DEFAULT_TIMEOUT_S, true);
}
