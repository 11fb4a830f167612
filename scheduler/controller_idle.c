/* Idle auto-suspend. Activity happens on the nodes (the gateway sends
 * exec and file bytes to vmhost directly), so the database cannot know it
 * first-hand. Rather than every node streaming activity into PostgreSQL,
 * the database only says which sandboxes MAY be idle (no transition and no
 * recorded activity for idle_timeout_s); for each of those the node is
 * asked (op get: last_activity_unix_ms, which counts API calls, output and
 * any exec still streaming). Newer activity is recorded and postpones the
 * suspend; otherwise the sandbox is suspended like a SuspendSandbox call.
 * Cost: one node request per sandbox per idle period, none for sandboxes
 * that are busy in the database's view. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "controller_jobs.h"
#include "log.h"
#include "nodes.h"
#include "scheduler_service.h"

#define IDLE_BATCH "20"

/* The node's last activity of the sandbox (unix ms), or -1 when the node
 * cannot say (then nothing is done this pass). */
static int64_t node_last_activity(struct scheduler *s, const char *node, const char *id)
{
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = (char *)id;
    Airlock__Node__V1__NodeReply *reply = NULL;
    struct airlock_error e;
    int rc = nodes_call(s, node, NODE_OP(GET), &req.base, s->cfg.node_timeout_ms, &reply, &e);
    int64_t at = -1;
    if (rc == 0 && reply->sandbox)
        at = reply->sandbox->last_activity_unix_ms;
    else
        log_info("idle check: node cannot say", "sandbox=%s node=%s error=\"%s\"", id, node,
                 e.message);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    return at;
}

static void record_activity(struct scheduler *s, const char *id, int64_t at_ms)
{
    struct airlock_error e;
    char at[32];
    snprintf(at, sizeof(at), "%" PRId64, at_ms);
    const char *params[] = { id, at };
    PGresult *res = db_query(&s->db,
                             "UPDATE sandboxes SET last_activity_at = to_timestamp($2::bigint / 1000.0)"
                             " WHERE id = $1",
                             2, params, AIRLOCK_ERROR_MSG(&e));
    if (!res)
        log_warn("idle check: activity not recorded", "sandbox=%s error=\"%s\"", id, e.message);
    PQclear(res);
}

static void idle_check(struct scheduler *s, const char *project_id, const char *id,
                       const char *node, int timeout_s, int64_t db_last_ms)
{
    int64_t node_last = node_last_activity(s, node, id);
    if (node_last < 0)
        return;
    int64_t last = node_last > db_last_ms ? node_last : db_last_ms;
    int64_t idle_ms = clock_realtime_ms() - last;
    if (node_last > db_last_ms)
        record_activity(s, id, node_last);
    if (idle_ms < (int64_t)timeout_s * 1000)
        return; /* active since: looked at again once idle that long */
    struct airlock_error e;
    char why[128], on[128];
    snprintf(why, sizeof(why), "idle for %" PRId64 " s (idle_timeout_s=%d)", idle_ms / 1000,
             timeout_s);
    struct transition_note note = { "controller:idle", why, "" };
    int rc = service_sandbox_op(s, project_id, id, SANDBOX_OP_SUSPEND, &note, on, sizeof(on), &e);
    if (rc == 0)
        log_info("sandbox suspended: idle", "sandbox=%s node=%s %s", id, node, why);
    else
        log_warn("idle suspend failed", "sandbox=%s node=%s error=\"%s\"", id, node, e.message);
}

void controller_idle_pass(struct scheduler *s)
{
    struct airlock_error e;
    /* greatest() skips a NULL last_activity_at; updated_at moves with every
     * transition, so a sandbox just resumed is not idle. */
    PGresult *rows = db_query(
        &s->db,
        "SELECT id, project_id, node_id, idle_timeout_s,"
        " (extract(epoch from greatest(updated_at, last_activity_at)) * 1000)::bigint"
        " FROM sandboxes WHERE idle_timeout_s > 0 AND state IN ('running', 'paused')"
        " AND node_id IS NOT NULL"
        " AND greatest(updated_at, last_activity_at) < now() - make_interval(secs => idle_timeout_s)"
        " ORDER BY 5 LIMIT " IDLE_BATCH,
        0, NULL, AIRLOCK_ERROR_MSG(&e));
    if (!rows) {
        log_warn("idle controller: database", "error=\"%s\"", e.message);
        return;
    }
    for (int i = 0; i < PQntuples(rows); i++)
        idle_check(s, PQgetvalue(rows, i, 1), PQgetvalue(rows, i, 0), PQgetvalue(rows, i, 2),
                   atoi(PQgetvalue(rows, i, 3)), atoll(PQgetvalue(rows, i, 4)));
    PQclear(rows);
}
