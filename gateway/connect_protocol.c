#include "connect_protocol.h"

#include <stdlib.h>
#include <string.h>

const char *connect_code_name(enum airlock_err class)
{
    switch (class) {
    case AIRLOCK_ERR_INVALID: return "invalid_argument";
    case AIRLOCK_ERR_NOT_FOUND: return "not_found";
    case AIRLOCK_ERR_EXISTS: return "already_exists";
    case AIRLOCK_ERR_CAPACITY:
    case AIRLOCK_ERR_QUOTA: return "resource_exhausted";
    case AIRLOCK_ERR_STATE: return "failed_precondition";
    case AIRLOCK_ERR_ABORTED: return "aborted";
    case AIRLOCK_ERR_UNAVAILABLE: return "unavailable";
    case AIRLOCK_ERR_TIMEOUT: return "deadline_exceeded";
    case AIRLOCK_ERR_CANCELLED: return "canceled";
    case AIRLOCK_ERR_UNAUTHENTICATED: return "unauthenticated";
    case AIRLOCK_ERR_PERMISSION: return "permission_denied";
    case AIRLOCK_ERR_RANGE: return "out_of_range";
    case AIRLOCK_ERR_UNIMPLEMENTED: return "unimplemented";
    case AIRLOCK_ERR_DATA_LOSS: return "data_loss";
    case AIRLOCK_ERR_UNKNOWN: return "unknown";
    case AIRLOCK_OK:
    case AIRLOCK_ERR_INTERNAL: break;
    }
    return "internal";
}

unsigned connect_http_status(enum airlock_err class)
{
    switch (class) {
    case AIRLOCK_ERR_INVALID:
    case AIRLOCK_ERR_STATE:
    case AIRLOCK_ERR_RANGE: return 400;
    case AIRLOCK_ERR_UNAUTHENTICATED: return 401;
    case AIRLOCK_ERR_PERMISSION: return 403;
    case AIRLOCK_ERR_NOT_FOUND: return 404;
    case AIRLOCK_ERR_EXISTS:
    case AIRLOCK_ERR_ABORTED: return 409;
    case AIRLOCK_ERR_CAPACITY:
    case AIRLOCK_ERR_QUOTA: return 429;
    case AIRLOCK_ERR_CANCELLED: return 499;
    case AIRLOCK_ERR_UNIMPLEMENTED: return 501;
    case AIRLOCK_ERR_UNAVAILABLE: return 503;
    case AIRLOCK_ERR_TIMEOUT: return 504;
    default: return 500;
    }
}

json_t *connect_error_json(const char *code, const char *message)
{
    return json_pack("{s:s,s:s}", "code", code, "message", message);
}

void connect_envelope_append(struct strbuf *out, uint8_t flags, const void *payload, size_t len)
{
    uint8_t head[CONNECT_ENVELOPE_HEADER] = { flags, (uint8_t)(len >> 24), (uint8_t)(len >> 16),
                                              (uint8_t)(len >> 8), (uint8_t)len };
    strbuf_append_n(out, (const char *)head, sizeof(head));
    strbuf_append_n(out, payload, len);
}

static int envelope_json(struct strbuf *out, uint8_t flags, json_t *msg)
{
    char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
    json_decref(msg);
    if (!text)
        return -1;
    connect_envelope_append(out, flags, text, strlen(text));
    free(text);
    return 0;
}

int connect_envelope_json(struct strbuf *out, json_t *msg)
{
    return envelope_json(out, 0, msg);
}

void connect_end_stream(struct strbuf *out, const char *code, const char *message)
{
    json_t *end =
        code ? json_pack("{s:o}", "error", connect_error_json(code, message)) : json_object();
    if (envelope_json(out, CONNECT_FLAG_END_STREAM, end) < 0)
        connect_envelope_append(out, CONNECT_FLAG_END_STREAM, "{}", 2);
}

/* body as a JSON object. */
static int parse_object(const char *body, size_t len, json_t **msg, struct airlock_error *e)
{
    json_error_t je;
    *msg = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!*msg)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "request message is not JSON: %s",
                                 je.text);
    if (json_is_object(*msg))
        return 0;
    json_decref(*msg);
    *msg = NULL;
    return airlock_error_set(e, AIRLOCK_ERR_INVALID, "request message is not a JSON object");
}

int connect_stream_request(const void *body, size_t len, json_t **msg, struct airlock_error *e)
{
    const uint8_t *b = body;
    *msg = NULL;
    if (len < CONNECT_ENVELOPE_HEADER)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "request body is not a Connect envelope (%zu bytes)", len);
    size_t n = (size_t)b[1] << 24 | (size_t)b[2] << 16 | (size_t)b[3] << 8 | b[4];
    if (b[0] & CONNECT_FLAG_COMPRESSED)
        return airlock_error_set(e, AIRLOCK_ERR_UNIMPLEMENTED,
                                 "compressed request messages are not supported");
    if (b[0] != 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "request envelope has unknown flags 0x%02x", b[0]);
    if (n != len - CONNECT_ENVELOPE_HEADER)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "request envelope says %zu bytes, the body has %zu", n,
                                 len - CONNECT_ENVELOPE_HEADER);
    return parse_object((const char *)b + CONNECT_ENVELOPE_HEADER, n, msg, e);
}

int connect_unary_request(const void *body, size_t len, json_t **msg, struct airlock_error *e)
{
    if (len == 0) {
        *msg = json_object();
        return 0;
    }
    return parse_object(body, len, msg, e);
}
