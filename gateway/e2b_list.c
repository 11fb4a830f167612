/* E2B's listings (docs/e2b.md): GET /sandboxes (v1: running ones),
 * GET /v2/sandboxes (state, metadata, template, startedAfter filters,
 * order, limit + nextToken pages, the next page's token in X-Next-Token)
 * and GET /templates, from the scheduler's lists of the caller's
 * project. */
#include <stdlib.h>
#include <string.h>

#include "e2b_convert.h"
#include "e2b_reply.h"
#include "e2b_routes.h"
#include "reply.h"
#include "sandbox_access.h"

#define E2B_LIST_LIMIT_MAX 100

typedef Airlock__Scheduler__V1__ListSandboxesResponse SandboxList;

static int list_sandboxes(struct gw_request *r, SandboxList **out, struct airlock_error *e)
{
    Airlock__Scheduler__V1__ListSandboxesRequest req =
        AIRLOCK__SCHEDULER__V1__LIST_SANDBOXES_REQUEST__INIT;
    req.request_id = r->id;
    req.project_id = r->project_id;
    return gw_unary(r->gw->scheduler, SCHEDULER_METHOD("ListSandboxes"), &req.base,
                    &airlock__scheduler__v1__list_sandboxes_response__descriptor,
                    (ProtobufCMessage **)out, GW_SCHEDULER_TIMEOUT_MS, e);
}

static const char *query(struct gw_request *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

enum MHD_Result e2b_sandbox_list(struct gw_request *r)
{
    struct e2b_metadata_filter filter;
    struct airlock_error e;
    SandboxList *list = NULL;
    if (e2b_metadata_filter_parse(query(r, "metadata"), &filter, &e) < 0)
        return e2b_reply_airlock_error(r, &e);
    if (list_sandboxes(r, &list, &e) < 0) {
        e2b_metadata_filter_free(&filter);
        return e2b_reply_airlock_error(r, &e);
    }
    json_t *out = json_array();
    for (size_t i = 0; i < list->n_sandboxes; i++) {
        const Sandbox *sb = list->sandboxes[i];
        if (strcmp(e2b_state(sb->state), "running") == 0 && e2b_metadata_matches(&filter, sb))
            json_array_append_new(out, e2b_listed_json(sb));
    }
    e2b_metadata_filter_free(&filter);
    protobuf_c_message_free_unpacked(&list->base, NULL);
    return reply_json(r, 200, out);
}

/* What a v2 listing asks for. */
struct list_query {
    struct e2b_metadata_filter metadata;
    bool running, paused;    /* the states wanted (both when not given) */
    bool ascending;          /* order=asc: oldest first */
    int64_t started_after_ms;
    const char *template_id; /* NULL: any */
    uint64_t limit;
    bool after;              /* a nextToken: only what follows it */
    int64_t after_ms;
    char after_id[160];
};

static int list_query_parse(struct gw_request *r, struct list_query *q, struct airlock_error *e)
{
    memset(q, 0, sizeof(*q));
    q->limit = E2B_LIST_LIMIT_MAX;
    const char *v;
    if ((v = query(r, "state"))) {
        for (const char *s = v; *s;) {
            size_t n = strcspn(s, ",");
            if (n == 7 && strncmp(s, "running", 7) == 0)
                q->running = true;
            else if (n == 6 && strncmp(s, "paused", 6) == 0)
                q->paused = true;
            else
                return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                         "state: \"%.*s\" is not running or paused", (int)n, s);
            s += n + (s[n] == ',');
        }
    } else {
        q->running = q->paused = true;
    }
    if ((v = query(r, "order")) && strcmp(v, "asc") != 0 && strcmp(v, "desc") != 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "order: \"%s\" is not asc or desc", v);
    q->ascending = v && strcmp(v, "asc") == 0;
    if ((v = query(r, "limit"))) {
        char *end;
        unsigned long long n = strtoull(v, &end, 10);
        if (!*v || *end || n < 1 || n > E2B_LIST_LIMIT_MAX)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID, "limit: \"%s\" is not in 1..%d", v,
                                     E2B_LIST_LIMIT_MAX);
        q->limit = n;
    }
    if ((v = query(r, "startedAfter")) &&
        e2b_time_parse(v, "startedAfter", &q->started_after_ms, e) < 0)
        return -1;
    if ((v = query(r, "nextToken"))) {
        if (e2b_next_token_parse(v, &q->after_ms, q->after_id, sizeof(q->after_id), e) < 0)
            return -1;
        q->after = true;
    }
    q->template_id = query(r, "template");
    return e2b_metadata_filter_parse(query(r, "metadata"), &q->metadata, e);
}

/* E2B's order: by start time (newest first unless ascending), ties by id
 * (ascending, or descending when ascending). */
static int by_start(const void *a, const void *b, void *ascending_arg)
{
    const Sandbox *x = *(Sandbox *const *)a, *y = *(Sandbox *const *)b;
    bool ascending = *(const bool *)ascending_arg;
    int by_id = strcmp(x->id, y->id);
    if (x->created_unix_ms != y->created_unix_ms)
        return (x->created_unix_ms < y->created_unix_ms) == ascending ? -1 : 1;
    return ascending ? -by_id : by_id;
}

/* Whether sb comes after the cursor in the listing's order. */
static bool after_cursor(const struct list_query *q, const Sandbox *sb)
{
    if (!q->after)
        return true;
    if (sb->created_unix_ms != q->after_ms)
        return (sb->created_unix_ms > q->after_ms) == q->ascending;
    int by_id = strcmp(sb->id, q->after_id);
    return q->ascending ? by_id < 0 : by_id > 0;
}

static bool wanted(const struct list_query *q, const Sandbox *sb)
{
    bool running = strcmp(e2b_state(sb->state), "running") == 0;
    return (running ? q->running : q->paused) && sb->created_unix_ms >= q->started_after_ms &&
           (!q->template_id || strcmp(q->template_id, e2b_template_id(sb->template_)) == 0) &&
           e2b_metadata_matches(&q->metadata, sb) && after_cursor(q, sb);
}

enum MHD_Result e2b_sandbox_list_v2(struct gw_request *r)
{
    struct list_query q;
    struct airlock_error e;
    SandboxList *list = NULL;
    if (list_query_parse(r, &q, &e) < 0 || list_sandboxes(r, &list, &e) < 0) {
        e2b_metadata_filter_free(&q.metadata);
        return e2b_reply_airlock_error(r, &e);
    }
    /* The wanted ones, borrowed from list. */
    Sandbox **kept = calloc(list->n_sandboxes + 1, sizeof(*kept));
    size_t n = 0;
    for (size_t i = 0; kept && i < list->n_sandboxes; i++)
        if (wanted(&q, list->sandboxes[i]))
            kept[n++] = list->sandboxes[i];
    qsort_r(kept, n, sizeof(*kept), by_start, &q.ascending);
    json_t *out = kept ? json_array() : NULL;
    size_t shown = n < q.limit ? n : q.limit;
    for (size_t i = 0; out && i < shown; i++)
        json_array_append_new(out, e2b_listed_json(kept[i]));
    char next[200] = "";
    if (shown < n)
        e2b_next_token(kept[shown - 1], next, sizeof(next));
    free(kept);
    e2b_metadata_filter_free(&q.metadata);
    protobuf_c_message_free_unpacked(&list->base, NULL);
    char *text = out ? json_dumps(out, JSON_COMPACT) : NULL;
    json_decref(out);
    struct MHD_Response *resp =
        text ? MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE) : NULL;
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    if (*next)
        MHD_add_response_header(resp, "X-Next-Token", next);
    return reply_queue(r, 200, resp);
}
