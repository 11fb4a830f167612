#include "e2b_convert.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reply.h"
#include "string_map_json.h"

const char *e2b_state(const char *s)
{
    static const char *const stopped[] = { "paused", "suspending", "suspended", "error", "lost" };
    for (size_t i = 0; i < sizeof(stopped) / sizeof(*stopped); i++)
        if (strcmp(s, stopped[i]) == 0)
            return "paused";
    return "running";
}

const char *e2b_template_id(const char *airlock_template)
{
    return strcmp(airlock_template, "default") == 0 ? E2B_DEFAULT_TEMPLATE : airlock_template;
}

const char *e2b_airlock_template(const char *template_id)
{
    return strcmp(template_id, E2B_DEFAULT_TEMPLATE) == 0 ? "default" : template_id;
}

/* What every shape has: ids, template, envd's version. */
static json_t *base_json(const Sandbox *sb)
{
    return json_pack("{s:s,s:s,s:s,s:s}", "sandboxID", sb->id, "templateID",
                     e2b_template_id(sb->template_), "clientID", sb->node_id, "envdVersion",
                     E2B_ENVD_VERSION);
}

json_t *e2b_sandbox_json(const Sandbox *sb, const char *domain, const char *access_token)
{
    json_t *j = base_json(sb);
    /* E2B shows the traffic token only when the ports need it
     * (network.allowPublicTraffic false); airlock takes it in E2B's
     * header (docs/ports.md). */
    if (j)
        json_object_update_new(j, json_pack("{s:s,s:o,s:s}", "envdAccessToken", access_token,
                                            "trafficAccessToken",
                                            sb->public_ports ? json_null()
                                                             : json_string(sb->traffic_token),
                                            "domain", domain));
    return j;
}

json_t *e2b_listed_json(const Sandbox *sb)
{
    char started[40], end[40] = E2B_NEVER;
    reply_rfc3339(sb->created_unix_ms, started, sizeof(started));
    if (sb->expires_unix_ms > 0)
        reply_rfc3339(sb->expires_unix_ms, end, sizeof(end));
    else if (sb->ttl_s > 0)
        reply_rfc3339(sb->created_unix_ms + (int64_t)sb->ttl_s * 1000, end, sizeof(end));
    char err[64];
    json_t *metadata = string_map_to_json((ProtobufCMessage **)sb->metadata, sb->n_metadata,
                                          "metadata", err, sizeof(err));
    json_t *mounts = json_array();
    for (size_t i = 0; mounts && i < sb->n_volumes; i++)
        json_array_append_new(mounts, json_pack("{s:s,s:s}", "name", sb->volumes[i]->name,
                                                "path", sb->volumes[i]->path));
    json_t *j = base_json(sb);
    if (j)
        json_object_update_new(
            j, json_pack("{s:s,s:s,s:i,s:i,s:i,s:o,s:s,s:o}", "startedAt", started, "endAt", end,
                         "cpuCount", (json_int_t)sb->cpus, "memoryMB", (json_int_t)sb->memory_mb,
                         /* the template's disk; airlock does not size it per sandbox */
                         "diskSizeMB", (json_int_t)0, "metadata",
                         metadata ? metadata : json_object(), "state", e2b_state(sb->state),
                         "volumeMounts", mounts ? mounts : json_array()));
    else {
        json_decref(metadata);
        json_decref(mounts);
    }
    return j;
}

json_t *e2b_detail_json(const Sandbox *sb, const char *domain, const char *access_token)
{
    json_t *j = e2b_listed_json(sb);
    if (j)
        json_object_update_new(
            j, json_pack("{s:s,s:s,s:{s:b,s:s}}", "envdAccessToken", access_token, "domain",
                         domain, "lifecycle", "autoResume", 0, "onTimeout",
                         strcmp(sb->on_timeout, "suspend") == 0 ? "pause" : "kill"));
    return j;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* n bytes of in URL-decoded (as Go's url.QueryUnescape: + is a space)
 * into a new string; NULL when a % is not followed by two hex digits. */
static char *unescape(const char *in, size_t n)
{
    char *out = malloc(n + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == '+') {
            *o++ = ' ';
        } else if (in[i] != '%') {
            *o++ = in[i];
        } else if (i + 2 < n && hex_digit(in[i + 1]) >= 0 && hex_digit(in[i + 2]) >= 0) {
            *o++ = (char)(hex_digit(in[i + 1]) * 16 + hex_digit(in[i + 2]));
            i += 2;
        } else {
            free(out);
            return NULL;
        }
    }
    *o = '\0';
    return out;
}

void e2b_metadata_filter_free(struct e2b_metadata_filter *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->keys[i]);
        free(f->values[i]);
    }
    f->n = 0;
}

int e2b_metadata_filter_parse(const char *query, struct e2b_metadata_filter *f,
                              struct airlock_error *e)
{
    f->n = 0;
    if (!query || !*query)
        return 0;
    char *whole = unescape(query, strlen(query));
    if (!whole)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "metadata: malformed URL encoding");
    int rc = 0;
    for (char *pair = whole; pair && *pair && rc == 0;) {
        char *next = strchr(pair, '&');
        size_t len = next ? (size_t)(next - pair) : strlen(pair);
        char *eq = memchr(pair, '=', len);
        if (!eq || eq == pair) {
            rc = airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                   "metadata: \"%.*s\" is not key=value", (int)len, pair);
        } else if (f->n == E2B_METADATA_FILTER_MAX) {
            rc = airlock_error_set(e, AIRLOCK_ERR_INVALID, "metadata: more than %d pairs",
                                   E2B_METADATA_FILTER_MAX);
        } else {
            f->keys[f->n] = unescape(pair, (size_t)(eq - pair));
            f->values[f->n] = unescape(eq + 1, len - (size_t)(eq - pair) - 1);
            f->n++;
            if (!f->keys[f->n - 1] || !f->values[f->n - 1])
                rc = airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                       "metadata: malformed URL encoding in \"%.*s\"", (int)len,
                                       pair);
        }
        pair = next ? next + 1 : NULL;
    }
    free(whole);
    if (rc < 0)
        e2b_metadata_filter_free(f);
    return rc;
}

bool e2b_metadata_matches(const struct e2b_metadata_filter *f, const Sandbox *sb)
{
    for (size_t i = 0; i < f->n; i++) {
        bool found = false;
        for (size_t m = 0; m < sb->n_metadata && !found; m++)
            found = strcmp(sb->metadata[m]->key, f->keys[i]) == 0 &&
                    strcmp(sb->metadata[m]->value, f->values[i]) == 0;
        if (!found)
            return false;
    }
    return true;
}

void e2b_next_token(const Sandbox *sb, char *out, size_t outlen)
{
    snprintf(out, outlen, "%" PRId64 ".%s", sb->created_unix_ms, sb->id);
}

int e2b_next_token_parse(const char *token, int64_t *created_ms, char *id, size_t idlen,
                         struct airlock_error *e)
{
    char *end;
    long long ms = strtoll(token, &end, 10);
    if (end == token || *end != '.' || ms < 0 || !end[1] || strlen(end + 1) >= idlen)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "nextToken: \"%s\" is not a token this API gave", token);
    *created_ms = ms;
    snprintf(id, idlen, "%s", end + 1);
    return 0;
}

int e2b_time_parse(const char *text, const char *field, int64_t *unix_ms, struct airlock_error *e)
{
    struct tm tm = { 0 };
    int used = 0;
    if (sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) != 6)
        goto bad;
    const char *rest = text + used;
    int64_t ms = 0;
    if (*rest == '.') {
        int digits = 0;
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, digits++)
            if (digits < 3)
                ms = ms * 10 + (*rest - '0');
        if (digits == 0)
            goto bad;
        for (; digits < 3; digits++)
            ms *= 10;
    }
    if (strcmp(rest, "Z") != 0 && strcmp(rest, "+00:00") != 0)
        goto bad;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    *unix_ms = (int64_t)timegm(&tm) * 1000 + ms;
    return 0;
bad:
    return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                             "%s: \"%s\" is not a UTC date-time (2026-12-05T18:00:00.000Z)", field,
                             text);
}
