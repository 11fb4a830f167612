#include "scheduler_service.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rpc_err.h"
#include "sandbox_store.h"
#include "scheduler.pb-c.h"
#include "service_op.h"
#include "tenancy.h"

#define SCHEDULER_METHOD(name) "/airlock.scheduler.v1.Scheduler/" name

static void service_authenticate(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__AuthenticateRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__authenticate_request__descriptor);
    if (!req)
        return;
    struct principal p;
    struct airlock_error e;
    int rc = tenancy_authenticate(&s->db, req->api_key, &p, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
    if (rc < 0) {
        rpc_call_finish_error(call, &e);
        return;
    }
    Airlock__Scheduler__V1__Principal resp = AIRLOCK__SCHEDULER__V1__PRINCIPAL__INIT;
    resp.key_id = p.key_id;
    resp.project_id = p.project_id;
    resp.admin = p.admin;
    rpc_call_reply(call, &resp.base);
}

static void service_project_create(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__CreateProjectRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__create_project_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    char id[64];
    long long created = 0;
    int rc;
    if (!*req->name || strlen(req->name) > 200)
        rc = airlock_error_set(&e, AIRLOCK_ERR_INVALID, "name: required, at most 200 bytes");
    else
        rc = tenancy_create_project(&s->db, req->name, id, sizeof(id), &created, &e);
    if (rc == 0) {
        log_info("project created", "request=%s project=%s", req->request_id, id);
        Airlock__Scheduler__V1__Project resp = AIRLOCK__SCHEDULER__V1__PROJECT__INIT;
        resp.id = id;
        resp.name = req->name;
        resp.created_unix_ms = created;
        rpc_call_send(call, &resp.base);
    }
    rpc_call_finish_result(call, rc, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

static void service_key_create(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__CreateApiKeyRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__create_api_key_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    char id[64], secret[128];
    long long created = 0;
    int rc = tenancy_create_key(&s->db, req->project_id, req->name, id, sizeof(id), secret,
                                sizeof(secret), &created, &e);
    if (rc == 0) {
        log_info("api key created", "request=%s project=%s key=%s", req->request_id,
                 req->project_id, id);
        Airlock__Scheduler__V1__ApiKey resp = AIRLOCK__SCHEDULER__V1__API_KEY__INIT;
        resp.id = id;
        resp.project_id = req->project_id;
        resp.name = req->name;
        resp.secret = secret;
        resp.created_unix_ms = created;
        rpc_call_send(call, &resp.base);
    }
    rpc_call_finish_result(call, rc, &e);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* The methods of their own handler; service_op.c's table has the rest.
 * With mutual TLS only the gateway calls the scheduler. */
static const struct rpc_method own_methods[] = {
    { SCHEDULER_METHOD("Authenticate"), service_authenticate, PEER_GATEWAY },
    { SCHEDULER_METHOD("CreateProject"), service_project_create, PEER_GATEWAY },
    { SCHEDULER_METHOD("CreateApiKey"), service_key_create, PEER_GATEWAY },
    { SCHEDULER_METHOD("ListProjects"), service_projects_list, PEER_GATEWAY },
    { SCHEDULER_METHOD("ListApiKeys"), service_keys_list, PEER_GATEWAY },
    { SCHEDULER_METHOD("RevokeApiKey"), service_key_revoke, PEER_GATEWAY },
    { SCHEDULER_METHOD("GetQuotas"), service_quotas_get, PEER_GATEWAY },
    { SCHEDULER_METHOD("SetQuotas"), service_quotas_set, PEER_GATEWAY },
    { SCHEDULER_METHOD("ListNodes"), service_nodes_list, PEER_GATEWAY },
    { SCHEDULER_METHOD("GetNode"), service_node_get, PEER_GATEWAY },
    { SCHEDULER_METHOD("DrainNode"), service_node_drain, PEER_GATEWAY },
    { SCHEDULER_METHOD("UndrainNode"), service_node_undrain, PEER_GATEWAY },
    { SCHEDULER_METHOD("CreateSandbox"), service_sandbox_create, PEER_GATEWAY },
    { SCHEDULER_METHOD("GetSandbox"), service_sandbox_get, PEER_GATEWAY },
    { SCHEDULER_METHOD("GetSandboxForIngress"), service_sandbox_get_for_ingress, PEER_GATEWAY },
    { SCHEDULER_METHOD("ListSandboxes"), service_sandbox_list, PEER_GATEWAY },
    { SCHEDULER_METHOD("DeleteSandbox"), service_sandbox_delete, PEER_GATEWAY },
    { SCHEDULER_METHOD("PauseSandbox"), service_sandbox_pause, PEER_GATEWAY },
    { SCHEDULER_METHOD("ResumeSandbox"), service_sandbox_resume, PEER_GATEWAY },
    { SCHEDULER_METHOD("SuspendSandbox"), service_sandbox_suspend, PEER_GATEWAY },
    { SCHEDULER_METHOD("SetSandboxTimeout"), service_sandbox_set_timeout, PEER_GATEWAY },
    { SCHEDULER_METHOD("ListCheckpoints"), service_checkpoint_list, PEER_GATEWAY },
    { SCHEDULER_METHOD("SetWarmPool"), service_warm_pool_set, PEER_GATEWAY },
    { SCHEDULER_METHOD("GetWarmPool"), service_warm_pool_get, PEER_GATEWAY },
    { SCHEDULER_METHOD("BuildTemplate"), service_template_build, PEER_GATEWAY },
    { SCHEDULER_METHOD("ListTemplates"), service_template_list, PEER_GATEWAY },
    { SCHEDULER_METHOD("GetTemplate"), service_template_get, PEER_GATEWAY },
    { SCHEDULER_METHOD("DeleteTemplate"), service_template_delete, PEER_GATEWAY },
    { SCHEDULER_METHOD("CreateVolume"), service_volume_create, PEER_GATEWAY },
    { SCHEDULER_METHOD("ListVolumes"), service_volume_list, PEER_GATEWAY },
    { SCHEDULER_METHOD("GetVolume"), service_volume_get, PEER_GATEWAY },
    { SCHEDULER_METHOD("GrowVolume"), service_volume_grow, PEER_GATEWAY },
    { SCHEDULER_METHOD("DeleteVolume"), service_volume_delete, PEER_GATEWAY },
    { SCHEDULER_METHOD("CreateVolumeSnapshot"), service_volume_snapshot_create, PEER_GATEWAY },
    { SCHEDULER_METHOD("ListVolumeSnapshots"), service_volume_snapshot_list, PEER_GATEWAY },
    { SCHEDULER_METHOD("DeleteVolumeSnapshot"), service_volume_snapshot_delete, PEER_GATEWAY },
};

#define SCHEDULER_METHODS_MAX 48 /* the Scheduler service has 40 */
#define SCHEDULER_METHOD_MAX 80  /* SCHEDULER_METHOD("") and the longest name */

/* own_methods and the table's, made once (both are fixed). */
static const char method_prefix[] = SCHEDULER_METHOD("");
static struct rpc_method methods[SCHEDULER_METHODS_MAX];
static char op_paths[SCHEDULER_METHODS_MAX][SCHEDULER_METHOD_MAX];
static size_t n_methods;
static pthread_once_t methods_once = PTHREAD_ONCE_INIT;

static void methods_make(void)
{
    for (size_t i = 0; i < sizeof(own_methods) / sizeof(*own_methods); i++)
        methods[n_methods++] = own_methods[i];
    for (size_t i = 0; i < service_ops_count && n_methods < SCHEDULER_METHODS_MAX; i++) {
        size_t k = n_methods++;
        snprintf(op_paths[k], sizeof(op_paths[k]), "%s%s", method_prefix, service_ops[i].method);
        methods[k] = (struct rpc_method){ op_paths[k], service_op, PEER_GATEWAY };
    }
}

struct rpc_server *scheduler_service_start(struct scheduler *s, char *err, size_t errlen)
{
    if (!service_ops_check(err, errlen))
        return NULL;
    pthread_once(&methods_once, methods_make);
    struct rpc_security sec = { .bearer_token = s->cfg.internal_token,
                                .tls = s->cfg.internal_tls, .calls = s->metrics.calls };
    return rpc_server_start(s->cfg.listen, methods, n_methods, s, &sec, err, errlen);
}

void service_reply_sandbox(struct rpc_call *call, PGresult *res)
{
    struct sandbox_msg sb;
    struct airlock_error e;
    int rc = store_sandbox_msg(res, 0, &sb, &e);
    if (rc == 0)
        rpc_call_reply(call, &sb.msg.base);
    else
        rpc_call_finish_error(call, &e);
    store_sandbox_msg_free(&sb);
}

int service_reply_sandbox_now(struct rpc_call *call, struct scheduler *s, const char *project_id,
                              const char *id, struct airlock_error *e)
{
    PGresult *row = NULL;
    int rc = store_sandbox_get(&s->db, project_id, id, &row, e);
    if (rc == 0)
        service_reply_sandbox(call, row);
    PQclear(row);
    return rc;
}

int service_sandbox_msgs(PGresult *const *results, size_t n_results, struct sandbox_msgs *out,
                         struct airlock_error *e)
{
    size_t n = 0;
    for (size_t r = 0; r < n_results; r++)
        n += (size_t)PQntuples(results[r]);
    *out = (struct sandbox_msgs){ calloc(n + 1, sizeof(*out->msgs)),
                                  calloc(n + 1, sizeof(*out->ptrs)), 0 };
    if (!out->msgs || !out->ptrs)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    for (size_t r = 0; r < n_results; r++)
        for (int row = 0; row < PQntuples(results[r]); row++) {
            struct sandbox_msg *m = &out->msgs[out->n++];
            int rc = store_sandbox_msg(results[r], row, m, e);
            if (rc < 0)
                return rc;
            out->ptrs[out->n - 1] = &m->msg;
        }
    return 0;
}

void service_sandbox_msgs_free(struct sandbox_msgs *m)
{
    for (size_t i = 0; m->msgs && i < m->n; i++)
        store_sandbox_msg_free(&m->msgs[i]);
    free(m->msgs);
    free(m->ptrs);
    *m = (struct sandbox_msgs){ 0 };
}
