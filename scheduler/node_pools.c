#include "node_pools.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

/* The heartbeat's pools as JSON, or NULL when out of memory. */
static char *pools_json(const Airlock__Node__V1__Heartbeat *hb)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < hb->n_warm_pools; i++) {
        const Airlock__Node__V1__WarmPool *p = hb->warm_pools[i];
        json_array_append_new(list, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:f}", "template",
                                              p->template_, "min", (json_int_t)p->target, "max",
                                              (json_int_t)p->max, "target",
                                              (json_int_t)p->filling_to, "ready",
                                              (json_int_t)p->ready, "memory_bytes",
                                              (json_int_t)p->memory_bytes, "demand_per_s",
                                              p->demand_per_s));
    }
    char *text = list ? json_dumps(list, JSON_COMPACT) : NULL;
    json_decref(list);
    return text;
}

static void record(struct scheduler *s, const char *node, const Airlock__Node__V1__Heartbeat *hb)
{
    char *pools = pools_json(hb);
    if (!pools)
        return;
    char memory[32], limit[32], own_max[16];
    snprintf(memory, sizeof(memory), "%llu", (unsigned long long)hb->pool_memory_bytes);
    snprintf(limit, sizeof(limit), "%llu", (unsigned long long)hb->pool_memory_limit_mb);
    snprintf(own_max, sizeof(own_max), "%u", hb->warm_pool_max);
    const char *params[] = { node, pools, memory, limit, own_max };
    struct airlock_error e;
    PGresult *res = db_query(&s->db,
                             "INSERT INTO node_warm_pools (node_id, pools, memory_bytes,"
                             " memory_limit_mb, warm_pool_max)"
                             " VALUES ($1, $2::jsonb, $3::bigint, $4::bigint, $5::integer)"
                             " ON CONFLICT (node_id) DO UPDATE SET pools = EXCLUDED.pools,"
                             " memory_bytes = EXCLUDED.memory_bytes,"
                             " memory_limit_mb = EXCLUDED.memory_limit_mb,"
                             " warm_pool_max = EXCLUDED.warm_pool_max, heard_at = now()",
                             5, params, AIRLOCK_ERROR_MSG(&e));
    if (!res)
        log_warn("warm pools of a heartbeat not recorded", "node=%s error=\"%s\"", node,
                 e.message);
    PQclear(res);
    free(pools);
}

int node_pools_follow(struct scheduler *s, char *err, size_t errlen)
{
    return node_heartbeats_follow(&s->pools, s, s->nc, record, err, errlen);
}
