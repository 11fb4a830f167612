#include "sandbox_network.h"

#include <stdio.h>

#include "egress_client.h"
#include "log.h"
#include "sandbox_net.h"

static enum sandbox_error sandbox_error_from_egress(grpc_status_code st)
{
    switch (st) {
    case GRPC_STATUS_OK: return SANDBOX_OK;
    case GRPC_STATUS_INVALID_ARGUMENT: return SANDBOX_ERR_INVALID;
    case GRPC_STATUS_NOT_FOUND: return SANDBOX_ERR_NOT_FOUND;
    default: return SANDBOX_ERR_INTERNAL;
    }
}

/* Without egress nothing enforces a policy, yet it is checked by the same
 * code egress uses and kept: the API answers alike with and without
 * --egress, and an invalid policy never looks accepted. */
static enum sandbox_error policy_keep(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                                      char *err, size_t errlen)
{
    struct egress_policy *p = NULL;
    if (policy) {
        p = egress_policy_from_proto(policy, err, errlen);
        if (!p)
            return SANDBOX_ERR_INVALID;
    }
    pthread_mutex_lock(&sb->lock);
    struct egress_policy *old = sb->kept_policy;
    sb->kept_policy = p;
    pthread_mutex_unlock(&sb->lock);
    if (old)
        egress_policy_put(old);
    return SANDBOX_OK;
}

enum sandbox_error sandbox_network_up(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                                      char *err, size_t errlen)
{
    if (sandbox_net_create(sb->id, err, errlen) < 0)
        return SANDBOX_ERR_INTERNAL;
    sb->net_up = true;
    struct egress_client *ec = sb->vh->egress;
    char ns_path[256];
    enum sandbox_error rc = SANDBOX_ERR_INTERNAL;
    if (!ec) {
        rc = policy_keep(sb, policy, err, errlen);
        if (rc != SANDBOX_OK)
            goto fail;
        return SANDBOX_OK;
    }
    if (sandbox_net_netns_path(sb->id, ns_path, sizeof(ns_path)) < 0) {
        snprintf(err, errlen, "sandbox id too long for a namespace path: %s", sb->id);
        goto fail;
    }
    grpc_status_code st = egress_client_attach(ec, sb->id, ns_path, policy, err, errlen);
    if (st != GRPC_STATUS_OK) {
        rc = sandbox_error_from_egress(st);
        goto fail;
    }
    sb->egress_attached = true;
    return SANDBOX_OK;
fail:
    sandbox_network_down(sb);
    return rc;
}

void sandbox_network_down(struct sandbox *sb)
{
    char err[1024];
    if (sb->egress_attached &&
        egress_client_detach(sb->vh->egress, sb->id, err, sizeof(err)) != GRPC_STATUS_OK)
        log_error("cannot detach sandbox from egress; its namespace lingers until egress "
                  "closes its sockets",
                  "sandbox=%s error=\"%s\"", sb->id, err);
    sb->egress_attached = false;
    if (sb->net_up && sandbox_net_delete(sb->id, err, sizeof(err)) < 0)
        log_error("cannot delete sandbox network", "sandbox=%s error=\"%s\"", sb->id, err);
    sb->net_up = false;
    policy_keep(sb, NULL, NULL, 0);
}

enum sandbox_error sandbox_set_policy(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                                      char *err, size_t errlen)
{
    if (!sb->vh->egress)
        return policy_keep(sb, policy, err, errlen);
    return sandbox_error_from_egress(
        egress_client_set_policy(sb->vh->egress, sb->id, policy, err, errlen));
}
