#include "sandbox_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes.h"
#include "policy_json.h"
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
    " coalesce(s.network::text, ''), s.ttl_s"
#define SANDBOX_COLUMN_COUNT 16
#define SANDBOX_FROM(rows) " FROM " rows " s LEFT JOIN nodes n ON n.id = s.node_id"
#define SANDBOX_SELECT "SELECT" SANDBOX_COLUMNS SANDBOX_FROM("sandboxes")

/* A transition row's time as RFC3339 UTC with milliseconds. */
#define TRANSITION_AT_RFC3339(column) \
    "to_char(" column " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* The end of a statement that wrote sandbox rows s (a CTE): their audit
 * row (the SQL expressions given) and the answer, the sandbox as
 * store_sandbox_msg() reads it followed by the audit row's time. */
#define AUDIT_ROW_AND_ANSWER(who, from, to, why, request_id)                              \
    " t AS (INSERT INTO sandbox_transitions (sandbox_id, who, from_state, to_state, why,"  \
    "   request_id) SELECT id, " who ", " from ", " to ", " why ", " request_id            \
    "   FROM s RETURNING at)"                                                              \
    " SELECT" SANDBOX_COLUMNS ", " TRANSITION_AT_RFC3339("t.at") SANDBOX_FROM("s") ", t"

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
enum { COLUMN_ENV, COLUMN_METADATA, COLUMN_NETWORK };
static const int json_column_index[] = { 11, 12, 14 };

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
    for (int c = 0; c < 3; c++) {
        const char *text = PQgetvalue(res, row, json_column_index[c]);
        out->columns[c] = *text ? json_loads(text, 0, NULL) : NULL; /* network: '' = none */
    }
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
    for (int c = 0; c < 3; c++) {
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

int store_sandbox_get(struct db *db, const char *project_id, const char *id, PGresult **out,
                      struct airlock_error *e)
{
    const char *params[] = { project_id, id };
    PGresult *res = db_query_prepared(
        db, "sandbox_get",
        SANDBOX_SELECT " WHERE s.project_id = $1 AND s.id = $2 AND s.state <> 'deleted'", 2, params,
        AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    if (PQntuples(res) != 1) {
        PQclear(res);
        return sandbox_not_found(e, id);
    }
    *out = res;
    return 0;
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
 * sandbox (*row, *existing), or its template is not the project's. */
static int insert_refused(struct db *db, const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                          PGresult **row, bool *existing, struct airlock_error *e)
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
                         const char *id, int node_dead_after_s, const struct transition_note *note,
                         struct sandbox_event *created, PGresult **row, bool *existing,
                         struct airlock_error *e)
{
    char cpus[16], memory[16], idle[16], ttl[16], dead_after[16];
    snprintf(cpus, sizeof(cpus), "%u", req->cpus);
    snprintf(memory, sizeof(memory), "%u", req->memory_mb);
    snprintf(idle, sizeof(idle), "%u", req->idle_timeout_s);
    snprintf(ttl, sizeof(ttl), "%u", req->ttl_s);
    snprintf(dead_after, sizeof(dead_after), "%d", node_dead_after_s);
    *row = NULL;
    *existing = false;
    struct request_columns text;
    int rc = request_columns(req, &text, e);
    if (rc < 0)
        goto out;
    const char *params[] = { id,          req->project_id, req->template_, cpus,
                             memory,      text.env,        text.metadata,  idle,
                             req->idempotency_key, note->who, note->request_id,
                             text.network ? text.network : "", ttl, dead_after };
    /* One round trip: the template check, the placement (NULL when no
     * node has room: create_on_node says why), the sandbox and its first
     * transition, atomically, answered with the row. A duplicate
     * idempotency key or an unknown template inserts nothing. */
    PGresult *res = db_query_prepared(
        db, "sandbox_insert",
        "WITH s AS (INSERT INTO sandboxes (id, project_id, state, template, cpus, memory_mb, env,"
        "   metadata, idle_timeout_s, idempotency_key, network, ttl_s, node_id)"
        "   SELECT $1, $2, 'creating', $3, $4::integer, $5::integer, $6::jsonb, $7::jsonb,"
        "   $8::integer, NULLIF($9, ''), NULLIF($12, '')::jsonb, $13::integer, "
        NODES_PLACEMENT("$3::text", "$14")
        "   WHERE EXISTS (SELECT 1 FROM templates WHERE id = $3"
        "     AND (project_id IS NULL OR project_id = $2))"
        "   ON CONFLICT (project_id, idempotency_key) DO NOTHING RETURNING *),"
        AUDIT_ROW_AND_ANSWER("$10", "NULL", "'creating'", "'create'", "$11"),
        14, params, AIRLOCK_ERROR_MSG(e));
    if (!res) {
        rc = airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    } else if (PQntuples(res) == 1) {
        event_fill(created, req->project_id, id, NULL, "creating",
                   PQgetvalue(res, 0, SANDBOX_COLUMN_COUNT));
        *row = res;
    } else {
        PQclear(res);
        rc = insert_refused(db, req, row, existing, e);
    }
out:
    request_columns_free(&text);
    return rc;
}

int store_fork_insert(struct db *db, PGresult *parent, const char *fork_id,
                      const struct transition_note *note, struct sandbox_event *created,
                      struct airlock_error *e)
{
    const char *parent_id = PQgetvalue(parent, 0, 0);
    char why[200];
    snprintf(why, sizeof(why), "fork of %s", parent_id);
    const char *params[] = { fork_id, parent_id, note->who, why, note->request_id };
    /* The sandbox and its first transition in one statement (atomic). */
    PGresult *res = db_query(
        db,
        "WITH s AS (INSERT INTO sandboxes (id, project_id, state, template, cpus, memory_mb,"
        "   node_id, env, metadata, idle_timeout_s, ttl_s, network)"
        "   SELECT $1, project_id, 'running', template, cpus, memory_mb, node_id, env, metadata,"
        "   idle_timeout_s, ttl_s, network FROM sandboxes WHERE id = $2 RETURNING id, project_id)"
        " INSERT INTO sandbox_transitions (sandbox_id, who, from_state, to_state, why, request_id)"
        " SELECT id, $3, NULL, 'running', $4, $5 FROM s RETURNING "
        TRANSITION_AT_RFC3339("at") ", (SELECT project_id FROM s)",
        5, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    bool inserted = PQntuples(res) == 1;
    if (inserted)
        event_fill(created, PQgetvalue(res, 0, 1), fork_id, NULL, "running", PQgetvalue(res, 0, 0));
    PQclear(res);
    if (!inserted)
        return airlock_error_set(e, AIRLOCK_ERR_ABORTED, "sandbox %s vanished while forking",
                                 parent_id);
    return 0;
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

int store_transition(struct db *db, const char *id, enum sandbox_state from, enum sandbox_state to,
                     const struct transition_note *note, struct sandbox_event *committed,
                     PGresult **row, struct airlock_error *e)
{
    if (row)
        *row = NULL;
    if (!sandbox_transition_allowed(from, to))
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "sandbox %s: %s → %s is not a transition of the state machine", id,
                                 sandbox_state_name(from), sandbox_state_name(to));
    const char *params[] = { id,       sandbox_state_name(from), sandbox_state_name(to),
                             note->who, note->request_id,          note->why ? note->why : "" };
    /* Compare-and-set on the state plus the audit row, atomically,
     * answered with the sandbox as it is now. */
    PGresult *res = db_query_prepared(
        db, "sandbox_transition",
        "WITH s AS (UPDATE sandboxes SET state = $3, updated_at = now(),"
        "   error = CASE WHEN $3 = 'error' THEN $6 ELSE '' END"
        "   WHERE id = $1 AND state = $2 RETURNING *),"
        AUDIT_ROW_AND_ANSWER("$4", "$2", "$3", "$6", "$5"),
        6, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    if (PQntuples(res) == 1) {
        event_fill(committed, PQgetvalue(res, 0, 1), id, sandbox_state_name(from),
                   sandbox_state_name(to), PQgetvalue(res, 0, SANDBOX_COLUMN_COUNT));
        if (row)
            *row = res;
        else
            PQclear(res);
        return 0;
    }
    PQclear(res);
    const char *lookup[] = { id };
    res =
        db_query(db, "SELECT state FROM sandboxes WHERE id = $1", 1, lookup, AIRLOCK_ERROR_MSG(e));
    airlock_error_set(e, AIRLOCK_ERR_STATE, "sandbox %s is %s now (expected %s)", id,
                      res && PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "gone",
                      sandbox_state_name(from));
    PQclear(res);
    return -1;
}
