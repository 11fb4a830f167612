#include "e2b_reply.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "e2b_key.h"
#include "reply.h"

const char *e2b_request_key(struct MHD_Connection *conn)
{
    const char *key = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-API-Key");
    if (key)
        return key;
    const char *authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (authorization && strncmp(authorization, "Bearer ", 7) == 0)
        return authorization + 7;
    return NULL;
}

const char *e2b_authorization(struct MHD_Connection *conn, char *buf, size_t len)
{
    return e2b_key_bearer(e2b_request_key(conn), buf, len) == 0 ? buf : NULL;
}

enum MHD_Result e2b_reply_error(struct gw_request *r, unsigned status, const char *fmt, ...)
{
    char message[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    return reply_json(r, status, json_pack("{s:i,s:o}", "code", (json_int_t)status, "message",
                                           reply_message(message)));
}

enum MHD_Result e2b_reply_airlock_error(struct gw_request *r, const struct airlock_error *e)
{
    const char *code;
    return e2b_reply_error(r, reply_http_status(e->class, &code), "%s", e->message);
}
