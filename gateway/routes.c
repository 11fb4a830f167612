#include "routes.h"

#include <stdio.h>
#include <string.h>

#include "route_handlers.h"

const struct gw_route gw_routes[] = {
    { "GET", "/healthz", GW_AUTH_NONE, handle_healthz, NULL, NULL, NULL },
    { "GET", "/metrics", GW_AUTH_NONE, handle_metrics, NULL, NULL, NULL },
    { "POST", "/v1/projects", GW_AUTH_ADMIN, handle_project_create, NULL, NULL, NULL },
    { "GET", "/v1/projects", GW_AUTH_ADMIN, handle_project_list, NULL, NULL, NULL },
    { "POST", "/v1/projects/{id}/keys", GW_AUTH_ADMIN, handle_key_create, NULL, NULL, NULL },
    { "GET", "/v1/projects/{id}/keys", GW_AUTH_ADMIN, handle_key_list, NULL, NULL, NULL },
    { "DELETE", "/v1/projects/{id}/keys/{name}", GW_AUTH_ADMIN, handle_key_revoke, NULL, NULL,
      NULL },
    { "PUT", "/v1/projects/{id}/org", GW_AUTH_ADMIN, handle_project_org_put, NULL, NULL, NULL },
    { "POST", "/v1/orgs", GW_AUTH_ADMIN, handle_org_create, NULL, NULL, NULL },
    { "POST", "/v1/orgs/{id}/secrets", GW_AUTH_ADMIN, handle_org_secret_create, NULL, NULL,
      NULL },
    { "GET", "/v1/orgs/{id}/secrets", GW_AUTH_ADMIN, handle_org_secret_list, NULL, NULL, NULL },
    { "DELETE", "/v1/orgs/{id}/secrets/{name}", GW_AUTH_ADMIN, handle_org_secret_delete, NULL,
      NULL, NULL },
    { "GET", "/v1/orgs/{id}/audit", GW_AUTH_ADMIN, handle_org_audit_list, NULL, NULL, NULL },
    { "POST", "/v1/sandboxes", GW_AUTH_KEY, handle_sandbox_create, NULL, NULL, NULL },
    { "GET", "/v1/sandboxes", GW_AUTH_KEY, handle_sandbox_list, NULL, NULL, NULL },
    { "GET", "/v1/sandboxes/{id}", GW_AUTH_KEY, handle_sandbox_get, NULL, NULL, NULL },
    { "DELETE", "/v1/sandboxes/{id}", GW_AUTH_KEY, handle_sandbox_delete, NULL, NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/pause", GW_AUTH_KEY, handle_sandbox_pause, NULL, NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/resume", GW_AUTH_KEY, handle_sandbox_resume, NULL, NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/suspend", GW_AUTH_KEY, handle_sandbox_suspend, NULL, NULL, NULL },
    { "PUT", "/v1/sandboxes/{id}/network", GW_AUTH_KEY, handle_sandbox_network_put, NULL, NULL,
      NULL },
    { "POST", "/v1/sandboxes/{id}/exec", GW_AUTH_KEY, handle_exec, NULL, NULL, NULL },
    { "PUT", "/v1/sandboxes/{id}/files", GW_AUTH_KEY, handle_file_put, file_put_begin,
      file_put_chunk, file_put_cleanup },
    { "GET", "/v1/sandboxes/{id}/files", GW_AUTH_KEY, handle_file_get, NULL, NULL, NULL },
    { "DELETE", "/v1/sandboxes/{id}/files", GW_AUTH_KEY, handle_file_remove, NULL, NULL, NULL },
    { "GET", "/v1/sandboxes/{id}/files/list", GW_AUTH_KEY, handle_file_list, NULL, NULL, NULL },
    { "GET", "/v1/sandboxes/{id}/files/stat", GW_AUTH_KEY, handle_file_stat, NULL, NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/files/mkdir", GW_AUTH_KEY, handle_file_mkdir, NULL, NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/files/rename", GW_AUTH_KEY, handle_file_rename, NULL, NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/processes", GW_AUTH_KEY, handle_process_start, NULL, NULL, NULL },
    { "GET", "/v1/sandboxes/{id}/processes", GW_AUTH_KEY, handle_process_list, NULL, NULL, NULL },
    { "GET", "/v1/sandboxes/{id}/processes/{pid}/output", GW_AUTH_KEY, handle_process_output, NULL,
      NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/processes/{pid}/stdin", GW_AUTH_KEY, handle_process_stdin, NULL,
      NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/processes/{pid}/signal", GW_AUTH_KEY, handle_process_signal, NULL,
      NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/processes/{pid}/resize", GW_AUTH_KEY, handle_process_resize, NULL,
      NULL, NULL },
    { "GET", "/v1/sandboxes/{id}/network/log", GW_AUTH_KEY, handle_network_log, NULL, NULL, NULL },
    { "GET", "/v1/sandboxes/{id}/logs", GW_AUTH_KEY, handle_console_log, NULL, NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/checkpoints", GW_AUTH_KEY, handle_checkpoint_create, NULL, NULL,
      NULL },
    { "GET", "/v1/sandboxes/{id}/checkpoints", GW_AUTH_KEY, handle_checkpoint_list, NULL, NULL,
      NULL },
    { "DELETE", "/v1/sandboxes/{id}/checkpoints/{name}", GW_AUTH_KEY, handle_checkpoint_delete,
      NULL, NULL, NULL },
    { "POST", "/v1/sandboxes/{id}/restore", GW_AUTH_KEY, handle_checkpoint_restore, NULL, NULL,
      NULL },
    { "POST", "/v1/sandboxes/{id}/fork", GW_AUTH_KEY, handle_sandbox_fork, NULL, NULL, NULL },
    { "GET", "/v1/events", GW_AUTH_KEY, handle_events, NULL, NULL, NULL },
    { "POST", "/v1/templates", GW_AUTH_KEY, handle_template_build, NULL, NULL, NULL },
    { "GET", "/v1/templates", GW_AUTH_KEY, handle_template_list, NULL, NULL, NULL },
    { "GET", "/v1/templates/{name}", GW_AUTH_KEY, handle_template_get, NULL, NULL, NULL },
    { "DELETE", "/v1/templates/{name}", GW_AUTH_KEY, handle_template_delete, NULL, NULL, NULL },
    { "PUT", "/v1/templates/{name}/warm-pool", GW_AUTH_ADMIN, handle_warm_pool_put, NULL, NULL,
      NULL },
    { "GET", "/v1/templates/{name}/warm-pool", GW_AUTH_ADMIN, handle_warm_pool_get, NULL, NULL,
      NULL },
    { "POST", "/v1/secrets", GW_AUTH_KEY, handle_secret_create, NULL, NULL, NULL },
    { "GET", "/v1/secrets", GW_AUTH_KEY, handle_secret_list, NULL, NULL, NULL },
    { "DELETE", "/v1/secrets/{name}", GW_AUTH_KEY, handle_secret_delete, NULL, NULL, NULL },
    { "POST", "/v1/secrets/unlock", GW_AUTH_KEY, handle_secrets_unlock, NULL, NULL, NULL },
    { "POST", "/v1/secrets/lock", GW_AUTH_KEY, handle_secrets_lock, NULL, NULL, NULL },
    { "GET", "/v1/audit", GW_AUTH_KEY, handle_audit_list, NULL, NULL, NULL },
};

const size_t gw_routes_count = sizeof(gw_routes) / sizeof(*gw_routes);

/* Whether path fits pattern; each {name} segment goes to its field of
 * params. */
static bool pattern_matches(const char *pattern, const char *path, struct gw_path_params *params)
{
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p == '{') {
            size_t n = strcspn(s, "/");
            if (n == 0)
                return false;
            char *field = params->id;
            size_t size = sizeof(params->id);
            if (strncmp(p, "{pid}", 5) == 0) {
                field = params->pid;
                size = sizeof(params->pid);
            } else if (strncmp(p, "{name}", 6) == 0) {
                field = params->name;
                size = sizeof(params->name);
            }
            snprintf(field, size, "%.*s", (int)n, s);
            p += strcspn(p, "}") + 1;
            s += n;
            continue;
        }
        if (*p != *s)
            return false;
        p++;
        s++;
    }
    return *p == '\0' && *s == '\0';
}

const struct gw_route *gw_route_match(const char *method, const char *path,
                                      struct gw_path_params *params, bool *path_known)
{
    *path_known = false;
    for (size_t i = 0; i < gw_routes_count; i++) {
        if (!pattern_matches(gw_routes[i].pattern, path, params))
            continue;
        if (strcmp(gw_routes[i].method, method) == 0)
            return &gw_routes[i];
        *path_known = true;
    }
    return NULL;
}
