/* The method table of the public gRPC API and what every call goes
 * through: authentication from the `authorization` metadata, the key's
 * rate limit, the request message, the handler, one log line. common/rpc
 * runs each call on its own thread, so handlers are plain blocking code
 * like the REST ones. */
#include "grpc_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "grpc_call.h"
#include "log.h"
#include "random_id.h"
#include "rpc_err.h"
#include "vmhost.pb-c.h"

#define SANDBOXES(name) "/airlock.v1.Sandboxes/" name
#define EVENTS(name) "/airlock.v1.Events/" name
#define TEMPLATES(name) "/airlock.v1.Templates/" name
#define PROJECTS(name) "/airlock.v1.Projects/" name
#define NODES(name) "/airlock.v1.Nodes/" name
#define VOLUMES(name) "/airlock.v1.Volumes/" name

static const struct grpc_method {
    const char *path;
    /* The request, read before the handler runs; NULL for a client
     * stream, which the handler reads itself. */
    const ProtobufCMessageDescriptor *request;
    void (*handle)(struct grpc_request *r);
} grpc_methods[] = {
    { SANDBOXES("CreateSandbox"), &airlock__v1__create_sandbox_request__descriptor,
      grpc_create_sandbox },
    { SANDBOXES("GetSandbox"), &airlock__v1__sandbox_request__descriptor, grpc_get_sandbox },
    { SANDBOXES("ListSandboxes"), &airlock__v1__list_sandboxes_request__descriptor,
      grpc_list_sandboxes },
    { SANDBOXES("DeleteSandbox"), &airlock__v1__sandbox_request__descriptor, grpc_delete_sandbox },
    { SANDBOXES("PauseSandbox"), &airlock__v1__sandbox_request__descriptor, grpc_pause_sandbox },
    { SANDBOXES("ResumeSandbox"), &airlock__v1__sandbox_request__descriptor, grpc_resume_sandbox },
    { SANDBOXES("SuspendSandbox"), &airlock__v1__sandbox_request__descriptor,
      grpc_suspend_sandbox },
    { SANDBOXES("SetNetworkPolicy"), &airlock__v1__set_network_policy_request__descriptor,
      grpc_set_network_policy },
    { SANDBOXES("Exec"), &airlock__v1__exec_request__descriptor, grpc_exec },
    { SANDBOXES("StartProcess"), &airlock__v1__exec_request__descriptor, grpc_start_process },
    { SANDBOXES("ListProcesses"), &airlock__v1__sandbox_request__descriptor, grpc_list_processes },
    { SANDBOXES("ListPorts"), &airlock__v1__sandbox_request__descriptor, grpc_list_ports },
    { SANDBOXES("GetPortUrl"), &airlock__v1__get_port_url_request__descriptor, grpc_get_port_url },
    { SANDBOXES("AttachProcess"), &airlock__v1__process_request__descriptor, grpc_attach_process },
    { SANDBOXES("WriteProcessStdin"), &airlock__v1__write_process_stdin_request__descriptor,
      grpc_write_process_stdin },
    { SANDBOXES("SignalProcess"), &airlock__v1__signal_process_request__descriptor,
      grpc_signal_process },
    { SANDBOXES("ReadFile"), &airlock__v1__path_request__descriptor, grpc_read_file },
    { SANDBOXES("WriteFile"), NULL, grpc_write_file },
    { SANDBOXES("ListDir"), &airlock__v1__path_request__descriptor, grpc_list_dir },
    { SANDBOXES("StatFile"), &airlock__v1__path_request__descriptor, grpc_stat_file },
    { SANDBOXES("MakeDir"), &airlock__v1__make_dir_request__descriptor, grpc_make_dir },
    { SANDBOXES("RemoveFile"), &airlock__v1__path_request__descriptor, grpc_remove_file },
    { SANDBOXES("RenameFile"), &airlock__v1__rename_file_request__descriptor, grpc_rename_file },
    { SANDBOXES("WatchDir"), &airlock__v1__path_request__descriptor, grpc_watch_dir },
    { SANDBOXES("CreateCheckpoint"), &airlock__v1__create_checkpoint_request__descriptor,
      grpc_create_checkpoint },
    { SANDBOXES("ListCheckpoints"), &airlock__v1__sandbox_request__descriptor,
      grpc_list_checkpoints },
    { SANDBOXES("DeleteCheckpoint"), &airlock__v1__delete_checkpoint_request__descriptor,
      grpc_delete_checkpoint },
    { SANDBOXES("RestoreCheckpoint"), &airlock__v1__restore_checkpoint_request__descriptor,
      grpc_restore_checkpoint },
    { SANDBOXES("ForkSandbox"), &airlock__v1__fork_sandbox_request__descriptor,
      grpc_fork_sandbox },
    { SANDBOXES("GetConsoleLog"), &airlock__v1__console_log_request__descriptor,
      grpc_get_console_log },
    { SANDBOXES("ListConnections"), &airlock__v1__list_connections_request__descriptor,
      grpc_list_connections },
    { EVENTS("Subscribe"), &airlock__v1__subscribe_request__descriptor, grpc_subscribe_events },
    { TEMPLATES("BuildTemplate"), &airlock__v1__build_template_request__descriptor,
      grpc_build_template },
    { TEMPLATES("ListTemplates"), &airlock__v1__list_templates_request__descriptor,
      grpc_list_templates },
    { TEMPLATES("GetTemplate"), &airlock__v1__template_request__descriptor, grpc_get_template },
    { TEMPLATES("DeleteTemplate"), &airlock__v1__template_request__descriptor,
      grpc_delete_template },
    { TEMPLATES("SetWarmPool"), &airlock__v1__set_warm_pool_request__descriptor,
      grpc_set_warm_pool },
    { TEMPLATES("GetWarmPool"), &airlock__v1__get_warm_pool_request__descriptor,
      grpc_get_warm_pool },
    { PROJECTS("GetQuotas"), &airlock__v1__get_quotas_request__descriptor, grpc_get_quotas },
    { PROJECTS("SetQuotas"), &airlock__v1__set_quotas_request__descriptor, grpc_set_quotas },
    { NODES("ListNodes"), &airlock__v1__list_nodes_request__descriptor, grpc_list_nodes },
    { NODES("GetNode"), &airlock__v1__node_request__descriptor, grpc_get_node },
    { NODES("DrainNode"), &airlock__v1__node_request__descriptor, grpc_drain_node },
    { NODES("UndrainNode"), &airlock__v1__node_request__descriptor, grpc_undrain_node },
    { VOLUMES("CreateVolume"), &airlock__v1__create_volume_request__descriptor,
      grpc_create_volume },
    { VOLUMES("ListVolumes"), &airlock__v1__list_volumes_request__descriptor, grpc_list_volumes },
    { VOLUMES("GetVolume"), &airlock__v1__volume_request__descriptor, grpc_get_volume },
    { VOLUMES("GrowVolume"), &airlock__v1__grow_volume_request__descriptor, grpc_grow_volume },
    { VOLUMES("DeleteVolume"), &airlock__v1__volume_request__descriptor, grpc_delete_volume },
    { VOLUMES("CreateVolumeSnapshot"), &airlock__v1__volume_snapshot_request__descriptor,
      grpc_create_volume_snapshot },
    { VOLUMES("ListVolumeSnapshots"), &airlock__v1__volume_request__descriptor,
      grpc_list_volume_snapshots },
    { VOLUMES("DeleteVolumeSnapshot"), &airlock__v1__volume_snapshot_request__descriptor,
      grpc_delete_volume_snapshot },
};

#define GRPC_METHOD_COUNT (sizeof(grpc_methods) / sizeof(*grpc_methods))

/* For the admin key only, as their REST routes (GW_AUTH_ADMIN). */
static const char *const admin_methods[] = {
    TEMPLATES("SetWarmPool"), TEMPLATES("GetWarmPool"), PROJECTS("SetQuotas"),
    NODES("ListNodes"),       NODES("GetNode"),         NODES("DrainNode"),
    NODES("UndrainNode"),
};

static bool admin_only(const char *path)
{
    for (size_t i = 0; i < sizeof(admin_methods) / sizeof(*admin_methods); i++)
        if (strcmp(admin_methods[i], path) == 0)
            return true;
    return false;
}

struct grpc_api {
    struct rpc_server *server;
    /* common/rpc's table: every path to grpc_dispatch. */
    struct rpc_method methods[GRPC_METHOD_COUNT];
};

void grpc_reply(struct grpc_request *r, const ProtobufCMessage *msg)
{
    if (msg && rpc_call_send(r->call, msg) < 0) {
        grpc_fail(r, GRPC_STATUS_CANCELLED, "the client went away");
        return;
    }
    r->status = GRPC_STATUS_OK;
    rpc_call_finish(r->call, GRPC_STATUS_OK, NULL);
}

void grpc_fail(struct grpc_request *r, grpc_status_code st, const char *fmt, ...)
{
    char message[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    r->status = st;
    rpc_call_finish(r->call, st, message);
}

void grpc_fail_error(struct grpc_request *r, const struct airlock_error *e)
{
    grpc_fail(r, airlock_error_status(e), "%s", e->message);
}

void grpc_reply_built(struct grpc_request *r, struct grpc_arena *a, const ProtobufCMessage *msg,
                      ProtobufCMessage *upstream)
{
    if (!msg || a->failed)
        grpc_fail(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    else
        grpc_reply(r, msg);
    grpc_arena_free(a);
    if (upstream)
        protobuf_c_message_free_unpacked(upstream, NULL);
}

int grpc_send(struct grpc_request *r, const ProtobufCMessage *msg)
{
    return rpc_call_send(r->call, msg);
}

bool grpc_check_id(struct grpc_request *r, const char *id)
{
    struct airlock_error e;
    if (gw_id_check(id, &e) == 0)
        return true;
    grpc_fail_error(r, &e);
    return false;
}

bool grpc_unary(struct grpc_request *r, struct rpc_channel *ch, const char *method,
                const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                int timeout_ms, ProtobufCMessage **resp)
{
    struct airlock_error e;
    if (gw_unary(ch, method, req, resp_desc, resp, timeout_ms, &e) == 0)
        return true;
    grpc_fail_error(r, &e);
    return false;
}

bool grpc_open_sandbox(struct grpc_request *r, const char *id, const char *what,
                       Airlock__Scheduler__V1__Sandbox **sb, struct rpc_channel **ch)
{
    *sb = NULL;
    if (!grpc_check_id(r, id))
        return false;
    struct airlock_error e;
    if (gw_sandbox_open(r->gw, &r->caller, id, what, sb, ch, &e) == 0)
        return true;
    grpc_fail_error(r, &e);
    return false;
}

bool grpc_vmhost_unary(struct grpc_request *r, const char *id, const char *what, const char *method,
                       const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                       ProtobufCMessage **resp)
{
    Airlock__Scheduler__V1__Sandbox *sb;
    struct rpc_channel *ch;
    *resp = NULL;
    if (!grpc_open_sandbox(r, id, what, &sb, &ch))
        return false;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return grpc_unary(r, ch, method, req, resp_desc, GW_SCHEDULER_TIMEOUT_MS, resp);
}

void grpc_vmhost_call_empty(struct grpc_request *r, const char *id, const char *what,
                            const char *method, const ProtobufCMessage *req)
{
    ProtobufCMessage *resp;
    if (!grpc_vmhost_unary(r, id, what, method, req, &airlock__vmhost__v1__empty__descriptor, &resp))
        return;
    protobuf_c_message_free_unpacked(resp, NULL);
    Airlock__V1__Empty nothing = AIRLOCK__V1__EMPTY__INIT;
    grpc_reply(r, &nothing.base);
}

static const struct grpc_method *method_find(const char *path)
{
    for (size_t i = 0; i < GRPC_METHOD_COUNT; i++)
        if (strcmp(grpc_methods[i].path, path) == 0)
            return &grpc_methods[i];
    return NULL;
}

/* RESOURCE_EXHAUSTED naming the limit, with the wait also as trailing
 * metadata for clients that back off by it. */
static void fail_rate_limited(struct grpc_request *r, unsigned retry_after_s, const char *why)
{
    char seconds[16];
    snprintf(seconds, sizeof(seconds), "%u", retry_after_s);
    r->status = GRPC_STATUS_RESOURCE_EXHAUSTED;
    rpc_call_finish_trailer(r->call, r->status, why,
                            &(struct rpc_trailer){ "retry-after", seconds });
}

static bool authenticate(struct grpc_request *r, const struct grpc_method *m)
{
    struct key_principal who;
    struct airlock_error e;
    if (gw_authenticate(r->gw, rpc_call_metadata(r->call, "authorization"),
                        "missing \"authorization: Bearer <key>\" metadata", &who, &e) < 0) {
        grpc_fail_error(r, &e);
        return false;
    }
    unsigned retry_after_s;
    char why[256];
    if (rate_limit_take(&r->gw->rates, who.key_id, &retry_after_s, why, sizeof(why)) < 0) {
        fail_rate_limited(r, retry_after_s, why);
        return false;
    }
    if (!who.admin && admin_only(m->path)) {
        grpc_fail(r, GRPC_STATUS_PERMISSION_DENIED, "this method needs the admin key");
        return false;
    }
    snprintf(r->key_id, sizeof(r->key_id), "%s", who.key_id);
    snprintf(r->project_id, sizeof(r->project_id), "%s", who.project_id);
    r->admin = who.admin;
    return true;
}

static void grpc_dispatch(struct rpc_call *call, void *ctx)
{
    /* Registered for the paths of grpc_methods only. */
    const struct grpc_method *m = method_find(rpc_call_method(call));
    int64_t started = clock_monotonic_ms();
    struct grpc_request r = { .gw = ctx, .call = call, .status = GRPC_STATUS_OK };
    random_id("req_", 8, r.id, sizeof(r.id));
    r.caller = (struct gw_caller){ r.id, r.project_id, r.key_id };
    if (authenticate(&r, m)) {
        if (m->request && !(r.msg = rpc_call_recv_request(call, m->request)))
            r.status = rpc_call_recv_status(call) == RPC_RECV_FAILED ? GRPC_STATUS_CANCELLED
                                                                      : GRPC_STATUS_INVALID_ARGUMENT;
        else
            m->handle(&r);
    }
    if (r.msg)
        protobuf_c_message_free_unpacked(r.msg, NULL);
    log_info("grpc call", "request=%s method=%s project=%s status=%s ms=%lld", r.id, m->path,
             r.project_id[0] ? r.project_id : "-", rpc_status_name(r.status),
             (long long)(clock_monotonic_ms() - started));
}

int grpc_api_start(struct gateway *gw, const char *addr, char *err, size_t errlen)
{
    struct grpc_api *api = calloc(1, sizeof(*api));
    if (!api) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < GRPC_METHOD_COUNT; i++)
        api->methods[i] = (struct rpc_method){ .path = grpc_methods[i].path,
                                               .handler = grpc_dispatch };
    char why[256];
    /* Callers authenticate with API keys (grpc_call.h), not certificates. */
    struct rpc_security sec = { .tls = gw->cfg.public_tls };
    api->server = rpc_server_start(addr, api->methods, GRPC_METHOD_COUNT, gw, &sec, why,
                                   sizeof(why));
    if (!api->server) {
        snprintf(err, errlen, "gRPC API: %s", why);
        free(api);
        return -1;
    }
    gw->grpc = api;
    return 0;
}

void grpc_api_stop(struct gateway *gw)
{
    if (!gw->grpc)
        return;
    rpc_server_stop(gw->grpc->server);
    free(gw->grpc);
    gw->grpc = NULL;
}
