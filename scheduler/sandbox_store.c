#include "sandbox_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes.h"
#include "policy_json.h"
#include "quota_store.h"
#include "strbuf.h"
#include "string_map_json.h"
#include "template_store.h"

/* A sandbox row as store_sandbox_msg() reads it (this column order), from
 * rows named s (the table or a CTE over it) joined with its node n. */
#define SANDBOX_COLUMNS                                                                   \
    " s.id, s.project_id, s.state, s.template, s.cpus, s.memory_mb,"                      \
    " coalesce(s.node_id, ''), coalesce(n.vmhost_addr, ''),"                              \
    " (extract(epoch from s.created_at) * 1000)::bigint,"                                 \
    " (extract(epoch from s.updated_at) * 1000)::bigint,"                                 \
    " s.error, s.env::text, s.metadata::text, s.idle_timeout_s,"                          \
    " coalesce(s.network::text, ''), s.ttl_s, s.store_object, s.checkpoint_every_s,"     \
    " coalesce(rp.name, ''), coalesce((extract(epoch from rp.created_at) * 1000)::bigint, 0),"  \
    " coalesce((extract(epoch from s.expires_at) * 1000)::bigint, 0), s.on_timeout,"          \
    " s.public_ports, s.traffic_token, s.volumes::text"
#define SANDBOX_COLUMN_COUNT 25
/* rp: its restore point, the newest checkpoint in the shared store. */
#define SANDBOX_JOINS(rows)                                                               \
    rows " s LEFT JOIN nodes n ON n.id = s.node_id"                                       \
    " LEFT JOIN LATERAL (SELECT c.name, c.created_at FROM checkpoints c"                  \
    "   WHERE c.sandbox_id = s.id AND c.store_object <> ''"                               \
    "   ORDER BY c.created_at DESC, c.name DESC LIMIT 1) rp ON true"
#define SANDBOX_FROM(rows) " FROM " SANDBOX_JOINS(rows)
#define SANDBOX_SELECT "SELECT" SANDBOX_COLUMNS SANDBOX_FROM("sandboxes")

/* A transition row's time as RFC3339 UTC with milliseconds. */
#define TRANSITION_AT_RFC3339(column) \
    "to_char(" column " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* The audit row t of each sandbox row s (a CTE) a statement wrote (the
 * SQL expressions given). */
#define AUDIT_ROW(who, from, to, why, request_id)                                         \
    " t AS (INSERT INTO sandbox_transitions (sandbox_id, who, from_state, to_state, why,"  \
    "   request_id) SELECT id, " who ", " from ", " to ", " why ", " request_id            \
    "   FROM s RETURNING sandbox_id, at)"
/* The answer of such a statement: each sandbox as store_sandbox_msg()
 * reads it, then its audit row's time. */
#define ANSWER                                                                             \
    " SELECT" SANDBOX_COLUMNS ", " TRANSITION_AT_RFC3339("t.at") SANDBOX_FROM("s")          \
    " JOIN t ON t.sandbox_id = s.id"
/* The same for a statement that began with QUOTA_GATE: one row with the
 * sandbox's columns NULL when it wrote none, and the gate's columns
 * (from ADMITTED_QUOTA_COLUMN) on every row. */
#define ADMITTED_ANSWER                                                                    \
    " SELECT" SANDBOX_COLUMNS ", " TRANSITION_AT_RFC3339("t.at") "," QUOTA_ANSWER_COLUMNS  \
    " FROM q LEFT JOIN (" SANDBOX_JOINS("s") " JOIN t ON t.sandbox_id = s.id) ON true"
#define ADMITTED_QUOTA_COLUMN (SANDBOX_COLUMN_COUNT + 1)

/* Whether row 0 of an ADMITTED_ANSWER holds a sandbox the statement wrote. */
static bool admitted_written(PGresult *res)
{
    return PQntuples(res) > 0 && !PQgetisnull(res, 0, 0);
}

/* The one answer for a sandbox the caller may not see: a foreign, deleted
 * or unknown id alike. Returns -1. */
static int sandbox_not_found(struct airlock_error *e, const char *id)
{
    return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "sandbox %s not found", id);
}

static void event_fill(struct sandbox_event *ev, const char *project_id, const char *id,
                       const char *previous, const char *state, const char *at)
{
    snprintf(ev->project_id, sizeof(ev->project_id), "%s", project_id);
    snprintf(ev->sandbox_id, sizeof(ev->sandbox_id), "%s", id);
    ev->previous = previous;
    ev->state = state;
    snprintf(ev->at, sizeof(ev->at), "%s", at);
}

/* The JSON columns of a row, by where store_sandbox_msg puts them. */
enum { COLUMN_ENV, COLUMN_METADATA, COLUMN_NETWORK, COLUMN_VOLUMES };
static const int json_column_index[SANDBOX_JSON_COLUMNS] = { 11, 12, 14, 24 };

/* The volumes column (a JSON array of VolumeMounts with their ids,
 * volume_attach.h) as the message's mounts, pointing into it. */
static void volumes_msg(struct sandbox_msg *out)
{
    json_t *list = out->columns[COLUMN_VOLUMES], *v;
    size_t i;
    json_array_foreach(list, i, v) {
        if (i >= VOLUME_MOUNTS_MAX)
            break;
        Airlock__V1__VolumeMount *m = &out->mounts[i];
        airlock__v1__volume_mount__init(m);
        m->name = (char *)json_string_value(json_object_get(v, "name"));
        m->path = (char *)json_string_value(json_object_get(v, "path"));
        m->read_only = json_is_true(json_object_get(v, "read_only"));
        m->slot = (uint32_t)i;
        if (!m->name || !m->path)
            break;
        out->mount_ptrs[i] = m;
        out->msg.n_volumes = i + 1;
    }
    out->msg.volumes = out->mount_ptrs;
}

int store_sandbox_msg(PGresult *res, int row, struct sandbox_msg *out, struct airlock_error *e)
{
    Airlock__Scheduler__V1__Sandbox *msg = &out->msg;
    airlock__scheduler__v1__sandbox__init(msg);
    airlock__egress__v1__policy__init(&out->policy);
    msg->id = PQgetvalue(res, row, 0);
    msg->project_id = PQgetvalue(res, row, 1);
    msg->state = PQgetvalue(res, row, 2);
    /* "py:2", not the row's "<project>.py:2" */
    msg->template_ = (char *)template_display_name(PQgetvalue(res, row, 3), msg->project_id);
    msg->cpus = (uint32_t)atoi(PQgetvalue(res, row, 4));
    msg->memory_mb = (uint32_t)atoi(PQgetvalue(res, row, 5));
    msg->node_id = PQgetvalue(res, row, 6);
    msg->vmhost_addr = PQgetvalue(res, row, 7);
    msg->created_unix_ms = atoll(PQgetvalue(res, row, 8));
    msg->updated_unix_ms = atoll(PQgetvalue(res, row, 9));
    msg->error = PQgetvalue(res, row, 10);
    msg->idle_timeout_s = (uint32_t)atoi(PQgetvalue(res, row, 13));
    msg->ttl_s = (uint32_t)atoi(PQgetvalue(res, row, 15));
    msg->checkpoint_every_s = (uint32_t)atoi(PQgetvalue(res, row, 17));
    msg->restore_point = PQgetvalue(res, row, 18);
    msg->restore_point_unix_ms = atoll(PQgetvalue(res, row, 19));
    msg->expires_unix_ms = atoll(PQgetvalue(res, row, 20));
    msg->on_timeout = PQgetvalue(res, row, 21);
    msg->public_ports = PQgetvalue(res, row, 22)[0] == 't';
    msg->traffic_token = PQgetvalue(res, row, 23);
    for (int c = 0; c < SANDBOX_JSON_COLUMNS; c++) {
        const char *text = PQgetvalue(res, row, json_column_index[c]);
        out->columns[c] = *text ? json_loads(text, 0, NULL) : NULL; /* network: '' = none */
    }
    volumes_msg(out);
    msg->env = (void *)string_map_from_json(
        out->columns[COLUMN_ENV], &airlock__scheduler__v1__sandbox__env_entry__descriptor,
        &msg->n_env);
    msg->metadata = (void *)string_map_from_json(
        out->columns[COLUMN_METADATA], &airlock__scheduler__v1__sandbox__metadata_entry__descriptor,
        &msg->n_metadata);
    if (!msg->env || !msg->metadata)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    json_t *network = out->columns[COLUMN_NETWORK];
    if (!network)
        return 0;
    char why[256];
    if (policy_json_to_proto(network, "network", &out->policy, why, sizeof(why)) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "sandbox %s: stored %s", msg->id, why);
    msg->network = &out->policy;
    return 0;
}

void store_sandbox_msg_free(struct sandbox_msg *m)
{
    free(m->msg.env);
    free(m->msg.metadata);
    m->msg.env = NULL;
    m->msg.metadata = NULL;
    m->msg.network = NULL;
    policy_json_release(&m->policy);
    m->msg.volumes = NULL;
    m->msg.n_volumes = 0;
    for (int c = 0; c < SANDBOX_JSON_COLUMNS; c++) {
        json_decref(m->columns[c]);
        m->columns[c] = NULL;
    }
}

const char *store_sandbox_state(PGresult *res, int row)
{
    return PQgetvalue(res, row, 2);
}

const char *store_sandbox_template_id(PGresult *res, int row)
{
    return PQgetvalue(res, row, 3);
}

const char *store_sandbox_node(PGresult *res, int row)
{
    return PQgetvalue(res, row, 6);
}

const char *store_sandbox_volumes(PGresult *res, int row)
{
    return PQgetvalue(res, row, json_column_index[COLUMN_VOLUMES]);
}

const char *store_sandbox_store_object(PGresult *res, int row)
{
    return PQgetvalue(res, row, 16);
}

void store_sandbox_ask(PGresult *res, int row, int64_t n, struct quota_values *request)
{
    quota_sandboxes(n, atoll(PQgetvalue(res, row, 4)), atoll(PQgetvalue(res, row, 5)), request);
}

/* The one live sandbox id a prepared statement's WHERE names (params end
 * with id), or not found. */
static int sandbox_get_one(struct db *db, const char *stmt, const char *sql, int n,
                           const char *const *params, const char *id, PGresult **out,
                           struct airlock_error *e)
{
    PGresult *res = db_query_prepared(db, stmt, sql, n, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    if (PQntuples(res) != 1) {
        PQclear(res);
        return sandbox_not_found(e, id);
    }
    *out = res;
    return 0;
}

int store_sandbox_get(struct db *db, const char *project_id, const char *id, PGresult **out,
                      struct airlock_error *e)
{
    const char *params[] = { project_id, id };
    return sandbox_get_one(
        db, "sandbox_get",
        SANDBOX_SELECT " WHERE s.project_id = $1 AND s.id = $2 AND s.state <> 'deleted'", 2, params,
        id, out, e);
}

int store_sandbox_get_any_project(struct db *db, const char *id, PGresult **out,
                                  struct airlock_error *e)
{
    const char *params[] = { id };
    return sandbox_get_one(db, "sandbox_get_any_project",
                           SANDBOX_SELECT " WHERE s.id = $1 AND s.state <> 'deleted'", 1, params,
                           id, out, e);
}

int store_sandbox_list(struct db *db, const char *project_id, PGresult **out,
                       struct airlock_error *e)
{
    const char *params[] = { project_id };
    *out = db_query(db,
                    SANDBOX_SELECT " WHERE s.project_id = $1 AND s.state <> 'deleted'"
                                   " ORDER BY s.created_at, s.id",
                    1, params, AIRLOCK_ERROR_MSG(e));
    return *out ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

/* Why nothing was inserted for req: its idempotency key names an earlier
 * sandbox (*row, *existing), the quota gate refused (its verdict in row 0
 * of gate), or its template is not the project's. */
static int insert_refused(struct db *db, const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                          const struct quota_ask *ask, PGresult *gate, PGresult **row,
                          bool *existing, struct airlock_error *e)
{
    PGresult *res;
    if (*req->idempotency_key) {
        const char *lookup[] = { req->project_id, req->idempotency_key };
        res = db_query(db, SANDBOX_SELECT " WHERE s.project_id = $1 AND s.idempotency_key = $2", 2,
                       lookup, AIRLOCK_ERROR_MSG(e));
        if (!res)
            return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
        if (PQntuples(res) == 1 && strcmp(store_sandbox_state(res, 0), "deleted") == 0) {
            sandbox_not_found(e, PQgetvalue(res, 0, 0));
            PQclear(res);
            return -1;
        }
        if (PQntuples(res) == 1) {
            *row = res;
            *existing = true;
            return 0;
        }
        PQclear(res);
    }
    if (quota_ask_answer(ask, gate, 0, ADMITTED_QUOTA_COLUMN, e) < 0)
        return -1;
    const char *tparams[] = { req->template_, req->project_id };
    res = db_query(db,
                   "SELECT 1 FROM templates WHERE id = $1 AND (project_id IS NULL OR project_id = $2)",
                   2, tparams, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int templates = PQntuples(res);
    PQclear(res);
    if (templates == 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "template: \"%s\" does not exist",
                                 req->template_);
    return airlock_error_set(e, AIRLOCK_ERR_ABORTED, "sandbox with idempotency key %s vanished",
                             req->idempotency_key);
}

/* j (taken) as the text of a jsonb column, malloc'd; NULL when j is NULL
 * (err says why already) or out of memory. */
static char *column_text(json_t *j, char *err, size_t errlen)
{
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (j && !text)
        snprintf(err, errlen, "out of memory");
    json_decref(j);
    return text;
}

char *store_policy_text(const Airlock__Egress__V1__Policy *policy, struct airlock_error *e)
{
    char *text = column_text(policy_json_from_proto(policy, "network", AIRLOCK_ERROR_MSG(e)),
                             AIRLOCK_ERROR_MSG(e));
    if (!text)
        airlock_error_classify(e, AIRLOCK_ERR_INVALID);
    return text;
}

/* A create request's env, metadata and network as the texts of their
 * columns (malloc'd; network NULL: none given). */
struct request_columns {
    char *env, *metadata, *network;
};

static void request_columns_free(struct request_columns *c)
{
    free(c->env);
    free(c->metadata);
    free(c->network);
}

static int request_columns(const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                           struct request_columns *c, struct airlock_error *e)
{
    *c = (struct request_columns){ 0 };
    c->env = column_text(
        string_map_to_json((ProtobufCMessage **)req->env, req->n_env, "env", AIRLOCK_ERROR_MSG(e)),
        AIRLOCK_ERROR_MSG(e));
    if (c->env)
        c->metadata =
            column_text(string_map_to_json((ProtobufCMessage **)req->metadata, req->n_metadata,
                                           "metadata", AIRLOCK_ERROR_MSG(e)),
                        AIRLOCK_ERROR_MSG(e));
    if (c->metadata && req->network)
        c->network = store_policy_text(req->network, e);
    if (c->metadata && (!req->network || c->network))
        return 0;
    request_columns_free(c);
    *c = (struct request_columns){ 0 };
    return airlock_error_classify(e, AIRLOCK_ERR_INVALID);
}

int store_sandbox_insert(struct db *db, const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                         const char *id, const struct volume_attach *volumes,
                         int node_dead_after_s,
                         const struct quota_values *quota_defaults,
                         const struct transition_note *note, struct sandbox_event *created,
                         PGresult **row, bool *existing, struct airlock_error *e)
{
    char cpus[16], memory[16], idle[16], ttl[16], dead_after[16], every[16], timeout[16];
    snprintf(timeout, sizeof(timeout), "%u", req->timeout_s);
    snprintf(cpus, sizeof(cpus), "%u", req->cpus);
    snprintf(memory, sizeof(memory), "%u", req->memory_mb);
    snprintf(idle, sizeof(idle), "%u", req->idle_timeout_s);
    snprintf(ttl, sizeof(ttl), "%u", req->ttl_s);
    snprintf(every, sizeof(every), "%u", req->checkpoint_every_s);
    snprintf(dead_after, sizeof(dead_after), "%d", node_dead_after_s);
    struct quota_ask ask = { req->project_id, { { 0 } }, quota_defaults };
    quota_sandboxes(1, req->cpus, req->memory_mb, &ask.request);
    struct quota_ask_params quota;
    quota_ask_params(&ask, &quota);
    *row = NULL;
    *existing = false;
    struct request_columns text;
    int rc = request_columns(req, &text, e);
    if (rc < 0)
        goto out;
    const char *params[] = { id,          req->project_id, req->template_, cpus,
                             memory,      text.env,        text.metadata,  idle,
                             req->idempotency_key, note->who, note->request_id,
                             text.network ? text.network : "", ttl, dead_after,
                             quota.request, quota.defaults, every, timeout,
                             *req->on_timeout ? req->on_timeout : "delete",
                             req->public_ports ? "true" : "false", volumes->json,
                             volumes->node };
    /* One round trip: the quota gate, the template check, the placement
     * (NULL when no node has room: create_on_node says why; only the node
     * of its volumes when they have one), the sandbox, its claims on
     * volumes (a volume held already violates sandbox_volumes_one_holder:
     * the whole statement fails) and its first transition, atomically,
     * answered with the row. A refusal of the gate, a duplicate
     * idempotency key or an unknown template inserts nothing. */
    PGresult *res = db_query_prepared(
        db, "sandbox_insert",
        "WITH" QUOTA_GATE("$2", "$15", "$16") ","
        " s AS (INSERT INTO sandboxes (id, project_id, state, template, cpus, memory_mb, env,"
        "   metadata, idle_timeout_s, idempotency_key, network, ttl_s, checkpoint_every_s,"
        "   expires_at, on_timeout, public_ports, volumes, node_id)"
        "   SELECT $1, $2, 'creating', $3, $4::integer, $5::integer, $6::jsonb, $7::jsonb,"
        "   $8::integer, NULLIF($9, ''), NULLIF($12, '')::jsonb, $13::integer, $17::integer,"
        "   CASE WHEN $18::integer > 0 THEN now() + make_interval(secs => $18::integer) END,"
        "   $19, $20::boolean, $21::jsonb, "
        NODES_PLACEMENT("$3::text", "$4::integer", "$5::integer", "$14", "''", "$22::text")
        "   WHERE EXISTS (SELECT 1 FROM templates WHERE id = $3"
        "     AND (project_id IS NULL OR project_id = $2)) AND" QUOTA_ADMITTED
        "   ON CONFLICT (project_id, idempotency_key) DO NOTHING RETURNING *),"
        " a AS (INSERT INTO sandbox_volumes (sandbox_id, slot, volume_id, snapshot_id, path,"
        "   read_only) SELECT s.id, v.slot, v.volume_id::uuid, NULLIF(v.snapshot_id, '')::uuid,"
        "   v.path, v.read_only FROM s, jsonb_to_recordset(s.volumes)"
        "   AS v(slot integer, volume_id text, snapshot_id text, path text, read_only boolean)),"
        AUDIT_ROW("$10", "NULL", "'creating'", "'create'", "$11") ADMITTED_ANSWER,
        22, params, AIRLOCK_ERROR_MSG(e));
    if (!res) {
        rc = airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    } else if (admitted_written(res)) {
        event_fill(created, req->project_id, id, NULL, "creating",
                   PQgetvalue(res, 0, SANDBOX_COLUMN_COUNT));
        *row = res;
    } else {
        rc = insert_refused(db, req, &ask, res, row, existing, e);
        PQclear(res);
    }
out:
    request_columns_free(&text);
    return rc;
}

int store_forks_insert(struct db *db, PGresult *parent, const char *const *fork_ids, size_t n,
                       const struct fork_volume_records *volumes,
                       const struct quota_values *quota_defaults,
                       const struct transition_note *note, PGresult **rows,
                       struct airlock_error *e)
{
    const char *parent_id = PQgetvalue(parent, 0, 0);
    struct quota_ask ask = { PQgetvalue(parent, 0, 1), { { 0 } }, quota_defaults };
    store_sandbox_ask(parent, 0, (int64_t)n, &ask.request);
    ask.request.v[QUOTA_VOLUMES] = volumes->volumes;
    ask.request.v[QUOTA_VOLUME_MB] = volumes->volume_mb;
    struct quota_ask_params quota;
    quota_ask_params(&ask, &quota);
    /* The ids as a text[]: they are the node's, [a-z0-9_-] only. */
    struct strbuf ids = { 0 };
    strbuf_append(&ids, "{");
    for (size_t i = 0; i < n; i++)
        strbuf_appendf(&ids, "%s%s", i ? "," : "", fork_ids[i]);
    strbuf_append(&ids, "}");
    if (strbuf_failed(&ids)) {
        strbuf_free(&ids);
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    }
    char why[200];
    snprintf(why, sizeof(why), "fork of %s", parent_id);
    const char *params[] = { ids.data,        parent_id,     note->who,      why,
                             note->request_id, quota.request, quota.defaults, volumes->clones,
                             volumes->columns };
    /* The quota gate, every fork, its clones of volumes, its claims on
     * them and its first transition in one statement: all of them or
     * none (the claims' foreign keys see the clones: they are checked at
     * the statement's end). */
    PGresult *res = db_query(
        db,
        "WITH" QUOTA_GATE("(SELECT project_id FROM sandboxes WHERE id = $2)", "$6", "$7") ","
        " nv AS (INSERT INTO volumes (id, project_id, name, size_mb, node_id)"
        "   SELECT x.id::uuid, v.project_id, x.name, v.size_mb, v.node_id"
        "   FROM jsonb_to_recordset($8::jsonb) AS x(id text, name text, src text)"
        "   JOIN volumes v ON v.id = x.src::uuid"
        "   WHERE EXISTS (SELECT 1 FROM sandboxes WHERE id = $2) AND" QUOTA_ADMITTED
        "   RETURNING id),"
        " s AS (INSERT INTO sandboxes (id, project_id, state, template, cpus, memory_mb,"
        "   node_id, env, metadata, idle_timeout_s, ttl_s, network, public_ports, volumes)"
        "   SELECT f.id, p.project_id, 'running', p.template, p.cpus, p.memory_mb, p.node_id,"
        "   p.env, p.metadata, p.idle_timeout_s, p.ttl_s, p.network, p.public_ports,"
        "   coalesce($9::jsonb -> (array_position($1::text[], f.id) - 1), '[]')"
        "   FROM sandboxes p, unnest($1::text[]) f(id) WHERE p.id = $2 AND" QUOTA_ADMITTED
        "   RETURNING *),"
        " a AS (INSERT INTO sandbox_volumes (sandbox_id, slot, volume_id, snapshot_id, path,"
        "   read_only) SELECT s.id, v.slot, v.volume_id::uuid, NULLIF(v.snapshot_id, '')::uuid,"
        "   v.path, v.read_only FROM s, jsonb_to_recordset(s.volumes)"
        "   AS v(slot integer, volume_id text, snapshot_id text, path text, read_only boolean)),"
        AUDIT_ROW("$3", "NULL", "'running'", "$4", "$5") ADMITTED_ANSWER
        " ORDER BY array_position($1::text[], s.id)",
        9, params, AIRLOCK_ERROR_MSG(e));
    strbuf_free(&ids);
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    if (admitted_written(res)) {
        *rows = res;
        return 0;
    }
    int rc = quota_ask_answer(&ask, res, 0, ADMITTED_QUOTA_COLUMN, e);
    if (rc == 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_ABORTED, "sandbox %s vanished while forking",
                               parent_id);
    PQclear(res);
    return rc;
}

void store_fork_event(PGresult *rows, int row, struct sandbox_event *out)
{
    event_fill(out, PQgetvalue(rows, row, 1), PQgetvalue(rows, row, 0), NULL, "running",
               PQgetvalue(rows, row, SANDBOX_COLUMN_COUNT));
}

int store_sandbox_release_key(struct db *db, const char *id, struct airlock_error *e)
{
    const char *params[] = { id };
    PGresult *res = db_query(db, "UPDATE sandboxes SET idempotency_key = NULL WHERE id = $1", 1,
                             params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    PQclear(res);
    return 0;
}

/* After s (a CTE of the moved sandbox's id): the volumes it holds move
 * with it to node (their images went with its suspend through the shared
 * store; docs/volumes.md "Across nodes"); their snapshots stay where they
 * were taken. */
#define VOLUMES_FOLLOW(node)                                                                     \
    ", v AS (UPDATE volumes SET node_id = " node " WHERE id IN (SELECT sv.volume_id"             \
    "  FROM sandbox_volumes sv JOIN s ON sv.sandbox_id = s.id WHERE sv.snapshot_id IS NULL))"

int store_sandbox_set_stored(struct db *db, const char *id, const char *node_id,
                             const char *store_object, struct airlock_error *e)
{
    const char *params[] = { id, node_id, store_object };
    PGresult *res = db_query(db,
                             "WITH s AS (UPDATE sandboxes SET node_id = $2, store_object = $3"
                             "  WHERE id = $1 AND state <> 'deleted' RETURNING id)" VOLUMES_FOLLOW("$2")
                             " SELECT id FROM s",
                             3, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int updated = PQntuples(res);
    PQclear(res);
    return updated ? 0 : sandbox_not_found(e, id);
}

int store_sandbox_move_suspended(struct db *db, const char *id, const char *from, const char *to,
                                 const char *store_object, struct airlock_error *e)
{
    const char *params[] = { id, from, to, store_object };
    PGresult *res = db_query(db,
                             "WITH s AS (UPDATE sandboxes SET node_id = $3, updated_at = now()"
                             "  WHERE id = $1 AND node_id = $2 AND state = 'suspended'"
                             "  AND store_object = $4 RETURNING id)" VOLUMES_FOLLOW("$3")
                             " SELECT id FROM s",
                             4, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int moved = PQntuples(res);
    PQclear(res);
    return moved ? 0 : 1;
}

int store_sandbox_set_network(struct db *db, const char *project_id, const char *id,
                              const char *policy_text, struct airlock_error *e)
{
    const char *params[] = { project_id, id, policy_text };
    PGresult *res = db_query(db,
                             "UPDATE sandboxes SET network = $3::jsonb, updated_at = now()"
                             " WHERE project_id = $1 AND id = $2 AND state <> 'deleted' RETURNING id",
                             3, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int updated = PQntuples(res);
    PQclear(res);
    if (!updated) {
        return sandbox_not_found(e, id);
    }
    return 0;
}

int store_sandbox_set_timeout(struct db *db, const char *project_id, const char *id,
                              uint32_t timeout_s, bool extend_only, struct airlock_error *e)
{
    char secs[16];
    snprintf(secs, sizeof(secs), "%u", timeout_s);
    const char *params[] = { project_id, id, secs, extend_only ? "t" : "f" };
    PGresult *res = db_query(
        db,
        "UPDATE sandboxes SET updated_at = now(), expires_at ="
        "   CASE WHEN $4::boolean AND expires_at > now() + make_interval(secs => $3::integer)"
        "   THEN expires_at ELSE now() + make_interval(secs => $3::integer) END"
        " WHERE project_id = $1 AND id = $2 AND state <> 'deleted' RETURNING id",
        4, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int updated = PQntuples(res);
    PQclear(res);
    return updated ? 0 : sandbox_not_found(e, id);
}

/* store_transition's compare-and-set on the state, $1..$6 its
 * parameters; the statement ends the CTE s. A suspended sandbox keeps no
 * deadline (E2B's paused ones do not expire; its connect sets a new one). */
#define TRANSITION_UPDATE                                                                   \
    " s AS (UPDATE sandboxes SET state = $3, updated_at = now(),"                           \
    "   error = CASE WHEN $3 = 'error' THEN $6 ELSE '' END,"                                \
    "   expires_at = CASE WHEN $3 = 'suspended' THEN NULL ELSE expires_at END"              \
    "   WHERE id = $1 AND state = $2"
#define TRANSITION_AUDIT_ROW AUDIT_ROW("$4", "$2", "$3", "$6", "$5")

int store_transition(struct db *db, const char *id, enum sandbox_state from, enum sandbox_state to,
                     const struct transition_note *note, const struct quota_ask *ask,
                     struct sandbox_event *committed, PGresult **row, struct airlock_error *e)
{
    if (row)
        *row = NULL;
    if (!sandbox_transition_allowed(from, to))
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "sandbox %s: %s → %s is not a transition of the state machine", id,
                                 sandbox_state_name(from), sandbox_state_name(to));
    struct quota_ask_params quota = { "", "" };
    if (ask)
        quota_ask_params(ask, &quota);
    const char *params[] = { id,       sandbox_state_name(from), sandbox_state_name(to),
                             note->who, note->request_id,          note->why ? note->why : "",
                             ask ? ask->project_id : "", quota.request, quota.defaults };
    /* Compare-and-set on the state plus the audit row, atomically,
     * answered with the sandbox as it is now; with an ask, only if the
     * quota gate admits it. */
    PGresult *res =
        ask ? db_query_prepared(db, "sandbox_transition_admitted",
                                "WITH" QUOTA_GATE("$7", "$8", "$9") "," TRANSITION_UPDATE
                                " AND" QUOTA_ADMITTED " RETURNING *)," TRANSITION_AUDIT_ROW
                                ADMITTED_ANSWER,
                                9, params, AIRLOCK_ERROR_MSG(e))
            : db_query_prepared(db, "sandbox_transition",
                                "WITH" TRANSITION_UPDATE " RETURNING *)," TRANSITION_AUDIT_ROW
                                ANSWER,
                                6, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    if (ask ? admitted_written(res) : PQntuples(res) == 1) {
        event_fill(committed, PQgetvalue(res, 0, 1), id, sandbox_state_name(from),
                   sandbox_state_name(to), PQgetvalue(res, 0, SANDBOX_COLUMN_COUNT));
        if (row)
            *row = res;
        else
            PQclear(res);
        return 0;
    }
    int refused = ask ? quota_ask_answer(ask, res, 0, ADMITTED_QUOTA_COLUMN, e) : 0;
    PQclear(res);
    if (refused < 0)
        return -1;
    const char *lookup[] = { id };
    res =
        db_query(db, "SELECT state FROM sandboxes WHERE id = $1", 1, lookup, AIRLOCK_ERROR_MSG(e));
    airlock_error_set(e, AIRLOCK_ERR_STATE, "sandbox %s is %s now (expected %s)", id,
                      res && PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "gone",
                      sandbox_state_name(from));
    PQclear(res);
    return -1;
}
