#include "node_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Columns of a node row, in this order. */
enum {
    COL_ID, COL_DRAIN, COL_LIVE, COL_LAST_SEEN_MS, COL_CHANGED_MS, COL_CHANGED_BY, COL_VMHOST,
    COL_ACCEL, COL_STARTED_MS, COL_VCPUS_LIMIT, COL_VCPUS_COMMITTED, COL_MEMORY_LIMIT,
    COL_MEMORY_COMMITTED, COL_FREE_MEMORY, COL_SLOTS, COL_RECORDS, COL_COUNTS, COL_TEMPLATES,
};

/* counts: "paused=1,running=2" (states with sandboxes, deleted left out). */
#define NODE_COLUMNS                                                                         \
    "SELECT n.id, n.drain, n.last_seen > now() - make_interval(secs => $1::integer),"       \
    " (extract(epoch FROM n.last_seen) * 1000)::bigint,"                                    \
    " coalesce((extract(epoch FROM n.drain_changed_at) * 1000)::bigint, 0),"                \
    " n.drain_changed_by, n.vmhost_addr, n.accel, n.started_unix_ms, n.vcpus_limit,"        \
    " n.vcpus_committed, n.memory_limit_mb, n.memory_committed_mb, n.free_memory_mb,"       \
    " n.capacity, n.sandboxes,"                                                             \
    " coalesce((SELECT string_agg(g.state || '=' || g.n, ',' ORDER BY g.state) FROM"        \
    "   (SELECT state, count(*) AS n FROM sandboxes WHERE node_id = n.id"                   \
    "    AND state <> 'deleted' GROUP BY state) g), ''),"                                   \
    " array_to_string(n.templates, ',') FROM nodes n"

/* The counts column into m->counts; whether one of them holds the node. */
static int counts_parse(char *text, struct node_msg *m, struct airlock_error *e)
{
    size_t n = 0;
    for (char *save = NULL, *pair = strtok_r(text, ",", &save); pair;
         pair = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(pair, '=');
        enum sandbox_state st;
        if (!eq || n >= SANDBOX_STATE_COUNT)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "node %s: unreadable counts",
                                     m->msg.id);
        *eq = '\0';
        if (sandbox_state_parse(pair, &st) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "node %s: unknown state %s",
                                     m->msg.id, pair);
        Airlock__V1__Node__SandboxesEntry *c = &m->counts[n];
        airlock__v1__node__sandboxes_entry__init(c);
        c->key = (char *)sandbox_state_name(st);
        c->value = (uint32_t)strtoul(eq + 1, NULL, 10);
        m->count_ptrs[n++] = c;
        m->holds = m->holds || (node_held_by(st) && c->value > 0);
    }
    m->msg.n_sandboxes = n;
    m->msg.sandboxes = m->count_ptrs;
    return 0;
}

/* The templates column, split in place into m->templates. */
static int templates_split(const char *text, struct node_msg *m, struct airlock_error *e)
{
    size_t n = *text ? 1 : 0;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    m->templates_text = strdup(text);
    m->templates = calloc(n + 1, sizeof(*m->templates));
    if (!m->templates_text || !m->templates)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    size_t i = 0;
    for (char *save = NULL, *t = strtok_r(m->templates_text, ",", &save); t && i < n;
         t = strtok_r(NULL, ",", &save))
        m->templates[i++] = t;
    m->msg.n_templates = i;
    m->msg.templates = m->templates;
    return 0;
}

static int node_from_row(PGresult *res, int row, struct node_msg *m, struct airlock_error *e)
{
    Airlock__V1__Node *n = &m->msg;
    airlock__v1__node__init(n);
    airlock__v1__node_capacity__init(&m->capacity);
#define TEXT(col) PQgetvalue(res, row, col)
#define NUM(col) strtoll(PQgetvalue(res, row, col), NULL, 10)
    n->id = TEXT(COL_ID);
    if (node_drain_parse(TEXT(COL_DRAIN), &m->drain) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "node %s has an unknown state %s", n->id,
                                 TEXT(COL_DRAIN));
    n->state = TEXT(COL_DRAIN);
    n->live = TEXT(COL_LIVE)[0] == 't';
    n->last_heartbeat_unix_ms = NUM(COL_LAST_SEEN_MS);
    n->state_changed_unix_ms = NUM(COL_CHANGED_MS);
    n->state_changed_by = TEXT(COL_CHANGED_BY);
    n->vmhost_addr = TEXT(COL_VMHOST);
    n->accel = TEXT(COL_ACCEL);
    n->started_unix_ms = NUM(COL_STARTED_MS);
    m->capacity.vcpus_limit = (uint32_t)NUM(COL_VCPUS_LIMIT);
    m->capacity.vcpus_committed = (uint32_t)NUM(COL_VCPUS_COMMITTED);
    m->capacity.memory_limit_mb = (uint64_t)NUM(COL_MEMORY_LIMIT);
    m->capacity.memory_committed_mb = (uint64_t)NUM(COL_MEMORY_COMMITTED);
    m->capacity.free_memory_mb = (uint64_t)NUM(COL_FREE_MEMORY);
    m->capacity.sandbox_slots = (uint32_t)NUM(COL_SLOTS);
    m->capacity.sandbox_records = (uint32_t)NUM(COL_RECORDS);
    n->capacity = &m->capacity;
#undef TEXT
#undef NUM
    if (counts_parse(PQgetvalue(res, row, COL_COUNTS), m, e) < 0)
        return -1;
    return templates_split(PQgetvalue(res, row, COL_TEMPLATES), m, e);
}

int store_nodes_read(struct db *db, const char *node_id, int dead_after_s, struct node_msgs *out,
                     struct airlock_error *e)
{
    *out = (struct node_msgs){ 0 };
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", dead_after_s);
    const char *params[] = { dead_after, node_id };
    out->res = db_query(db, NODE_COLUMNS " WHERE $2::text IS NULL OR n.id = $2 ORDER BY n.id", 2,
                        params, AIRLOCK_ERROR_MSG(e));
    if (!out->res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rows = PQntuples(out->res);
    if (node_id && rows == 0)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "node %s not found", node_id);
    out->nodes = calloc((size_t)rows + 1, sizeof(*out->nodes));
    out->ptrs = calloc((size_t)rows + 1, sizeof(*out->ptrs));
    if (!out->nodes || !out->ptrs)
        return airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "out of memory");
    for (int i = 0; i < rows; i++) {
        struct node_msg *m = &out->nodes[out->n++];
        if (node_from_row(out->res, i, m, e) < 0)
            return -1;
        out->ptrs[i] = &m->msg;
    }
    return 0;
}

void node_msgs_free(struct node_msgs *m)
{
    for (size_t i = 0; m->nodes && i < m->n; i++) {
        free(m->nodes[i].templates_text);
        free(m->nodes[i].templates);
    }
    free(m->nodes);
    free(m->ptrs);
    PQclear(m->res);
    *m = (struct node_msgs){ 0 };
}

int store_node_drain_set(struct db *db, const char *node_id, enum node_drain from,
                         enum node_drain to, const char *actor, bool keep_a_taker,
                         int dead_after_s, struct airlock_error *e)
{
    char dead_after[16];
    snprintf(dead_after, sizeof(dead_after), "%d", dead_after_s);
    const char *params[] = { node_id, node_drain_name(from), node_drain_name(to), actor,
                             keep_a_taker ? dead_after : NULL };
    PGresult *res = db_query(db, "SELECT node_drain_set($1, $2, $3, $4, $5::integer)", 5, params,
                             AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    const char *answer = PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "";
    int rc = 0;
    if (strcmp(answer, "last") == 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "node %s is the last live active node, the last node that could "
                               "take work: nothing changed (undrain another node first)",
                               node_id);
    else if (strcmp(answer, "changed") == 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_ABORTED,
                               "node %s changed from %s while it was being moved to %s: try again",
                               node_id, node_drain_name(from), node_drain_name(to));
    else if (strcmp(answer, "set") != 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "node %s: node_drain_set answered \"%s\"",
                               node_id, answer);
    PQclear(res);
    return rc;
}

int store_node_takes_work(struct db *db, const char *node_id, const char *what,
                          struct airlock_error *e)
{
    const char *params[] = { node_id };
    PGresult *res = db_query(db, "SELECT drain FROM nodes WHERE id = $1", 1, params,
                             AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = 0;
    if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), node_drain_name(NODE_ACTIVE)) != 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "node %s is %s: it takes no new work (%s) until it is undrained",
                               node_id, PQgetvalue(res, 0, 0), what);
    PQclear(res);
    return rc;
}
