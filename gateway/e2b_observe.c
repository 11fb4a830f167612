/* E2B's metrics and logs of a sandbox (docs/e2b.md). Metrics: one sample,
 * taken now by the guest (vmhost GetSandboxMetrics: CPU busy since the
 * previous sample, memory, disk), while the sandbox runs; none while it
 * does not, since airlock keeps no history of samples. Logs: the sandbox's console (its
 * node's GetConsoleLog, as /v1/…/logs), a line per entry, stamped with
 * the time of the request (the console keeps no times). */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "e2b_convert.h"
#include "e2b_reply.h"
#include "e2b_routes.h"
#include "reply.h"
#include "sandbox_access.h"
#include "vmhost.pb-c.h"

enum MHD_Result e2b_sandbox_metrics(struct gw_request *r)
{
    struct gw_caller caller = gw_request_caller(r);
    Sandbox *sb = NULL;
    struct airlock_error e;
    /* Still a 404 for one the caller may not see. */
    if (gw_sandbox_ref_call(r->gw, &caller, SCHEDULER_METHOD("GetSandbox"), r->path_id,
                            &airlock__scheduler__v1__sandbox__descriptor,
                            (ProtobufCMessage **)&sb, &e) < 0)
        return e2b_reply_airlock_error(r, &e);
    json_t *samples = json_array();
    struct rpc_channel *ch;
    Airlock__Guest__V1__Metrics *m = NULL;
    Airlock__Vmhost__V1__SandboxRef ref = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    ref.id = sb->id;
    int rc = 0;
    if (strcmp(sb->state, "running") == 0 &&
        (rc = gw_sandbox_channel(r->gw, sb, "metrics", &ch, &e)) == 0 &&
        (rc = gw_unary(ch, VMHOST_METHOD("GetSandboxMetrics"), &ref.base,
                       &airlock__guest__v1__metrics__descriptor, (ProtobufCMessage **)&m,
                       GW_SCHEDULER_TIMEOUT_MS, &e)) == 0) {
        char at[40];
        reply_rfc3339(m->unix_ms, at, sizeof(at));
        json_array_append_new(
            samples, json_pack("{s:s,s:I,s:i,s:f,s:I,s:I,s:I,s:I,s:I}", "timestamp", at,
                               "timestampUnix", (json_int_t)(m->unix_ms / 1000), "cpuCount",
                               (int)m->cpu_count, "cpuUsedPct", m->cpu_used_pct, "memUsed",
                               (json_int_t)m->mem_used, "memTotal", (json_int_t)m->mem_total,
                               "memCache", (json_int_t)m->mem_cache, "diskUsed",
                               (json_int_t)m->disk_used, "diskTotal",
                               (json_int_t)m->disk_total));
        protobuf_c_message_free_unpacked(&m->base, NULL);
    }
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    if (rc < 0) {
        json_decref(samples);
        return e2b_reply_airlock_error(r, &e);
    }
    return reply_json(r, 200, samples);
}

/* The console's lines, oldest first, each as {timestamp, line}: v1 adds
 * them as logs and logEntries, v2 as logs (entries). */
static int console_lines(struct gw_request *r, Airlock__Vmhost__V1__ConsoleLog **log,
                         struct airlock_error *e)
{
    Airlock__Vmhost__V1__GetConsoleLogRequest req =
        AIRLOCK__VMHOST__V1__GET_CONSOLE_LOG_REQUEST__INIT;
    req.sandbox_id = r->path_id;
    req.tail_bytes = GW_CONSOLE_TAIL_MAX;
    struct gw_caller caller = gw_request_caller(r);
    return gw_sandbox_node_unary(r->gw, &caller, r->path_id, VMHOST_METHOD("GetConsoleLog"),
                                 &req.base, &airlock__vmhost__v1__console_log__descriptor,
                                 (ProtobufCMessage **)log, e);
}

static json_t *entry_json(const char *at, const char *line, size_t len)
{
    json_t *message = reply_utf8_string(line, len);
    if (!message) /* the guest's bytes: not necessarily UTF-8 */
        message = json_string("(not UTF-8)");
    return json_pack("{s:s,s:s,s:o,s:{}}", "timestamp", at, "level", "info", "message", message,
                     "fields");
}

/* Each line of the log (up to limit, from the end when backward) whose
 * text has search, appended to entries. */
static void each_line(const Airlock__Vmhost__V1__ConsoleLog *log, uint64_t limit, bool backward,
                      const char *search, const char *at, json_t *entries)
{
    const char *data = (const char *)log->data.data, *end = data + log->data.len;
    for (const char *p = data; p < end && json_array_size(entries) < limit;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        bool hit = !search || (memmem(p, len, search, strlen(search)) != NULL);
        if (hit && backward)
            json_array_insert_new(entries, 0, entry_json(at, p, len));
        else if (hit)
            json_array_append_new(entries, entry_json(at, p, len));
        p += len + 1;
    }
    /* backward: the newest `limit`, newest first */
    while (backward && json_array_size(entries) > limit)
        json_array_remove(entries, json_array_size(entries) - 1);
}

static bool query_limit(struct gw_request *r, uint64_t max, uint64_t *limit,
                        struct airlock_error *e)
{
    const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "limit");
    *limit = 1000;
    if (!v)
        return true;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || n > max) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "limit: \"%s\" is not in 0..%llu", v,
                          (unsigned long long)max);
        return false;
    }
    *limit = n;
    return true;
}

static enum MHD_Result logs(struct gw_request *r, bool v2)
{
    struct airlock_error e;
    uint64_t limit;
    const char *direction = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "direction");
    const char *cursor = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
                                                     v2 ? "cursor" : "start");
    if (!query_limit(r, v2 ? 1000 : UINT32_MAX, &limit, &e))
        return e2b_reply_airlock_error(r, &e);
    /* The console keeps no times to start from. */
    if (cursor)
        return e2b_reply_error(r, 400, "%s is not supported: the console log has no times",
                               v2 ? "cursor" : "start");
    if (direction && strcmp(direction, "forward") != 0 && strcmp(direction, "backward") != 0)
        return e2b_reply_error(r, 400, "direction: \"%s\" is not forward or backward", direction);
    /* Every console line is info: a higher minimum leaves none. */
    const char *level = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "level");
    if (level && strcmp(level, "debug") != 0 && strcmp(level, "info") != 0) {
        if (strcmp(level, "warn") != 0 && strcmp(level, "error") != 0)
            return e2b_reply_error(r, 400, "level: \"%s\" is not debug, info, warn or error",
                                   level);
        limit = 0;
    }
    Airlock__Vmhost__V1__ConsoleLog *log = NULL;
    if (console_lines(r, &log, &e) < 0)
        return e2b_reply_airlock_error(r, &e);
    char at[40];
    reply_rfc3339(clock_realtime_ms(), at, sizeof(at));
    json_t *entries = json_array();
    each_line(log, limit, direction && strcmp(direction, "backward") == 0,
              MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "search"), at, entries);
    protobuf_c_message_free_unpacked(&log->base, NULL);
    if (v2)
        return reply_json(r, 200, json_pack("{s:o}", "logs", entries));
    json_t *lines = json_array();
    size_t i;
    json_t *entry;
    json_array_foreach(entries, i, entry) {
        json_array_append_new(lines, json_pack("{s:s,s:O}", "timestamp", at, "line",
                                               json_object_get(entry, "message")));
    }
    return reply_json(r, 200, json_pack("{s:o,s:o}", "logs", lines, "logEntries", entries));
}

enum MHD_Result e2b_sandbox_logs(struct gw_request *r)
{
    return logs(r, false);
}

enum MHD_Result e2b_sandbox_logs_v2(struct gw_request *r)
{
    return logs(r, true);
}
