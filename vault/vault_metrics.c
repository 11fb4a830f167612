#include "vault_metrics.h"

#include "rpc_server.h"

int vault_metrics_init(struct vault_metrics *m)
{
    m->reg = metrics_registry_new();
    m->calls = rpc_calls_metric(m->reg, "airlock_vault");
    m->injections = metrics_counter(m->reg, "airlock_vault_injections_total",
                                    "Credential injections egress asked for, by outcome.", 1,
                                    METRIC_LABELS("outcome"));
    return m->reg && m->calls && m->injections ? 0 : -1;
}

void vault_metrics_destroy(struct vault_metrics *m)
{
    metrics_registry_free(m->reg);
    m->reg = NULL;
}

/* The classes inject_resolve answers with (inject.c, project_keys.c). */
static const char *outcome(int rc, const struct airlock_error *e)
{
    if (rc == 0)
        return "injected";
    switch (e->class) {
    case AIRLOCK_ERR_CAPACITY: return "rate_limited";
    case AIRLOCK_ERR_STATE: return "locked"; /* a BYOK project without its key */
    case AIRLOCK_ERR_PERMISSION: return "denied";
    case AIRLOCK_ERR_NOT_FOUND: return "no_secret";
    case AIRLOCK_ERR_INVALID: return "invalid";
    default: return "error";
    }
}

void vault_metrics_injection(struct vault_metrics *m, int rc, const struct airlock_error *e)
{
    metric_add(m->injections, METRIC_LABELS(outcome(rc, e)), 1);
}
