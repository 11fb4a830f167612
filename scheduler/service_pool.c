/* SetWarmPool and GetWarmPool (admin; the gateway checks the key): a
 * template's warm-pool floor (target) and ceiling (max) in the database,
 * which the pool controller pushes to the nodes (controller_pool.c), and
 * what each live node last reported in its heartbeat (node_warm_pools,
 * node_pools.h). */
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "scheduler_service.h"

/* What one node may be asked to keep; more is a typo, not a plan. */
#define WARM_POOL_MAX_TARGET 64

/* Answers the template's status, or finishes with NOT_FOUND/UNAVAILABLE. */
static void reply_pool_status(struct rpc_call *call, struct scheduler *s, const char *tmpl)
{
    struct airlock_error e;
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", s->cfg.node_dead_after_s);
    const char *tparams[] = { tmpl };
    const char *nparams[] = { tmpl, dead_after };
    PGresult *t = db_query(&s->db,
                           "SELECT warm_pool_target IS NOT NULL, coalesce(warm_pool_target, 0),"
                           " coalesce(warm_pool_max, 0) FROM templates WHERE id = $1",
                           1, tparams, AIRLOCK_ERROR_MSG(&e));
    /* A live node without that pool (or whose heartbeat's pools are not
     * recorded yet) shows zeros. */
    PGresult *n = t ? db_query(&s->db,
                               "SELECT n.id, coalesce((q.v->>'target')::integer, 0),"
                               " coalesce((q.v->>'ready')::integer, 0),"
                               " coalesce((q.v->>'min')::integer, 0),"
                               " coalesce((q.v->>'max')::integer, 0),"
                               " coalesce((q.v->>'memory_bytes')::bigint, 0),"
                               " coalesce((q.v->>'demand_per_s')::float8, 0) FROM nodes n"
                               " LEFT JOIN node_warm_pools w ON w.node_id = n.id"
                               " LEFT JOIN LATERAL (SELECT e AS v FROM jsonb_array_elements(w.pools) e"
                               "   WHERE e->>'template' = $1 LIMIT 1) q ON true"
                               " WHERE n.last_seen > now() - make_interval(secs => $2::integer)"
                               " ORDER BY n.id",
                               2, nparams, AIRLOCK_ERROR_MSG(&e))
                     : NULL;
    size_t count = n ? (size_t)PQntuples(n) : 0;
    Airlock__Scheduler__V1__NodeWarmPool *nodes = calloc(count + 1, sizeof(*nodes));
    Airlock__Scheduler__V1__NodeWarmPool **ptrs = calloc(count + 1, sizeof(*ptrs));
    if (!t || !n) {
        rpc_call_finish(call, GRPC_STATUS_UNAVAILABLE, e.message);
    } else if (PQntuples(t) != 1) {
        rpc_call_finishf(call, GRPC_STATUS_NOT_FOUND, "template %s does not exist", tmpl);
    } else if (!nodes || !ptrs) {
        rpc_call_finish(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        Airlock__Scheduler__V1__WarmPoolStatus resp = AIRLOCK__SCHEDULER__V1__WARM_POOL_STATUS__INIT;
        resp.template_ = (char *)tmpl;
        resp.target_set = PQgetvalue(t, 0, 0)[0] == 't';
        resp.target = (uint32_t)atoi(PQgetvalue(t, 0, 1));
        resp.max = (uint32_t)atoi(PQgetvalue(t, 0, 2));
        for (size_t i = 0; i < count; i++) {
            airlock__scheduler__v1__node_warm_pool__init(&nodes[i]);
            nodes[i].node_id = PQgetvalue(n, (int)i, 0);
            nodes[i].target = (uint32_t)atoi(PQgetvalue(n, (int)i, 1));
            nodes[i].ready = (uint32_t)atoi(PQgetvalue(n, (int)i, 2));
            nodes[i].min = (uint32_t)atoi(PQgetvalue(n, (int)i, 3));
            nodes[i].max = (uint32_t)atoi(PQgetvalue(n, (int)i, 4));
            nodes[i].memory_bytes = strtoull(PQgetvalue(n, (int)i, 5), NULL, 10);
            nodes[i].demand_per_s = strtod(PQgetvalue(n, (int)i, 6), NULL);
            ptrs[i] = &nodes[i];
        }
        resp.n_nodes = count;
        resp.nodes = ptrs;
        rpc_call_send(call, &resp.base);
        rpc_call_finish(call, GRPC_STATUS_OK, NULL);
    }
    free(nodes);
    free(ptrs);
    PQclear(t);
    PQclear(n);
}

void service_warm_pool_set(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    Airlock__Scheduler__V1__SetWarmPoolRequest *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__set_warm_pool_request__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    char target[16], max[16];
    snprintf(target, sizeof(target), "%u", req->target);
    snprintf(max, sizeof(max), "%u", req->max);
    const char *params[] = { req->template_, target, max };
    PGresult *res = NULL;
    if (req->target > WARM_POOL_MAX_TARGET) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "target: %u is more than %d",
                         req->target, WARM_POOL_MAX_TARGET);
    } else if (req->max > WARM_POOL_MAX_TARGET) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "max: %u is more than %d", req->max,
                         WARM_POOL_MAX_TARGET);
    } else if (req->max > 0 && req->target > req->max) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "target: %u is above max %u",
                         req->target, req->max);
    } else if (!(res = db_query(&s->db,
                                "UPDATE templates SET warm_pool_target = $2::integer,"
                                " warm_pool_max = nullif($3::integer, 0)"
                                " WHERE id = $1 RETURNING id",
                                3, params, AIRLOCK_ERROR_MSG(&e)))) {
        rpc_call_finish(call, GRPC_STATUS_UNAVAILABLE, e.message);
    } else {
        if (PQntuples(res) == 1)
            log_info("warm pool target set", "request=%s template=%s target=%u max=%u",
                     req->request_id, req->template_, req->target, req->max);
        reply_pool_status(call, s, req->template_); /* NOT_FOUND when nothing was updated */
    }
    PQclear(res);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_warm_pool_get(struct rpc_call *call, void *ctx)
{
    Airlock__Scheduler__V1__WarmPoolRef *req = (void *)rpc_call_recv_request(
        call, &airlock__scheduler__v1__warm_pool_ref__descriptor);
    if (!req)
        return;
    reply_pool_status(call, ctx, req->template_);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
