/* E2B's control-plane API (docs/e2b.md): the routes E2B's SDKs call, in
 * a table of their own (gateway/routes.h's struct), so that
 * `airlock-gateway --routes` and airlock's docs stay airlock's. A request
 * is E2B's when its path is outside airlock's (e2b_path; the console's
 * /console/ is taken before, console_files.h); it is answered
 * in E2B's error shape (e2b_reply.h). */
#ifndef AIRLOCK_GATEWAY_E2B_ROUTES_H
#define AIRLOCK_GATEWAY_E2B_ROUTES_H

#include <stdbool.h>

#include "routes.h"

extern const struct gw_route e2b_routes[];
extern const size_t e2b_routes_count;

/* Whether path is E2B's: not under /v1/, nor /healthz or /metrics. */
bool e2b_path(const char *path);

/* gw_route_match in e2b_routes. */
const struct gw_route *e2b_route_match(const char *method, const char *path,
                                       struct gw_path_params *params, bool *path_known);

/* The handlers (e2b_sandboxes.c, e2b_list.c, e2b_observe.c). */
enum MHD_Result e2b_sandbox_create(struct gw_request *r);
enum MHD_Result e2b_sandbox_get(struct gw_request *r);
enum MHD_Result e2b_sandbox_kill(struct gw_request *r);
enum MHD_Result e2b_sandbox_pause(struct gw_request *r);
enum MHD_Result e2b_sandbox_resume(struct gw_request *r);
enum MHD_Result e2b_sandbox_connect(struct gw_request *r);
enum MHD_Result e2b_sandbox_timeout(struct gw_request *r);
enum MHD_Result e2b_sandbox_refresh(struct gw_request *r);
enum MHD_Result e2b_sandbox_list(struct gw_request *r);
enum MHD_Result e2b_sandbox_list_v2(struct gw_request *r);
enum MHD_Result e2b_template_list(struct gw_request *r);
enum MHD_Result e2b_sandbox_metrics(struct gw_request *r);
enum MHD_Result e2b_sandbox_logs(struct gw_request *r);
enum MHD_Result e2b_sandbox_logs_v2(struct gw_request *r);

#endif
