/* The questions asked of egress's shared state (egress_state.h). */
#include "egress_state.h"

#include "cidr.h"
#include "egress_metrics.h"
#include "host_addrs.h"

const char *egress_address_protection(const struct egress *eg, uint32_t addr)
{
    if (addr_is_never_reachable(addr)) /* loopback first: it is a host address too */
        return "protected_range";
    if (host_addrs_contains(eg->host_addrs, addr))
        return "host_address";
    for (size_t i = 0; i < eg->cfg.n_protected_cidrs; i++)
        if (cidr_contains(&eg->protected_cidrs[i], addr))
            return "protected_range";
    return NULL;
}

uint64_t egress_log(struct egress_sandbox *sb, const struct conn_entry *e)
{
    egress_metrics_logged(sb->eg->cfg.metrics, e);
    return conn_log_add(sb->log, e);
}

void egress_log_finish(struct egress_sandbox *sb, uint64_t seq, uint64_t sent, uint64_t received,
                       const char *reason)
{
    egress_metrics_bytes(sb->eg->cfg.metrics, sent, received);
    conn_log_finish(sb->log, seq, sent, received, reason);
}

struct egress_policy *egress_sandbox_policy(struct egress_sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    struct egress_policy *p = egress_policy_get(sb->policy);
    pthread_mutex_unlock(&sb->lock);
    return p;
}

bool egress_conn_still_allowed(const struct egress_conn *c, const struct egress_policy *policy)
{
    /* Pinned as it was when the connection opened: its answer's TTL
     * ending since does not end a connection the policy still allows. */
    struct egress_target t = c->target;
    t.name = c->name[0] ? c->name : NULL;
    return egress_policy_check_connection(policy, &t).verdict == EGRESS_ALLOW;
}
