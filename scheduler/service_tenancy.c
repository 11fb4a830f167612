/* ListProjects, ListApiKeys, RevokeApiKey: the admin's view of projects
 * and their keys (CreateProject and CreateApiKey are in
 * scheduler_service.c). A key's secret is never in any answer here: only
 * its hash is stored. */
#include <stdlib.h>

#include "events.h"
#include "log.h"
#include "rpc_err.h"
#include "scheduler.pb-c.h"
#include "scheduler_service.h"
#include "tenancy.h"

/* Row i of a key listing, from column c (tenancy.h), into k; strings stay
 * in res. */
static void key_msg(PGresult *res, int i, int c, const char *project_id,
                    Airlock__Scheduler__V1__ApiKey *k)
{
    airlock__scheduler__v1__api_key__init(k);
    k->id = PQgetvalue(res, i, c);
    k->project_id = (char *)project_id;
    k->name = PQgetvalue(res, i, c + 1);
    k->admin = PQgetvalue(res, i, c + 2)[0] == 't';
    k->created_unix_ms = atoll(PQgetvalue(res, i, c + 3));
    k->revoked_unix_ms = atoll(PQgetvalue(res, i, c + 4));
}

void service_projects_list(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__ListProjectsRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__list_projects_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *res = NULL;
    int rc = tenancy_list_projects(&s->db, &res, &e);
    int n = res ? PQntuples(res) : 0;
    Airlock__Scheduler__V1__Project *projects = calloc((size_t)n + 1, sizeof(*projects));
    Airlock__Scheduler__V1__Project **ptrs = calloc((size_t)n + 1, sizeof(*ptrs));
    if (rc == 0 && (!projects || !ptrs))
        rc = airlock_error_set(&e, AIRLOCK_ERR_CAPACITY, "out of memory");
    if (rc == 0) {
        for (int i = 0; i < n; i++) {
            airlock__scheduler__v1__project__init(&projects[i]);
            projects[i].id = PQgetvalue(res, i, 0);
            projects[i].name = PQgetvalue(res, i, 1);
            projects[i].created_unix_ms = atoll(PQgetvalue(res, i, 2));
            ptrs[i] = &projects[i];
        }
        Airlock__Scheduler__V1__ListProjectsResponse resp =
            AIRLOCK__SCHEDULER__V1__LIST_PROJECTS_RESPONSE__INIT;
        resp.projects = ptrs;
        resp.n_projects = (size_t)n;
        rpc_call_send(call, &resp.base);
    }
    rpc_call_finish_result(call, rc, &e);
    free(projects);
    free(ptrs);
    PQclear(res);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_keys_list(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__ProjectRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__project_ref__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *res = NULL;
    int rc = tenancy_list_keys(&s->db, req->project_id, &res, &e);
    int n = res ? PQntuples(res) : 0;
    Airlock__Scheduler__V1__ApiKey *keys = calloc((size_t)n + 1, sizeof(*keys));
    Airlock__Scheduler__V1__ApiKey **ptrs = calloc((size_t)n + 1, sizeof(*ptrs));
    if (rc == 0 && (!keys || !ptrs))
        rc = airlock_error_set(&e, AIRLOCK_ERR_CAPACITY, "out of memory");
    if (rc == 0) {
        for (int i = 0; i < n; i++) {
            key_msg(res, i, 0, req->project_id, &keys[i]);
            ptrs[i] = &keys[i];
        }
        Airlock__Scheduler__V1__ListApiKeysResponse resp =
            AIRLOCK__SCHEDULER__V1__LIST_API_KEYS_RESPONSE__INIT;
        resp.keys = ptrs;
        resp.n_keys = (size_t)n;
        rpc_call_send(call, &resp.base);
    }
    rpc_call_finish_result(call, rc, &e);
    free(keys);
    free(ptrs);
    PQclear(res);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_key_revoke(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__ApiKeyRef *req =
        (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__api_key_ref__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *row = NULL;
    int rc = tenancy_revoke_key(&s->db, req->project_id, req->key_id, &row, &e);
    if (rc == 0) {
        log_info("api key revoked", "request=%s project=%s key=%s", req->request_id,
                 req->project_id, req->key_id);
        events_publish_key_revoked(s->nc, req->key_id);
        Airlock__Scheduler__V1__ApiKey k;
        key_msg(row, 0, TENANCY_REVOKED_KEY_COLUMN, req->project_id, &k);
        rpc_call_send(call, &k.base);
    }
    rpc_call_finish_result(call, rc, &e);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
