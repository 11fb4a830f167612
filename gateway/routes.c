#include "routes.h"

#include <stdio.h>
#include <string.h>

#include "route_handlers.h"

/* A JSON route: its body is buffered (no upload hooks). */
#define ROUTE(method, pattern, auth, handle) \
    { method, pattern, GW_AUTH_##auth, handle, NULL, NULL, NULL }

const struct gw_route gw_routes[] = {
    ROUTE("GET", "/healthz", NONE, handle_healthz),
    ROUTE("GET", "/metrics", NONE, handle_metrics),
    ROUTE("GET", "/v1/whoami", KEY, handle_whoami),
    ROUTE("POST", "/v1/projects", ADMIN, handle_project_create),
    ROUTE("GET", "/v1/projects", ADMIN, handle_project_list),
    ROUTE("POST", "/v1/projects/{id}/keys", ADMIN, handle_key_create),
    ROUTE("GET", "/v1/projects/{id}/keys", ADMIN, handle_key_list),
    ROUTE("DELETE", "/v1/projects/{id}/keys/{name}", ADMIN, handle_key_revoke),
    ROUTE("PUT", "/v1/projects/{id}/org", ADMIN, handle_project_org_put),
    /* A project key reads its own project's (handlers_quota.c checks). */
    ROUTE("GET", "/v1/projects/{id}/quotas", KEY, handle_quotas_get),
    ROUTE("PUT", "/v1/projects/{id}/quotas", ADMIN, handle_quotas_put),
    ROUTE("GET", "/v1/nodes", ADMIN, handle_nodes_list),
    ROUTE("GET", "/v1/nodes/{id}", ADMIN, handle_node_get),
    ROUTE("POST", "/v1/nodes/{id}/drain", ADMIN, handle_node_drain),
    ROUTE("POST", "/v1/nodes/{id}/undrain", ADMIN, handle_node_undrain),
    ROUTE("POST", "/v1/orgs", ADMIN, handle_org_create),
    ROUTE("POST", "/v1/orgs/{id}/secrets", ADMIN, handle_org_secret_create),
    ROUTE("GET", "/v1/orgs/{id}/secrets", ADMIN, handle_org_secret_list),
    ROUTE("DELETE", "/v1/orgs/{id}/secrets/{name}", ADMIN, handle_org_secret_delete),
    ROUTE("GET", "/v1/orgs/{id}/audit", ADMIN, handle_org_audit_list),
    ROUTE("POST", "/v1/sandboxes", KEY, handle_sandbox_create),
    ROUTE("GET", "/v1/sandboxes", KEY, handle_sandbox_list),
    ROUTE("GET", "/v1/sandboxes/{id}", KEY, handle_sandbox_get),
    ROUTE("DELETE", "/v1/sandboxes/{id}", KEY, handle_sandbox_delete),
    ROUTE("POST", "/v1/sandboxes/{id}/pause", KEY, handle_sandbox_pause),
    ROUTE("POST", "/v1/sandboxes/{id}/resume", KEY, handle_sandbox_resume),
    ROUTE("POST", "/v1/sandboxes/{id}/suspend", KEY, handle_sandbox_suspend),
    ROUTE("PUT", "/v1/sandboxes/{id}/network", KEY, handle_sandbox_network_put),
    ROUTE("POST", "/v1/sandboxes/{id}/exec", KEY, handle_exec),
    /* The one raw body: streamed to the sandbox's vmhost as it arrives. */
    { "PUT", "/v1/sandboxes/{id}/files", GW_AUTH_KEY, handle_file_put, file_put_begin,
      file_put_chunk, file_put_cleanup },
    ROUTE("GET", "/v1/sandboxes/{id}/files", KEY, handle_file_get),
    ROUTE("DELETE", "/v1/sandboxes/{id}/files", KEY, handle_file_remove),
    ROUTE("GET", "/v1/sandboxes/{id}/files/list", KEY, handle_file_list),
    ROUTE("GET", "/v1/sandboxes/{id}/files/stat", KEY, handle_file_stat),
    ROUTE("GET", "/v1/sandboxes/{id}/files/watch", KEY, handle_file_watch),
    ROUTE("POST", "/v1/sandboxes/{id}/files/mkdir", KEY, handle_file_mkdir),
    ROUTE("POST", "/v1/sandboxes/{id}/files/rename", KEY, handle_file_rename),
    ROUTE("POST", "/v1/sandboxes/{id}/processes", KEY, handle_process_start),
    ROUTE("GET", "/v1/sandboxes/{id}/processes", KEY, handle_process_list),
    ROUTE("GET", "/v1/sandboxes/{id}/processes/{pid}/output", KEY, handle_process_output),
    ROUTE("POST", "/v1/sandboxes/{id}/processes/{pid}/stdin", KEY, handle_process_stdin),
    ROUTE("POST", "/v1/sandboxes/{id}/processes/{pid}/signal", KEY, handle_process_signal),
    ROUTE("POST", "/v1/sandboxes/{id}/processes/{pid}/resize", KEY, handle_process_resize),
    ROUTE("GET", "/v1/sandboxes/{id}/network/log", KEY, handle_network_log),
    ROUTE("GET", "/v1/sandboxes/{id}/logs", KEY, handle_console_log),
    ROUTE("POST", "/v1/sandboxes/{id}/checkpoints", KEY, handle_checkpoint_create),
    ROUTE("GET", "/v1/sandboxes/{id}/checkpoints", KEY, handle_checkpoint_list),
    ROUTE("DELETE", "/v1/sandboxes/{id}/checkpoints/{name}", KEY, handle_checkpoint_delete),
    ROUTE("POST", "/v1/sandboxes/{id}/restore", KEY, handle_checkpoint_restore),
    ROUTE("POST", "/v1/sandboxes/{id}/fork", KEY, handle_sandbox_fork),
    ROUTE("GET", "/v1/sandboxes/{id}/ports", KEY, handle_ports_list),
    ROUTE("POST", "/v1/sandboxes/{id}/ports/{port}/url", KEY, handle_port_url),
    ROUTE("GET", "/v1/events", KEY, handle_events),
    ROUTE("POST", "/v1/templates", KEY, handle_template_build),
    ROUTE("GET", "/v1/templates", KEY, handle_template_list),
    ROUTE("GET", "/v1/templates/{name}", KEY, handle_template_get),
    ROUTE("DELETE", "/v1/templates/{name}", KEY, handle_template_delete),
    ROUTE("PUT", "/v1/templates/{name}/warm-pool", ADMIN, handle_warm_pool_put),
    ROUTE("GET", "/v1/templates/{name}/warm-pool", ADMIN, handle_warm_pool_get),
    ROUTE("POST", "/v1/volumes", KEY, handle_volume_create),
    ROUTE("GET", "/v1/volumes", KEY, handle_volume_list),
    ROUTE("GET", "/v1/volumes/{id}", KEY, handle_volume_get),
    ROUTE("DELETE", "/v1/volumes/{id}", KEY, handle_volume_delete),
    ROUTE("POST", "/v1/volumes/{id}/grow", KEY, handle_volume_grow),
    ROUTE("POST", "/v1/volumes/{id}/snapshots", KEY, handle_volume_snapshot_create),
    ROUTE("GET", "/v1/volumes/{id}/snapshots", KEY, handle_volume_snapshot_list),
    ROUTE("DELETE", "/v1/volumes/{id}/snapshots/{name}", KEY, handle_volume_snapshot_delete),
    ROUTE("POST", "/v1/secrets", KEY, handle_secret_create),
    ROUTE("GET", "/v1/secrets", KEY, handle_secret_list),
    ROUTE("DELETE", "/v1/secrets/{name}", KEY, handle_secret_delete),
    ROUTE("POST", "/v1/secrets/unlock", KEY, handle_secrets_unlock),
    ROUTE("POST", "/v1/secrets/lock", KEY, handle_secrets_lock),
    ROUTE("GET", "/v1/audit", KEY, handle_audit_list),
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
            } else if (strncmp(p, "{port}", 6) == 0) {
                field = params->port;
                size = sizeof(params->port);
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

const struct gw_route *gw_route_match_in(const struct gw_route *table, size_t n,
                                         const char *method, const char *path,
                                         struct gw_path_params *params, bool *path_known)
{
    *path_known = false;
    for (size_t i = 0; i < n; i++) {
        if (!pattern_matches(table[i].pattern, path, params))
            continue;
        if (strcmp(table[i].method, method) == 0)
            return &table[i];
        *path_known = true;
    }
    return NULL;
}

const struct gw_route *gw_route_match(const char *method, const char *path,
                                      struct gw_path_params *params, bool *path_known)
{
    return gw_route_match_in(gw_routes, gw_routes_count, method, path, params, path_known);
}
