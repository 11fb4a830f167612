/* The gateway's route table: every route the gateway serves is a row here,
 * and `airlock-gateway --routes` prints them, so a test can check that
 * docs/openapi.yaml and docs/api.md document each one. */
#ifndef AIRLOCK_GATEWAY_ROUTES_H
#define AIRLOCK_GATEWAY_ROUTES_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

struct gw_request;

enum gw_auth {
    GW_AUTH_NONE,     /* /healthz, /metrics */
    GW_AUTH_KEY,      /* any valid API key; scoped to its project */
    GW_AUTH_ADMIN,    /* the admin key only */
    GW_AUTH_E2B,      /* E2B's API (e2b_routes.h): X-API-Key e2b_…, scoped as KEY */
};

struct gw_route {
    const char *method;
    const char *pattern;  /* "/v1/sandboxes/{id}/exec": {id}, {pid}, {name}, {port}: path segments */
    enum gw_auth auth;
    /* Answers the request once its body is in (queues a response). */
    enum MHD_Result (*handle)(struct gw_request *r);
    /* Streaming uploads (raw bodies): begin after authentication, chunk per
     * piece of body, end in handle(), cleanup in any case. NULL for JSON
     * routes, whose body is buffered up to max_json_body. */
    void (*upload_begin)(struct gw_request *r);
    void (*upload_chunk)(struct gw_request *r, const char *data, size_t len);
    void (*upload_cleanup)(struct gw_request *r);
};

extern const struct gw_route gw_routes[];
extern const size_t gw_routes_count;

/* The {id}, {pid}, {name} and {port} segments of a matched path ("" when
 * absent). */
struct gw_path_params {
    char id[160];
    char pid[32];
    char name[160];
    char port[16];
};

/* The route for method + path, with its segments copied into params. NULL
 * when none matches; *path_known then says whether the path exists with
 * another method (405 rather than 404). */
const struct gw_route *gw_route_match(const char *method, const char *path,
                                      struct gw_path_params *params, bool *path_known);
/* The same in another table of n routes (e2b_routes.c). */
const struct gw_route *gw_route_match_in(const struct gw_route *table, size_t n,
                                         const char *method, const char *path,
                                         struct gw_path_params *params, bool *path_known);

#endif
