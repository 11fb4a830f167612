#include "e2b_routes.h"

#include <string.h>

#define E2B(method, pattern, handle) { method, pattern, GW_AUTH_E2B, handle, NULL, NULL, NULL }

const struct gw_route e2b_routes[] = {
    E2B("POST", "/sandboxes", e2b_sandbox_create),
    E2B("POST", "/v2/sandboxes", e2b_sandbox_create),  /* what SDKs 2.x call */
    E2B("GET", "/sandboxes", e2b_sandbox_list),
    E2B("GET", "/v2/sandboxes", e2b_sandbox_list_v2),
    E2B("GET", "/sandboxes/{id}", e2b_sandbox_get),
    E2B("DELETE", "/sandboxes/{id}", e2b_sandbox_kill),
    E2B("POST", "/sandboxes/{id}/pause", e2b_sandbox_pause),
    E2B("POST", "/sandboxes/{id}/resume", e2b_sandbox_resume),
    E2B("POST", "/sandboxes/{id}/connect", e2b_sandbox_connect),
    E2B("POST", "/v2/sandboxes/{id}/connect", e2b_sandbox_connect),
    E2B("POST", "/sandboxes/{id}/timeout", e2b_sandbox_timeout),
    E2B("POST", "/sandboxes/{id}/refreshes", e2b_sandbox_refresh),
    E2B("GET", "/sandboxes/{id}/metrics", e2b_sandbox_metrics),
    E2B("GET", "/sandboxes/{id}/logs", e2b_sandbox_logs),
    E2B("GET", "/v2/sandboxes/{id}/logs", e2b_sandbox_logs_v2),
    E2B("GET", "/templates", e2b_template_list),
};

const size_t e2b_routes_count = sizeof(e2b_routes) / sizeof(*e2b_routes);

bool e2b_path(const char *path)
{
    return strncmp(path, "/v1/", 4) != 0 && strcmp(path, "/v1") != 0 &&
           strcmp(path, "/healthz") != 0 && strcmp(path, "/metrics") != 0;
}

const struct gw_route *e2b_route_match(const char *method, const char *path,
                                       struct gw_path_params *params, bool *path_known)
{
    return gw_route_match_in(e2b_routes, e2b_routes_count, method, path, params, path_known);
}
