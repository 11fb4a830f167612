/* Responses: JSON bodies, the error shape
 * {"error":{"code":"…","message":"…"}}, and an error's class → HTTP status
 * and code, in one place. Every reply carries X-Request-Id, and a rate
 * limited one Retry-After. */
#ifndef AIRLOCK_GATEWAY_REPLY_H
#define AIRLOCK_GATEWAY_REPLY_H

#include <grpc/status.h>
#include <jansson.h>
#include <stdint.h>

#include "airlock_error.h"
#include "gateway.h"

/* Queues body (stolen) as JSON with status. */
enum MHD_Result reply_json(struct gw_request *r, unsigned status, json_t *body);
enum MHD_Result reply_error(struct gw_request *r, unsigned status, const char *code,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The error e, its message passed through. */
enum MHD_Result reply_airlock_error(struct gw_request *r, const struct airlock_error *e);
/* An error message as a JSON string, a generic one when it is not UTF-8
 * (every error shape of the gateway's). */
json_t *reply_message(const char *message);
/* The error for a gRPC call another service failed (st, not OK): its
 * details passed through, or the status's name. */
enum MHD_Result reply_grpc_error(struct gw_request *r, grpc_status_code st, const char *details);
enum MHD_Result reply_empty(struct gw_request *r, unsigned status);
/* Queues a prepared response (destroyed here). */
enum MHD_Result reply_queue(struct gw_request *r, unsigned status, struct MHD_Response *resp);

/* HTTP status and error code of an error's class: the REST API's one
 * mapping (AIRLOCK_OK, no failure, is internal). */
unsigned reply_http_status(enum airlock_err class, const char **code);

/* "2026-11-29T15:52:01.123Z" */
void reply_rfc3339(int64_t unix_ms, char *out, size_t outlen);

/* A JSON string for bytes that are UTF-8, else NULL (callers fall back to
 * base64 under a *_b64 name). */
json_t *reply_utf8_string(const void *data, size_t len);
/* base64 of data as a JSON string. */
json_t *reply_base64(const void *data, size_t len);

#endif
