/* PUT and GET /v1/templates/{name}/warm-pool (admin): a template's
 * warm-pool floor (target) and ceiling (max), which the scheduler's
 * controller keeps on every live node, and what each node's pool fills to
 * following its creates, holds ready and in memory. */
#include <stdlib.h>

#include "json_input.h"
#include "reply.h"
#include "route_handlers.h"

static enum MHD_Result reply_pool_status(struct gw_request *r, grpc_status_code st,
                                         Airlock__Scheduler__V1__WarmPoolStatus *pool,
                                         const char *details)
{
    if (st != GRPC_STATUS_OK)
        return reply_grpc_error(r, st, details);
    json_t *nodes = json_array();
    for (size_t i = 0; i < pool->n_nodes; i++) {
        const Airlock__Scheduler__V1__NodeWarmPool *n = pool->nodes[i];
        json_array_append_new(nodes, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:f}", "node",
                                               n->node_id, "target", (json_int_t)n->target,
                                               "ready", (json_int_t)n->ready, "min",
                                               (json_int_t)n->min, "max", (json_int_t)n->max,
                                               "memory_bytes", (json_int_t)n->memory_bytes,
                                               "demand_per_s", n->demand_per_s));
    }
    json_t *target = pool->target_set ? json_integer(pool->target) : json_null();
    json_t *max = pool->max ? json_integer(pool->max) : json_null();
    return reply_json(r, 200, json_pack("{s:s,s:o,s:o,s:o}", "template", pool->template_,
                                        "target", target, "max", max, "nodes", nodes));
}

/* One scheduler call answered by a WarmPoolStatus. */
static enum MHD_Result pool_call(struct gw_request *r, const char *method,
                                 const ProtobufCMessage *req)
{
    Airlock__Scheduler__V1__WarmPoolStatus *pool = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(r->gw->scheduler, method, req,
                                    &airlock__scheduler__v1__warm_pool_status__descriptor,
                                    (ProtobufCMessage **)&pool, &details, GW_SCHEDULER_TIMEOUT_MS);
    enum MHD_Result rc = reply_pool_status(r, st, pool, details);
    free(details);
    if (pool)
        protobuf_c_message_free_unpacked(&pool->base, NULL);
    return rc;
}

enum MHD_Result handle_warm_pool_put(struct gw_request *r)
{
    static const struct json_field fields[] = { { "target", JF_UINT }, { "max", JF_UINT } };
    enum MHD_Result rc = MHD_NO;
    json_t *body = gw_json_body(r, fields, sizeof(fields) / sizeof(*fields), &rc);
    if (!body)
        return rc;
    struct airlock_error e;
    uint64_t target = 0, max = 0;
    if (!json_object_get(body, "target")) {
        json_decref(body);
        return reply_error(r, 400, "invalid_argument", "target: required");
    }
    /* max absent or 0: each node's own ceiling; target above it: the
     * scheduler's 400 naming both. */
    if (json_input_uint(body, "target", 64, 0, &target, &e) < 0 ||
        json_input_uint(body, "max", 64, 0, &max, &e) < 0) {
        json_decref(body);
        return reply_airlock_error(r, &e);
    }
    json_decref(body);
    Airlock__Scheduler__V1__SetWarmPoolRequest req = AIRLOCK__SCHEDULER__V1__SET_WARM_POOL_REQUEST__INIT;
    req.request_id = r->id;
    req.template_ = r->path_name;
    req.target = (uint32_t)target;
    req.max = (uint32_t)max;
    return pool_call(r, SCHEDULER_METHOD("SetWarmPool"), &req.base);
}

enum MHD_Result handle_warm_pool_get(struct gw_request *r)
{
    Airlock__Scheduler__V1__WarmPoolRef req = AIRLOCK__SCHEDULER__V1__WARM_POOL_REF__INIT;
    req.request_id = r->id;
    req.template_ = r->path_name;
    return pool_call(r, SCHEDULER_METHOD("GetWarmPool"), &req.base);
}
