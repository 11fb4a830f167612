/* The questions asked of egress's shared state (egress_state.h). */
#include "egress_state.h"

#include "cidr.h"
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
