/* Sandboxes: create, list, get, delete, pause, resume, suspend — control
 * calls on the scheduler — and the lookups the data routes share. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_input.h"
#include "policy_json.h"
#include "reply.h"
#include "route_handlers.h"
#include "sandbox_id.h"
#include "string_map_json.h"
#include "volume_json.h"

json_t *gw_sandbox_json(const Airlock__Scheduler__V1__Sandbox *sb)
{
    char created[40], updated[40];
    reply_rfc3339(sb->created_unix_ms, created, sizeof(created));
    reply_rfc3339(sb->updated_unix_ms, updated, sizeof(updated));
    char err[256]; /* unused: the scheduler's strings come from jsonb, UTF-8 */
    json_t *metadata = string_map_to_json((ProtobufCMessage **)sb->metadata, sb->n_metadata,
                                          "metadata", err, sizeof(err));
    json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:o,s:i,s:s,s:s}", "id", sb->id, "state",
                          sb->state, "template", sb->template_, "node", sb->node_id, "cpus",
                          (json_int_t)sb->cpus, "memory_mb", (json_int_t)sb->memory_mb, "metadata",
                          metadata ? metadata : json_object(), "idle_timeout_s",
                          (json_int_t)sb->idle_timeout_s, "created_at", created, "updated_at",
                          updated);
    if (j) {
        json_object_set_new(j, "ttl_s", json_integer(sb->ttl_s));
        json_object_set_new(j, "checkpoint_every_s", json_integer(sb->checkpoint_every_s));
        json_object_set_new(j, "public_ports", json_boolean(sb->public_ports));
        json_object_set_new(j, "traffic_token", json_string(sb->traffic_token));
        json_object_set_new(j, "volumes", gw_volume_mounts_json(sb->volumes, sb->n_volumes));
    }
    /* Lost with its node: what a restore without a checkpoint uses. */
    if (j && strcmp(sb->state, "lost") == 0 && *sb->restore_point) {
        char at[40];
        reply_rfc3339(sb->restore_point_unix_ms, at, sizeof(at));
        json_object_set_new(j, "restore_point", json_pack("{s:s,s:s}", "checkpoint",
                                                          sb->restore_point, "created_at", at));
    }
    if (j && *sb->error)
        json_object_set_new(j, "error", json_string(sb->error));
    json_t *network = sb->network ? policy_json_from_proto(sb->network, "network", err,
                                                           sizeof(err))
                                  : NULL;
    if (j && network)
        json_object_set_new(j, "network", network);
    else
        json_decref(network);
    return j;
}

/* One scheduler call on sandbox id answered by a Sandbox. */
static int sandbox_call_id(struct gw_request *r, const char *method, const char *id,
                           Airlock__Scheduler__V1__Sandbox **out, struct airlock_error *e)
{
    struct gw_caller caller = gw_request_caller(r);
    return gw_sandbox_ref_call(r->gw, &caller, method, id,
                               &airlock__scheduler__v1__sandbox__descriptor,
                               (ProtobufCMessage **)out, e);
}

/* The same on the route's sandbox {id}. */
static int sandbox_call(struct gw_request *r, const char *method,
                        Airlock__Scheduler__V1__Sandbox **out, struct airlock_error *e)
{
    return sandbox_call_id(r, method, r->path_id, out, e);
}

Airlock__Scheduler__V1__Sandbox *gw_sandbox_lookup_id(struct gw_request *r, const char *id,
                                                      enum MHD_Result *rc)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct airlock_error e;
    if (sandbox_call_id(r, SCHEDULER_METHOD("GetSandbox"), id, &sb, &e) < 0)
        *rc = reply_airlock_error(r, &e);
    return sb;
}

Airlock__Scheduler__V1__Sandbox *gw_sandbox_lookup(struct gw_request *r, enum MHD_Result *rc)
{
    return gw_sandbox_lookup_id(r, r->path_id, rc);
}

Airlock__Scheduler__V1__Sandbox *gw_sandbox_lookup_early(struct gw_request *r)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct airlock_error e;
    if (sandbox_call(r, SCHEDULER_METHOD("GetSandbox"), &sb, &e) < 0)
        gw_request_fail_error(r, &e);
    return sb;
}

struct rpc_channel *gw_sandbox_vmhost(struct gw_request *r, const Airlock__Scheduler__V1__Sandbox *sb,
                                      const char *what, enum MHD_Result *rc)
{
    struct rpc_channel *ch;
    struct airlock_error e;
    if (gw_sandbox_channel(r->gw, sb, what, &ch, &e) < 0)
        *rc = reply_airlock_error(r, &e);
    return ch;
}

struct rpc_channel *gw_sandbox_node(struct gw_request *r, const Airlock__Scheduler__V1__Sandbox *sb,
                                    enum MHD_Result *rc)
{
    struct rpc_channel *ch;
    struct airlock_error e;
    if (gw_sandbox_node_channel(r->gw, sb, &ch, &e) < 0)
        *rc = reply_airlock_error(r, &e);
    return ch;
}

json_t *gw_json_body(struct gw_request *r, const struct json_field *fields, size_t n_fields,
                     enum MHD_Result *rc)
{
    json_t *body;
    struct airlock_error e;
    if (json_input_parse(r->body.data, r->body.len, fields, n_fields, &body, &e) < 0) {
        *rc = reply_airlock_error(r, &e);
        return NULL;
    }
    return body;
}

enum MHD_Result gw_vmhost_call_no_content(struct gw_request *r, const char *what, const char *method,
                                          ProtobufCMessage *req, char **sandbox_id_field)
{
    enum MHD_Result rc = MHD_NO;
    Airlock__Scheduler__V1__Sandbox *sb = gw_sandbox_lookup(r, &rc);
    if (!sb)
        return rc;
    struct rpc_channel *ch = gw_sandbox_vmhost(r, sb, what, &rc);
    if (ch) {
        *sandbox_id_field = sb->id;
        ProtobufCMessage *resp = NULL;
        char *details = NULL;
        grpc_status_code st = rpc_unary(ch, method, req, &airlock__vmhost__v1__empty__descriptor,
                                        &resp, &details, GW_SCHEDULER_TIMEOUT_MS);
        rc = st == GRPC_STATUS_OK ? reply_empty(r, 204) : reply_grpc_error(r, st, details);
        free(details);
        if (resp)
            protobuf_c_message_free_unpacked(resp, NULL);
    }
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

const char *gw_query_path(struct gw_request *r, enum MHD_Result *rc)
{
    const char *path = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "path");
    if (!path || !*path) {
        *rc = reply_error(r, 400, "invalid_argument", "path: query parameter required");
        return NULL;
    }
    if (path[0] != '/') {
        *rc = reply_error(r, 400, "invalid_argument", "path: must be absolute");
        return NULL;
    }
    return path;
}

bool gw_query_uint(struct gw_request *r, const char *name, uint64_t min, uint64_t max,
                   uint64_t *out, enum MHD_Result *rc)
{
    const char *text = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
    if (!text)
        return true;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || text[0] == '-' || errno || v < min || v > max) {
        *rc = reply_error(r, 400, "invalid_argument", "%s: \"%.40s\" is not a number %llu..%llu",
                          name, text, (unsigned long long)min, (unsigned long long)max);
        return false;
    }
    *out = v;
    return true;
}

bool gw_query_sandbox_id(struct gw_request *r, const char **out, enum MHD_Result *rc)
{
    const char *id = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "sandbox_id");
    if (id && !sandbox_id_valid(id)) {
        *rc = reply_error(r, 400, "invalid_argument",
                          "sandbox_id: \"%.80s\" is malformed (1..64 of a-z 0-9 _ -)", id);
        return false;
    }
    *out = id ? id : "";
    return true;
}

enum MHD_Result handle_sandbox_create(struct gw_request *r)
{
    static const struct json_field fields[] = {
        { "template", JF_STRING },      { "cpus", JF_UINT },
        { "memory_mb", JF_UINT },       { "env", JF_STRING_MAP },
        { "metadata", JF_STRING_MAP },  { "idle_timeout_s", JF_UINT },
        { "ttl_s", JF_UINT },           { "checkpoint_every_s", JF_UINT },
        { "network", JF_OBJECT },       { "public_ports", JF_BOOL },
        { "volumes", JF_ARRAY },
    };
    json_t *body;
    struct airlock_error e;
    uint64_t cpus, memory_mb, idle, ttl, every;
    if (json_input_parse(r->body.data, r->body.len, fields, sizeof(fields) / sizeof(*fields), &body,
                         &e) < 0)
        return reply_airlock_error(r, &e);
    if (json_input_uint(body, "cpus", 16, 0, &cpus, &e) < 0 ||
        json_input_uint(body, "memory_mb", 65536, 0, &memory_mb, &e) < 0 ||
        json_input_uint(body, "idle_timeout_s", GW_IDLE_TIMEOUT_MAX_S, 0, &idle, &e) < 0 ||
        json_input_uint(body, "ttl_s", GW_IDLE_TIMEOUT_MAX_S, 0, &ttl, &e) < 0 ||
        json_input_uint(body, "checkpoint_every_s", UINT32_MAX, 0, &every, &e) < 0) {
        json_decref(body);
        return reply_airlock_error(r, &e);
    }
    const char *idem = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Idempotency-Key");
    Airlock__Scheduler__V1__CreateSandboxRequest req =
        AIRLOCK__SCHEDULER__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.template_ = (char *)json_input_string(body, "template", "");
    req.cpus = (uint32_t)cpus;
    req.memory_mb = (uint32_t)memory_mb;
    req.idle_timeout_s = (uint32_t)idle;
    req.ttl_s = (uint32_t)ttl;
    req.checkpoint_every_s = (uint32_t)every; /* its range: the scheduler's */
    req.public_ports = json_is_true(json_object_get(body, "public_ports"));
    req.idempotency_key = (char *)(idem ? idem : "");
    /* Pointing into body, which outlives the call. */
    req.env = (void *)string_map_from_json(
        json_object_get(body, "env"),
        &airlock__scheduler__v1__create_sandbox_request__env_entry__descriptor, &req.n_env);
    req.metadata = (void *)string_map_from_json(
        json_object_get(body, "metadata"),
        &airlock__scheduler__v1__create_sandbox_request__metadata_entry__descriptor,
        &req.n_metadata);
    json_t *network = json_object_get(body, "network");
    Airlock__Egress__V1__Policy policy = AIRLOCK__EGRESS__V1__POLICY__INIT;
    struct gw_caller caller = gw_request_caller(r);
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    int created;
    if (!req.env || !req.metadata) {
        created = airlock_error_set(&e, AIRLOCK_ERR_CAPACITY, "out of memory");
    } else if (gw_volume_mounts_from_json(json_object_get(body, "volumes"), "volumes", &req.volumes,
                                          &req.n_volumes, &e) < 0) {
        created = -1;
    } else if (network &&
               policy_json_to_proto(network, "network", &policy, AIRLOCK_ERROR_MSG(&e)) < 0) {
        created = airlock_error_classify(&e, AIRLOCK_ERR_INVALID);
    } else {
        req.network = network ? &policy : NULL;
        created = gw_sandbox_create(r->gw, &caller, &req, &sb, &e);
    }
    policy_json_release(&policy);
    gw_volume_mounts_free(req.volumes);
    free(req.env);
    free(req.metadata);
    json_decref(body);
    enum MHD_Result rc =
        created == 0 ? reply_json(r, 201, gw_sandbox_json(sb)) : reply_airlock_error(r, &e);
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

enum MHD_Result handle_sandbox_list(struct gw_request *r)
{
    Airlock__Scheduler__V1__ListSandboxesRequest req =
        AIRLOCK__SCHEDULER__V1__LIST_SANDBOXES_REQUEST__INIT;
    req.request_id = r->id;
    req.project_id = r->project_id;
    Airlock__Scheduler__V1__ListSandboxesResponse *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(r->gw->scheduler, SCHEDULER_METHOD("ListSandboxes"), &req.base,
                                    &airlock__scheduler__v1__list_sandboxes_response__descriptor,
                                    (ProtobufCMessage **)&resp, &details, GW_SCHEDULER_TIMEOUT_MS);
    enum MHD_Result rc;
    if (st != GRPC_STATUS_OK) {
        rc = reply_grpc_error(r, st, details);
    } else {
        json_t *list = json_array();
        for (size_t i = 0; i < resp->n_sandboxes; i++)
            json_array_append_new(list, gw_sandbox_json(resp->sandboxes[i]));
        rc = reply_json(r, 200, json_pack("{s:o}", "sandboxes", list));
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
    free(details);
    return rc;
}

/* Get and the lifecycle operations: one scheduler call, the sandbox back. */
static enum MHD_Result sandbox_op(struct gw_request *r, const char *method, unsigned ok_status)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct airlock_error e;
    enum MHD_Result rc;
    if (sandbox_call(r, method, &sb, &e) < 0)
        rc = reply_airlock_error(r, &e);
    else if (ok_status == 204)
        rc = reply_empty(r, 204);
    else
        rc = reply_json(r, ok_status, gw_sandbox_json(sb));
    if (sb)
        protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

/* A running sandbox's GET also lists the ports in use (docs/ports.md);
 * when its node cannot tell, the sandbox is answered without them. */
enum MHD_Result handle_sandbox_get(struct gw_request *r)
{
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct airlock_error e;
    if (sandbox_call(r, SCHEDULER_METHOD("GetSandbox"), &sb, &e) < 0)
        return reply_airlock_error(r, &e);
    json_t *j = gw_sandbox_json(sb);
    json_t *ports = j && strcmp(sb->state, "running") == 0 ? gw_ports_json(r, sb->id, &e) : NULL;
    if (ports)
        json_object_set_new(j, "ports", ports);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return reply_json(r, 200, j);
}

enum MHD_Result handle_sandbox_delete(struct gw_request *r)
{
    return sandbox_op(r, SCHEDULER_METHOD("DeleteSandbox"), 204);
}

enum MHD_Result handle_sandbox_pause(struct gw_request *r)
{
    return sandbox_op(r, SCHEDULER_METHOD("PauseSandbox"), 200);
}

enum MHD_Result handle_sandbox_resume(struct gw_request *r)
{
    return sandbox_op(r, SCHEDULER_METHOD("ResumeSandbox"), 200);
}

enum MHD_Result handle_sandbox_suspend(struct gw_request *r)
{
    return sandbox_op(r, SCHEDULER_METHOD("SuspendSandbox"), 200);
}
