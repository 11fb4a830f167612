#include "nodes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "node_request.h"
#include "rpc_err.h"
#include "volume_spec.h"

#define HEARTBEAT_SUBJECT "airlock.node.*.heartbeat"
#define ROLL_CALL_SUBJECT "airlock.nodes.roll-call" /* see protos/node.proto */

/* The heartbeat's template versions as a text[] literal ("{a,b}"), or NULL
 * when out of memory; a ref with other characters than a template's
 * ([a-z0-9_.:-]) is left out. */
static char *templates_array(const Airlock__Node__V1__Heartbeat *hb)
{
    size_t size = 3;
    for (size_t i = 0; i < hb->n_templates; i++)
        size += strlen(hb->templates[i]) + 1;
    char *text = malloc(size), *p = text;
    if (!text)
        return NULL;
    *p++ = '{';
    for (size_t i = 0; i < hb->n_templates; i++) {
        const char *ref = hb->templates[i];
        if (!*ref || strspn(ref, "abcdefghijklmnopqrstuvwxyz0123456789_.:-") != strlen(ref))
            continue;
        p += sprintf(p, "%s%s", p == text + 1 ? "" : ",", ref);
    }
    strcpy(p, "}");
    return text;
}

static void on_heartbeat(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    struct scheduler *s = closure;
    Airlock__Node__V1__Heartbeat *hb = airlock__node__v1__heartbeat__unpack(
        NULL, (size_t)natsMsg_GetDataLength(msg), (const uint8_t *)natsMsg_GetData(msg));
    if (!hb || !*hb->node_id) {
        log_warn("ignoring malformed heartbeat", "subject=%s", natsMsg_GetSubject(msg));
        goto out;
    }
    /* NATS lets a node's user publish only its own heartbeat subject: the
     * node id in the message must be that one, or a node could speak for
     * another (and get that node's exec traffic sent to its address). */
    char own[256];
    snprintf(own, sizeof(own), "airlock.node.%s.heartbeat", hb->node_id);
    if (strcmp(own, natsMsg_GetSubject(msg)) != 0) {
        log_warn("ignoring heartbeat for another node", "subject=%s node=%s",
                 natsMsg_GetSubject(msg), hb->node_id);
        goto out;
    }
    char capacity[16], sandboxes[16], free_mb[32], started[32], dead_after[16];
    char vcpus_limit[16], vcpus_committed[16], memory_limit[32], memory_committed[32];
    snprintf(vcpus_limit, sizeof(vcpus_limit), "%u", hb->vcpus_limit);
    snprintf(vcpus_committed, sizeof(vcpus_committed), "%u", hb->vcpus_committed);
    snprintf(memory_limit, sizeof(memory_limit), "%llu", (unsigned long long)hb->memory_limit_mb);
    snprintf(memory_committed, sizeof(memory_committed), "%llu",
             (unsigned long long)hb->memory_committed_mb);
    snprintf(capacity, sizeof(capacity), "%u", hb->capacity);
    snprintf(sandboxes, sizeof(sandboxes), "%u", hb->sandboxes);
    snprintf(free_mb, sizeof(free_mb), "%llu", (unsigned long long)hb->free_memory_mb);
    snprintf(started, sizeof(started), "%" PRId64, hb->started_unix_ms);
    snprintf(dead_after, sizeof(dead_after), "%d", s->cfg.node_dead_after_s);
    /* Its warm pools go to node_warm_pools (node_pools.c). */
    char *templates = templates_array(hb);
    const char *params[] = { hb->node_id,  hb->vmhost_addr, capacity,
                             sandboxes,    free_mb,         hb->accel,
                             started,      dead_after,      templates ? templates : "{}",
                             vcpus_limit,  vcpus_committed, memory_limit,
                             memory_committed };
    struct airlock_error e;
    /* xmax = 0 only on a freshly inserted row: log new nodes once. A node
     * that restarted (new started_unix_ms) or was silent past dead_after
     * may have lost sandboxes: flag it for reconciliation (controllers). */
    PGresult *res = db_query(&s->db,
                             "INSERT INTO nodes (id, vmhost_addr, capacity, sandboxes,"
                             " free_memory_mb, accel, last_seen, started_unix_ms,"
                             " templates, vcpus_limit, vcpus_committed, memory_limit_mb,"
                             " memory_committed_mb)"
                             " VALUES ($1, $2, $3::integer, $4::integer, $5::bigint, $6, now(),"
                             " $7::bigint, $9::text[], $10::integer, $11::integer,"
                             " $12::bigint, $13::bigint)"
                             " ON CONFLICT (id) DO UPDATE SET vmhost_addr = EXCLUDED.vmhost_addr,"
                             " capacity = EXCLUDED.capacity, sandboxes = EXCLUDED.sandboxes,"
                             " free_memory_mb = EXCLUDED.free_memory_mb, accel = EXCLUDED.accel,"
                             " last_seen = now(), started_unix_ms = EXCLUDED.started_unix_ms,"
                             " templates = EXCLUDED.templates,"
                             " vcpus_limit = EXCLUDED.vcpus_limit,"
                             " vcpus_committed = EXCLUDED.vcpus_committed,"
                             " memory_limit_mb = EXCLUDED.memory_limit_mb,"
                             " memory_committed_mb = EXCLUDED.memory_committed_mb,"
                             " reconcile = nodes.reconcile"
                             "   OR nodes.started_unix_ms <> EXCLUDED.started_unix_ms"
                             "   OR nodes.last_seen < now() - make_interval(secs => $8::integer)"
                             " RETURNING (xmax = 0)",
                             13, params, AIRLOCK_ERROR_MSG(&e));
    free(templates);
    if (!res) {
        log_warn("heartbeat not recorded", "node=%s error=\"%s\"", hb->node_id, e.message);
        goto out;
    }
    if (PQgetvalue(res, 0, 0)[0] == 't')
        log_info("node registered",
                 "node=%s vmhost=%s capacity=%u vcpus_limit=%u memory_limit_mb=%llu accel=%s",
                 hb->node_id, hb->vmhost_addr, hb->capacity, hb->vcpus_limit,
                 (unsigned long long)hb->memory_limit_mb, hb->accel);
    PQclear(res);
out:
    if (hb)
        airlock__node__v1__heartbeat__free_unpacked(hb, NULL);
    natsMsg_Destroy(msg);
}

int nodes_follow_heartbeats(struct scheduler *s, char *err, size_t errlen)
{
    natsStatus st = natsConnection_Subscribe(&s->heartbeats, s->nc, HEARTBEAT_SUBJECT,
                                             on_heartbeat, s);
    if (st != NATS_OK) {
        snprintf(err, errlen, "nats: subscribe %s: %s", HEARTBEAT_SUBJECT, natsStatus_GetText(st));
        return -1;
    }
    /* Ask every node for a heartbeat now, so placement works right after
     * a (re)start instead of one heartbeat period later. */
    natsConnection_Publish(s->nc, ROLL_CALL_SUBJECT, NULL, 0);
    return 0;
}

int nodes_place(struct scheduler *s, const char *sandbox_id, char *node_id, size_t idlen,
                struct airlock_error *e)
{
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", s->cfg.node_dead_after_s);
    const char *params[] = { sandbox_id, dead_after };
    PGresult *res = db_query(&s->db,
                             "UPDATE sandboxes SET node_id = "
                             NODES_PLACEMENT("sandboxes.template", "sandboxes.cpus",
                                             "sandboxes.memory_mb", "$2", "''", "''")
                             " WHERE id = $1 RETURNING coalesce(node_id, ''), template, cpus,"
                             " memory_mb",
                             2, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = 0;
    if (PQntuples(res) != 1 || !*PQgetvalue(res, 0, 0)) {
        if (PQntuples(res) != 1)
            rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "sandbox %s is gone", sandbox_id);
        else if (strcmp(PQgetvalue(res, 0, 1), "default") != 0)
            rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY,
                                   "no live node that has template %s (or can fetch it from the "
                                   "shared snapshot store) has room for a sandbox of %s vCPUs "
                                   "and %s MiB",
                                   PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2),
                                   PQgetvalue(res, 0, 3));
        else
            rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY,
                                   "no live node has room for a sandbox of %s vCPUs and %s MiB",
                                   PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 3));
    } else {
        snprintf(node_id, idlen, "%s", PQgetvalue(res, 0, 0));
    }
    PQclear(res);
    return rc;
}

int nodes_place_elsewhere(struct scheduler *s, const char *sandbox_id, const char *except,
                          bool through_store, const char *op, char *node_id, size_t idlen,
                          struct airlock_error *e)
{
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", s->cfg.node_dead_after_s);
    const char *params[] = { sandbox_id, dead_after, except };
    PGresult *res = db_query(&s->db,
                             "SELECT coalesce(" NODES_PLACEMENT("s.template", "s.cpus",
                                                                "s.memory_mb", "$2", "$3::text",
                                                                "''")
                             ", ''), s.template, s.cpus, s.memory_mb, s.volumes <> '[]'"
                             " FROM sandboxes s WHERE s.id = $1",
                             3, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = 0;
    if (PQntuples(res) != 1)
        rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "sandbox %s is gone", sandbox_id);
    else if (!through_store && PQgetvalue(res, 0, 4)[0] == 't') /* on its node alone */
        rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY,
                               "sandbox %s has volumes, which a live migration does not carry: "
                               "it stays on node %s (suspend it to move it)",
                               sandbox_id, except);
    else if (!*PQgetvalue(res, 0, 0))
        rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY,
                               "no other live node%s%s has room for a sandbox of %s vCPUs and %s "
                               "MiB",
                               strcmp(PQgetvalue(res, 0, 1), "default") ? " with template " : "",
                               strcmp(PQgetvalue(res, 0, 1), "default") ? PQgetvalue(res, 0, 1)
                                                                        : "",
                               PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 3));
    else
        snprintf(node_id, idlen, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    if (rc < 0 && e->class == AIRLOCK_ERR_CAPACITY)
        metric_add(s->metrics.placement_failures, METRIC_LABELS(op), 1);
    return rc;
}

bool nodes_gone(struct scheduler *s, const char *node_id, char *since, size_t sincelen,
                struct airlock_error *e)
{
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", s->cfg.node_dead_after_s);
    const char *params[] = { node_id, dead_after };
    /* No row: a node the database never heard from is as good as gone. */
    PGresult *res = db_query(&s->db,
                             "SELECT coalesce(bool_and(last_seen < now() - "
                             "make_interval(secs => $2::integer)), true),"
                             " coalesce(to_char(max(last_seen) AT TIME ZONE 'UTC',"
                             " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '')"
                             " FROM nodes WHERE id = $1",
                             2, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return false;
    bool gone = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
    if (gone)
        snprintf(since, sincelen, "%s", PQgetvalue(res, 0, 1));
    PQclear(res);
    return gone;
}

int nodes_call(struct scheduler *s, const char *node_id, node_op op, const ProtobufCMessage *req,
               int timeout_ms, Airlock__Node__V1__NodeReply **reply, struct airlock_error *e)
{
    *reply = NULL;
    char subject[256];
    if (node_op_subject(node_id, op, subject, sizeof(subject)) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "no node operation %d for node %s",
                                 (int)op, node_id);
    size_t len = protobuf_c_message_get_packed_size(req);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    protobuf_c_message_pack(req, buf);
    natsMsg *resp = NULL;
    int rc = node_request(s, node_id, op, subject, buf, (int)len, timeout_ms, &resp, e);
    free(buf);
    if (rc < 0)
        return rc;
    return nodes_reply_take(node_id, op, resp, reply, e);
}

int nodes_reply_take(const char *node_id, node_op op, natsMsg *msg,
                     Airlock__Node__V1__NodeReply **reply, struct airlock_error *e)
{
    *reply = NULL;
    Airlock__Node__V1__NodeReply *r = airlock__node__v1__node_reply__unpack(
        NULL, (size_t)natsMsg_GetDataLength(msg), (const uint8_t *)natsMsg_GetData(msg));
    natsMsg_Destroy(msg);
    if (!r)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "node %s sent a malformed reply to %s",
                                 node_id, node_op_name(op));
    /* The node's status is its answer: classified here, once, it reaches
     * the scheduler's caller as the node gave it. */
    enum airlock_err class = airlock_error_class_of((grpc_status_code)r->status);
    if (class != AIRLOCK_OK) {
        airlock_error_set(e, class, "%s", r->message);
        airlock__node__v1__node_reply__free_unpacked(r, NULL);
        return -1;
    }
    *reply = r;
    return 0;
}

/* The volumes sandbox id attached itself (not a snapshot) that are not on
 * node_id (any more): moved with the sandbox, or deleted since. NULL with
 * none or when the database cannot say (the images then stay: only space). */
static PGresult *moved_volumes(struct scheduler *s, const char *node_id, const char *id)
{
    const char *params[] = { id, node_id };
    struct airlock_error e;
    PGresult *res = db_query(&s->db,
                             "SELECT x.volume_id FROM sandboxes s, jsonb_to_recordset(s.volumes)"
                             " AS x(volume_id text, snapshot_id text)"
                             " LEFT JOIN volumes v ON v.id::text = x.volume_id"
                             " WHERE s.id = $1 AND coalesce(x.snapshot_id, '') = ''"
                             " AND v.node_id IS DISTINCT FROM $2",
                             2, params, AIRLOCK_ERROR_MSG(&e));
    if (!res)
        log_warn("moved volumes not known: their old images stay", "sandbox=%s node=%s "
                 "error=\"%s\"", id, node_id, e.message);
    return res;
}

int nodes_delete_sandbox(struct scheduler *s, const char *node_id, const char *id,
                         const char *keep_stored, bool moved, struct airlock_error *e)
{
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = (char *)id;
    req.store_object = (char *)(keep_stored ? keep_stored : "");
    req.keep_checkpoints = moved;
    PGresult *volumes = moved_volumes(s, node_id, id);
    char *ids[VOLUME_MOUNTS_MAX];
    for (int i = 0; volumes && i < PQntuples(volumes) && i < VOLUME_MOUNTS_MAX; i++)
        ids[req.n_moved_volume_ids++] = PQgetvalue(volumes, i, 0);
    req.moved_volume_ids = ids;
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc = nodes_call(s, node_id, NODE_OP(DELETE), &req.base, s->cfg.node_timeout_ms, &reply, e);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    PQclear(volumes);
    return rc < 0 && e->class != AIRLOCK_ERR_NOT_FOUND ? -1 : 0; /* gone already: done */
}
