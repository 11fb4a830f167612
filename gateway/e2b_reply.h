/* What E2B's API (e2b_routes.h) answers differently from airlock's own:
 * errors as {"code": <HTTP status>, "message": "…"}, and the API key in
 * X-API-Key (or "Authorization: Bearer e2b_…") in E2B's form
 * (e2b_key.h). */
#ifndef AIRLOCK_GATEWAY_E2B_REPLY_H
#define AIRLOCK_GATEWAY_E2B_REPLY_H

#include <microhttpd.h>
#include <stddef.h>

#include "airlock_error.h"
#include "gateway.h"

#define E2B_BEARER_MAX 128
#define E2B_KEY_MISSING \
    "missing or malformed API key: send \"X-API-Key: e2b_<64 hex digits>\""

/* "Bearer ak_<hex>" (in buf) for the request's E2B key, as
 * gw_authenticate takes it; NULL when it carries none of that form. */
const char *e2b_authorization(struct MHD_Connection *conn, char *buf, size_t len);
/* The request's E2B key itself (what the SDK is given as envd's access
 * token): X-API-Key, or Authorization's bearer. NULL when none. */
const char *e2b_request_key(struct MHD_Connection *conn);

enum MHD_Result e2b_reply_error(struct gw_request *r, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* e, its HTTP status as airlock's REST API gives it (reply_http_status). */
enum MHD_Result e2b_reply_airlock_error(struct gw_request *r, const struct airlock_error *e);

#endif
