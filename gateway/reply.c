#include "reply.h"

#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc_err.h"

enum MHD_Result reply_queue(struct gw_request *r, unsigned status, struct MHD_Response *resp)
{
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "X-Request-Id", r->id);
    if (r->retry_after_s) {
        char seconds[16];
        snprintf(seconds, sizeof(seconds), "%u", r->retry_after_s);
        MHD_add_response_header(resp, "Retry-After", seconds);
    }
    enum MHD_Result rc = MHD_queue_response(r->conn, status, resp);
    MHD_destroy_response(resp);
    r->status = status;
    return rc;
}

enum MHD_Result reply_json(struct gw_request *r, unsigned status, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text)
        return MHD_NO;
    size_t len = strlen(text);
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    return reply_queue(r, status, resp);
}

enum MHD_Result reply_error(struct gw_request *r, unsigned status, const char *code,
                            const char *fmt, ...)
{
    char message[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    return reply_json(r, status, json_pack("{s:{s:s,s:o}}", "error", "code", code, "message",
                                           reply_message(message)));
}

json_t *reply_message(const char *message)
{
    /* A message made of invalid UTF-8 (e.g. echoing a bad path) would
     * make jansson refuse the string: fall back to a generic one. */
    json_t *msg = json_string(message);
    return msg ? msg : json_string("(message was not valid UTF-8)");
}

unsigned reply_http_status(enum airlock_err class, const char **code)
{
    switch (class) {
    case AIRLOCK_ERR_INVALID:
    case AIRLOCK_ERR_RANGE: *code = "invalid_argument"; return 400;
    case AIRLOCK_ERR_UNAUTHENTICATED: *code = "unauthenticated"; return 401;
    case AIRLOCK_ERR_PERMISSION: *code = "permission_denied"; return 403;
    case AIRLOCK_ERR_NOT_FOUND: *code = "not_found"; return 404;
    case AIRLOCK_ERR_EXISTS:
    case AIRLOCK_ERR_STATE:
    case AIRLOCK_ERR_ABORTED: *code = "conflict"; return 409;
    case AIRLOCK_ERR_QUOTA: *code = "quota_exceeded"; return 429;
    case AIRLOCK_ERR_UNIMPLEMENTED: *code = "not_implemented"; return 501;
    case AIRLOCK_ERR_CAPACITY:
    case AIRLOCK_ERR_UNAVAILABLE: *code = "unavailable"; return 503;
    case AIRLOCK_ERR_TIMEOUT: *code = "unavailable"; return 504;
    default: *code = "internal"; return 500;
    }
}

enum MHD_Result reply_airlock_error(struct gw_request *r, const struct airlock_error *e)
{
    const char *code;
    unsigned status = reply_http_status(e->class, &code);
    return reply_error(r, status, code, "%s", e->message);
}

enum MHD_Result reply_grpc_error(struct gw_request *r, grpc_status_code st, const char *details)
{
    struct airlock_error e;
    airlock_error_from_status(&e, st, details);
    return reply_airlock_error(r, &e);
}

enum MHD_Result reply_empty(struct gw_request *r, unsigned status)
{
    return reply_queue(r, status,
                       MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT));
}

void reply_rfc3339(int64_t unix_ms, char *out, size_t outlen)
{
    time_t secs = (time_t)(unix_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, outlen, "%s.%03dZ", when, (int)(unix_ms % 1000));
}

json_t *reply_utf8_string(const void *data, size_t len)
{
    return json_stringn(data, len);
}

json_t *reply_base64(const void *data, size_t len)
{
    size_t cap = 4 * ((len + 2) / 3) + 1;
    unsigned char *b64 = malloc(cap);
    if (!b64)
        return NULL;
    int n = EVP_EncodeBlock(b64, data, (int)len);
    json_t *s = json_stringn((const char *)b64, (size_t)n);
    free(b64);
    return s;
}
