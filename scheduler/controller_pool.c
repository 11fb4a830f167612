/* Warm-pool targets: templates.warm_pool_target (NULL = not managed) is
 * the floor every live node keeps ready (for a named template: every node
 * that reports having it), warm_pool_max (NULL: each node's own) the
 * ceiling its demand may grow it to; each heartbeat reports the node's
 * floor, ceiling and own ceiling (node_warm_pools, node_pools.c).
 * Where they differ both are pushed (node op set_pool). A node that refuses is asked
 * again after POOL_REFUSAL_BACKOFF_MS, not every pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "controller_jobs.h"
#include "log.h"
#include "nodes.h"

#define POOL_REFUSAL_BACKOFF_MS 60000

/* The refusal slot of node + template, or -1. */
static int refusal_index(struct controller_pools *p, const char *node, const char *tmpl)
{
    for (int i = 0; i < CONTROLLER_POOL_REFUSALS; i++)
        if (strcmp(p->refused[i].node, node) == 0 && strcmp(p->refused[i].template_name, tmpl) == 0)
            return i;
    return -1;
}

static bool refused_recently(struct controller_pools *p, const char *node, const char *tmpl,
                             unsigned target)
{
    int i = refusal_index(p, node, tmpl);
    return i >= 0 && p->refused[i].target == target && clock_monotonic_ms() < p->refused[i].until_ms;
}

static void remember_refusal(struct controller_pools *p, const char *node, const char *tmpl,
                             unsigned target)
{
    int i = refusal_index(p, node, tmpl);
    /* Else the slot that expires first. */
    for (int j = 0; i < 0 && j < CONTROLLER_POOL_REFUSALS; j++)
        if (i < 0 || p->refused[j].until_ms < p->refused[i].until_ms)
            i = j;
    snprintf(p->refused[i].node, sizeof(p->refused[i].node), "%s", node);
    snprintf(p->refused[i].template_name, sizeof(p->refused[i].template_name), "%s", tmpl);
    p->refused[i].target = target;
    p->refused[i].until_ms = clock_monotonic_ms() + POOL_REFUSAL_BACKOFF_MS;
}

static void push_target(struct scheduler *s, struct controller_pools *pools, const char *node,
                        const char *tmpl, unsigned target, unsigned max)
{
    if (refused_recently(pools, node, tmpl, target))
        return;
    Airlock__Node__V1__WarmPool req = AIRLOCK__NODE__V1__WARM_POOL__INIT;
    req.template_ = (char *)tmpl;
    req.target = target;
    req.max = max;
    Airlock__Node__V1__NodeReply *reply = NULL;
    struct airlock_error e;
    int rc = nodes_call(s, node, NODE_OP(SET_POOL), &req.base, s->cfg.node_timeout_ms, &reply, &e);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    if (rc == 0) {
        log_info("warm pool target pushed", "node=%s template=%s target=%u max=%u", node, tmpl,
                 target, max);
    } else {
        log_warn("warm pool target refused", "node=%s template=%s target=%u error=\"%s\"", node,
                 tmpl, target, e.message);
        remember_refusal(pools, node, tmpl, target);
    }
}

void controller_pool_pass(struct scheduler *s, struct controller_pools *pools)
{
    struct airlock_error e;
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", s->cfg.node_dead_after_s);
    const char *params[] = { dead_after };
    PGresult *rows = db_query(
        &s->db,
        "SELECT n.id, t.id, t.warm_pool_target, coalesce(t.warm_pool_max, 0)"
        " FROM nodes n CROSS JOIN templates t LEFT JOIN node_warm_pools w ON w.node_id = n.id"
        " WHERE t.warm_pool_target IS NOT NULL"
        " AND n.last_seen > now() - make_interval(secs => $1::integer)"
        " AND (t.id = 'default' OR t.id = ANY(n.templates))" /* named: where it was built */
        " AND (coalesce((SELECT (p->>'min')::integer FROM jsonb_array_elements(w.pools) p"
        "   WHERE p->>'template' = t.id LIMIT 1), -1) <> t.warm_pool_target"
        /* Without a ceiling of the template's, the node's own (what
         * set_pool's max 0 gives): --warm-pool-max, at least the floor. */
        "  OR coalesce((SELECT (p->>'max')::integer FROM jsonb_array_elements(w.pools) p"
        "   WHERE p->>'template' = t.id LIMIT 1), -1)"
        "   <> coalesce(t.warm_pool_max, greatest(w.warm_pool_max, t.warm_pool_target)))",
        1, params, AIRLOCK_ERROR_MSG(&e));
    if (!rows) {
        log_warn("warm pool controller: database", "error=\"%s\"", e.message);
        return;
    }
    for (int i = 0; i < PQntuples(rows); i++)
        push_target(s, pools, PQgetvalue(rows, i, 0), PQgetvalue(rows, i, 1),
                    (unsigned)atoi(PQgetvalue(rows, i, 2)), (unsigned)atoi(PQgetvalue(rows, i, 3)));
    PQclear(rows);
}
