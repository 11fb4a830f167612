#include "sandbox_network.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_client.h"
#include "log.h"
#include "sandbox_internal.h"
#include "sandbox_net.h"
#include "sandbox_record.h"

static enum airlock_err airlock_err_from_egress(grpc_status_code st)
{
    switch (st) {
    case GRPC_STATUS_OK: return AIRLOCK_OK;
    case GRPC_STATUS_INVALID_ARGUMENT: return AIRLOCK_ERR_INVALID;
    case GRPC_STATUS_NOT_FOUND: return AIRLOCK_ERR_NOT_FOUND;
    case GRPC_STATUS_UNAVAILABLE:
    case GRPC_STATUS_DEADLINE_EXCEEDED: return AIRLOCK_ERR_UNAVAILABLE;
    default: return AIRLOCK_ERR_INTERNAL;
    }
}

/* Without egress nothing enforces a policy, yet it is checked by the same
 * code egress uses and kept: the API answers alike with and without
 * --egress, and an invalid policy never looks accepted. */
static enum airlock_err policy_keep(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                                      char *err, size_t errlen)
{
    struct egress_policy *p = NULL;
    if (policy) {
        p = egress_policy_from_proto(policy, err, errlen);
        if (!p)
            return AIRLOCK_ERR_INVALID;
    }
    pthread_mutex_lock(&sb->lock);
    struct egress_policy *old = sb->kept_policy;
    sb->kept_policy = p;
    pthread_mutex_unlock(&sb->lock);
    if (old)
        egress_policy_put(old);
    return AIRLOCK_OK;
}

/* The CA egress answered with (credential injection; NULL: none): the
 * guest trusts it from its next SessionInit (sandbox_guest_init.c). */
static void keep_ca(struct sandbox *sb, char *ca_pem)
{
    free(sb->egress_ca_pem);
    sb->egress_ca_pem = ca_pem;
}

/* Attaches with the sandbox's project and keeps the CA. */
static grpc_status_code attach(struct sandbox *sb, const char *ns_path,
                               const Airlock__Egress__V1__Policy *policy, char *err, size_t errlen)
{
    char *ca_pem = NULL;
    grpc_status_code st = egress_client_attach(sb->vh->egress, sb->id, ns_path, policy,
                                               sb->project_id, &ca_pem, err, errlen);
    if (st == GRPC_STATUS_OK)
        keep_ca(sb, ca_pem);
    return st;
}

static void network_down_locked(struct sandbox *sb);

/* Attaches the sandbox's namespace to egress (or, without egress, checks
 * and keeps the policy) and saves the policy for an attach after a
 * restart. Undoes nothing on failure. */
static enum airlock_err attach_locked(struct sandbox *sb,
                                        const Airlock__Egress__V1__Policy *policy, char *err,
                                        size_t errlen)
{
    struct egress_client *ec = sb->vh->egress;
    enum airlock_err rc;
    char ns_path[256];
    if (!ec) {
        rc = policy_keep(sb, policy, err, errlen);
        if (rc != AIRLOCK_OK)
            return rc;
    } else {
        if (sandbox_net_netns_path(sb->id, ns_path, sizeof(ns_path)) < 0) {
            snprintf(err, errlen, "sandbox id too long for a namespace path: %s", sb->id);
            return AIRLOCK_ERR_INTERNAL;
        }
        grpc_status_code st = attach(sb, ns_path, policy, err, errlen);
        if (st != GRPC_STATUS_OK) {
            rc = airlock_err_from_egress(st);
            if (rc == AIRLOCK_ERR_UNAVAILABLE) {
                char why[768];
                snprintf(why, sizeof(why), "%s", err);
                snprintf(err, errlen, "egress at %s cannot be reached, so the sandbox would "
                         "have no network: %s", sb->vh->cfg.egress_addr, why);
            }
            return rc;
        }
        sb->egress_attached = true;
    }
    /* For the attach after a restart (sandbox_network_reattach/restore). */
    return sandbox_policy_save(sb, policy, err, errlen) < 0 ? AIRLOCK_ERR_INTERNAL : AIRLOCK_OK;
}

static enum airlock_err network_up_locked(struct sandbox *sb,
                                            const Airlock__Egress__V1__Policy *policy, char *err,
                                            size_t errlen)
{
    if (sandbox_net_create(sb->id, err, errlen) < 0)
        return AIRLOCK_ERR_INTERNAL;
    sb->net_up = true;
    enum airlock_err rc = attach_locked(sb, policy, err, errlen);
    if (rc != AIRLOCK_OK)
        network_down_locked(sb);
    return rc;
}

enum airlock_err sandbox_network_prepare(struct sandbox *sb, char *err, size_t errlen)
{
    pthread_mutex_lock(&sb->net_lock);
    int rc = sandbox_net_create(sb->id, err, errlen);
    sb->net_up = rc == 0;
    pthread_mutex_unlock(&sb->net_lock);
    return rc == 0 ? AIRLOCK_OK : AIRLOCK_ERR_INTERNAL;
}

enum airlock_err sandbox_network_up(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                                      char *err, size_t errlen)
{
    pthread_mutex_lock(&sb->net_lock);
    enum airlock_err rc = network_up_locked(sb, policy, err, errlen);
    pthread_mutex_unlock(&sb->net_lock);
    return rc;
}

struct sandbox_attach {
    pthread_t thread;
    struct sandbox *sb;
    const Airlock__Egress__V1__Policy *policy;
    enum airlock_err rc;
    char err[1024];
};

static void *attach_main(void *arg)
{
    struct sandbox_attach *a = arg;
    pthread_mutex_lock(&a->sb->net_lock);
    a->rc = attach_locked(a->sb, a->policy, a->err, sizeof(a->err));
    pthread_mutex_unlock(&a->sb->net_lock);
    return NULL;
}

struct sandbox_attach *sandbox_network_attach_start(struct sandbox *sb,
                                                    const Airlock__Egress__V1__Policy *policy,
                                                    char *err, size_t errlen)
{
    struct sandbox_attach *a = calloc(1, sizeof(*a));
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    a->sb = sb;
    a->policy = policy;
    int rc = pthread_create(&a->thread, NULL, attach_main, a);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the egress attach: %s", strerror(rc));
        free(a);
        return NULL;
    }
    return a;
}

enum airlock_err sandbox_network_attach_finish(struct sandbox_attach *a, char *err,
                                                 size_t errlen)
{
    pthread_join(a->thread, NULL);
    enum airlock_err rc = a->rc;
    if (rc != AIRLOCK_OK)
        snprintf(err, errlen, "%s", a->err);
    free(a);
    return rc;
}

static void network_down_locked(struct sandbox *sb)
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

void sandbox_network_down(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->net_lock);
    network_down_locked(sb);
    pthread_mutex_unlock(&sb->net_lock);
}

/* Attaches the existing namespace with policy; an egress that knows the
 * sandbox already gets the policy set instead. */
static enum airlock_err reattach_locked(struct sandbox *sb,
                                          const Airlock__Egress__V1__Policy *policy, char *err,
                                          size_t errlen)
{
    struct egress_client *ec = sb->vh->egress;
    char ns_path[256];
    if (!ec)
        return policy_keep(sb, policy, err, errlen);
    if (sandbox_net_netns_path(sb->id, ns_path, sizeof(ns_path)) < 0) {
        snprintf(err, errlen, "sandbox id too long for a namespace path: %s", sb->id);
        return AIRLOCK_ERR_INTERNAL;
    }
    grpc_status_code st = attach(sb, ns_path, policy, err, errlen);
    if (st == GRPC_STATUS_ALREADY_EXISTS) {
        /* Its CA too: a restarted vmhost has none in memory, and the
         * guest's next session would otherwise drop the trust in it. */
        char *ca_pem = NULL;
        st = egress_client_set_policy(ec, sb->id, policy, sb->project_id, &ca_pem, err, errlen);
        if (st == GRPC_STATUS_OK)
            keep_ca(sb, ca_pem);
    }
    enum airlock_err rc = airlock_err_from_egress(st);
    if (rc == AIRLOCK_OK)
        sb->egress_attached = true;
    return rc;
}

enum airlock_err sandbox_set_policy(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                                      char *err, size_t errlen)
{
    enum airlock_err rc;
    pthread_mutex_lock(&sb->net_lock);
    if (!sb->vh->egress || !sb->net_up) { /* no network now: checked, used when it comes back */
        rc = policy_keep(sb, policy, err, errlen);
    } else if (!sb->egress_attached) { /* a pooled VM being handed out */
        rc = reattach_locked(sb, policy, err, errlen);
    } else {
        rc = airlock_err_from_egress(
            egress_client_set_policy(sb->vh->egress, sb->id, policy, sb->project_id, NULL, err,
                                     errlen));
        /* An egress that restarted since knows no sandbox: attach it again,
         * now with this policy. */
        if (rc == AIRLOCK_ERR_NOT_FOUND) {
            log_warn("egress lost the sandbox: attaching it again", "sandbox=%s", sb->id);
            rc = reattach_locked(sb, policy, err, errlen);
        }
    }
    if (rc == AIRLOCK_OK && sandbox_policy_save(sb, policy, err, errlen) < 0)
        rc = AIRLOCK_ERR_INTERNAL;
    pthread_mutex_unlock(&sb->net_lock);
    return rc;
}

enum airlock_err sandbox_network_reattach(struct sandbox *sb, char *err, size_t errlen)
{
    pthread_mutex_lock(&sb->net_lock);
    Airlock__Egress__V1__Policy *policy;
    enum airlock_err rc = AIRLOCK_ERR_INTERNAL;
    /* A namespace to attach (deleted or taken away meanwhile: nothing to do). */
    if (!sb->net_up)
        rc = AIRLOCK_OK;
    else if (sandbox_policy_load(sb, &policy, err, errlen) == 0) {
        rc = reattach_locked(sb, policy, err, errlen);
        if (policy)
            airlock__egress__v1__policy__free_unpacked(policy, NULL);
    }
    pthread_mutex_unlock(&sb->net_lock);
    return rc;
}

enum airlock_err sandbox_network_restore(struct sandbox *sb, char *err, size_t errlen)
{
    if (sb->net_up)
        return AIRLOCK_OK;
    Airlock__Egress__V1__Policy *policy;
    if (sandbox_policy_load(sb, &policy, err, errlen) < 0)
        return AIRLOCK_ERR_INTERNAL;
    enum airlock_err rc = sandbox_network_up(sb, policy, err, errlen);
    if (policy)
        airlock__egress__v1__policy__free_unpacked(policy, NULL);
    return rc;
}
