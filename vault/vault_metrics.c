#include "vault_metrics.h"

#include "rpc_server.h"

enum outcome { INJECTED, RATE_LIMITED, LOCKED, DENIED, NO_SECRET, INVALID, FAILED, N_OUTCOMES };

static const char *const outcome_names[N_OUTCOMES] = {
    [INJECTED] = "injected", [RATE_LIMITED] = "rate_limited", [LOCKED] = "locked",
    [DENIED] = "denied",     [NO_SECRET] = "no_secret",       [INVALID] = "invalid",
    [FAILED] = "error",
};

int vault_metrics_init(struct vault_metrics *m)
{
    m->reg = metrics_registry_new();
    m->calls = rpc_calls_metric(m->reg, "airlock_vault");
    m->injections = metrics_counter(m->reg, "airlock_vault_injections_total",
                                    "Credential injections egress asked for, by outcome.", 1,
                                    METRIC_LABELS("outcome"));
    /* Every outcome from the start: a rate over a series that appears
     * only at its first event misses that event. */
    for (int o = 0; o < N_OUTCOMES; o++)
        metric_add(m->injections, METRIC_LABELS(outcome_names[o]), 0);
    return m->reg && m->calls && m->injections ? 0 : -1;
}

void vault_metrics_destroy(struct vault_metrics *m)
{
    metrics_registry_free(m->reg);
    m->reg = NULL;
}

/* The classes inject_resolve answers with (inject.c, project_keys.c). */
static enum outcome outcome(int rc, const struct airlock_error *e)
{
    if (rc == 0)
        return INJECTED;
    switch (e->class) {
    case AIRLOCK_ERR_CAPACITY: return RATE_LIMITED;
    case AIRLOCK_ERR_STATE: return LOCKED; /* a BYOK project without its key */
    case AIRLOCK_ERR_PERMISSION: return DENIED;
    case AIRLOCK_ERR_NOT_FOUND: return NO_SECRET;
    case AIRLOCK_ERR_INVALID: return INVALID;
    default: return FAILED;
    }
}

void vault_metrics_injection(struct vault_metrics *m, int rc, const struct airlock_error *e)
{
    metric_add(m->injections, METRIC_LABELS(outcome_names[outcome(rc, e)]), 1);
}
