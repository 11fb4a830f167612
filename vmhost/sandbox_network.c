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

/* egress's answer as this module's: 0, or -1 with the class its status
 * means for a sandbox (the message is the egress client's, in e). */
static int from_egress(grpc_status_code st, struct airlock_error *e)
{
    switch (st) {
    case GRPC_STATUS_OK: return 0;
    case GRPC_STATUS_INVALID_ARGUMENT: return airlock_error_classify(e, AIRLOCK_ERR_INVALID);
    case GRPC_STATUS_NOT_FOUND: return airlock_error_classify(e, AIRLOCK_ERR_NOT_FOUND);
    case GRPC_STATUS_UNAVAILABLE:
    case GRPC_STATUS_DEADLINE_EXCEEDED: return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    default: return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    }
}

/* Without egress nothing enforces a policy, yet it is checked by the same
 * code egress uses and kept: the API answers alike with and without
 * --egress, and an invalid policy never looks accepted. e may be NULL
 * when policy is. */
static int policy_keep(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                       struct airlock_error *e)
{
    struct egress_policy *p = NULL;
    if (policy) {
        p = egress_policy_from_proto(policy, AIRLOCK_ERROR_MSG(e));
        if (!p)
            return airlock_error_classify(e, AIRLOCK_ERR_INVALID);
    }
    pthread_mutex_lock(&sb->lock);
    struct egress_policy *old = sb->kept_policy;
    sb->kept_policy = p;
    pthread_mutex_unlock(&sb->lock);
    if (old)
        egress_policy_put(old);
    return 0;
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
                               const Airlock__Egress__V1__Policy *policy, struct airlock_error *e)
{
    char *ca_pem = NULL;
    grpc_status_code st = egress_client_attach(sb->vh->egress, sb->id, ns_path, policy,
                                               sb->project_id, &ca_pem, AIRLOCK_ERROR_MSG(e));
    if (st == GRPC_STATUS_OK)
        keep_ca(sb, ca_pem);
    return st;
}

static void network_down_locked(struct sandbox *sb);

/* Attaches the sandbox's namespace to egress (or, without egress, checks
 * and keeps the policy) and saves the policy for an attach after a
 * restart. Undoes nothing on failure. */
static int attach_locked(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                         struct airlock_error *e)
{
    struct egress_client *ec = sb->vh->egress;
    char ns_path[256];
    if (!ec) {
        if (policy_keep(sb, policy, e) < 0)
            return -1;
    } else {
        if (sandbox_net_netns_path(sb->id, ns_path, sizeof(ns_path)) < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL,
                                     "sandbox id too long for a namespace path: %s", sb->id);
        if (from_egress(attach(sb, ns_path, policy, e), e) < 0) {
            if (e->class == AIRLOCK_ERR_UNAVAILABLE)
                airlock_error_prefix(e,
                                     "egress at %s cannot be reached, so the sandbox would "
                                     "have no network: ",
                                     sb->vh->cfg.egress_addr);
            return -1;
        }
        sb->egress_attached = true;
    }
    /* For the attach after a restart (sandbox_network_reattach/restore). */
    if (sandbox_policy_save(sb, policy, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    return 0;
}

static int network_up_locked(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                             struct airlock_error *e)
{
    if (sandbox_net_create(sb->id, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    sb->net_up = true;
    int rc = attach_locked(sb, policy, e);
    if (rc < 0)
        network_down_locked(sb);
    return rc;
}

int sandbox_network_prepare(struct sandbox *sb, struct airlock_error *e)
{
    pthread_mutex_lock(&sb->net_lock);
    int rc = sandbox_net_create(sb->id, AIRLOCK_ERROR_MSG(e));
    sb->net_up = rc == 0;
    pthread_mutex_unlock(&sb->net_lock);
    return rc == 0 ? 0 : airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
}

int sandbox_network_up(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                       struct airlock_error *e)
{
    pthread_mutex_lock(&sb->net_lock);
    int rc = network_up_locked(sb, policy, e);
    pthread_mutex_unlock(&sb->net_lock);
    return rc;
}

struct sandbox_attach {
    pthread_t thread;
    struct sandbox *sb;
    const Airlock__Egress__V1__Policy *policy;
    int rc;
    struct airlock_error e;
};

static void *attach_main(void *arg)
{
    struct sandbox_attach *a = arg;
    pthread_mutex_lock(&a->sb->net_lock);
    a->rc = attach_locked(a->sb, a->policy, &a->e);
    pthread_mutex_unlock(&a->sb->net_lock);
    return NULL;
}

struct sandbox_attach *sandbox_network_attach_start(struct sandbox *sb,
                                                    const Airlock__Egress__V1__Policy *policy,
                                                    struct airlock_error *e)
{
    struct sandbox_attach *a = calloc(1, sizeof(*a));
    if (!a) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    a->sb = sb;
    a->policy = policy;
    int rc = pthread_create(&a->thread, NULL, attach_main, a);
    if (rc != 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot start the egress attach: %s",
                          strerror(rc));
        free(a);
        return NULL;
    }
    return a;
}

int sandbox_network_attach_finish(struct sandbox_attach *a, struct airlock_error *e)
{
    pthread_join(a->thread, NULL);
    int rc = a->rc;
    if (rc < 0)
        *e = a->e;
    free(a);
    return rc;
}

static void network_down_locked(struct sandbox *sb)
{
    char err[AIRLOCK_ERROR_MESSAGE_SIZE];
    if (sb->egress_attached &&
        egress_client_detach(sb->vh->egress, sb->id, err, sizeof(err)) != GRPC_STATUS_OK)
        log_error("cannot detach sandbox from egress; its namespace lingers until egress "
                  "closes its sockets",
                  "sandbox=%s error=\"%s\"", sb->id, err);
    sb->egress_attached = false;
    if (sb->net_up && sandbox_net_delete(sb->id, err, sizeof(err)) < 0)
        log_error("cannot delete sandbox network", "sandbox=%s error=\"%s\"", sb->id, err);
    sb->net_up = false;
    policy_keep(sb, NULL, NULL);
}

void sandbox_network_down(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->net_lock);
    network_down_locked(sb);
    pthread_mutex_unlock(&sb->net_lock);
}

/* Attaches the existing namespace with policy; an egress that knows the
 * sandbox already gets the policy set instead. */
static int reattach_locked(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                           struct airlock_error *e)
{
    struct egress_client *ec = sb->vh->egress;
    char ns_path[256];
    if (!ec)
        return policy_keep(sb, policy, e);
    if (sandbox_net_netns_path(sb->id, ns_path, sizeof(ns_path)) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL,
                                 "sandbox id too long for a namespace path: %s", sb->id);
    grpc_status_code st = attach(sb, ns_path, policy, e);
    if (st == GRPC_STATUS_ALREADY_EXISTS) {
        /* Its CA too: a restarted vmhost has none in memory, and the
         * guest's next session would otherwise drop the trust in it. */
        char *ca_pem = NULL;
        st = egress_client_set_policy(ec, sb->id, policy, sb->project_id, &ca_pem,
                                      AIRLOCK_ERROR_MSG(e));
        if (st == GRPC_STATUS_OK)
            keep_ca(sb, ca_pem);
    }
    int rc = from_egress(st, e);
    if (rc == 0)
        sb->egress_attached = true;
    return rc;
}

int sandbox_set_policy(struct sandbox *sb, const Airlock__Egress__V1__Policy *policy,
                       struct airlock_error *e)
{
    int rc;
    pthread_mutex_lock(&sb->net_lock);
    if (!sb->vh->egress || !sb->net_up) { /* no network now: checked, used when it comes back */
        rc = policy_keep(sb, policy, e);
    } else if (!sb->egress_attached) { /* a pooled VM being handed out */
        rc = reattach_locked(sb, policy, e);
    } else {
        rc = from_egress(egress_client_set_policy(sb->vh->egress, sb->id, policy, sb->project_id,
                                                  NULL, AIRLOCK_ERROR_MSG(e)),
                         e);
        /* An egress that restarted since knows no sandbox: attach it again,
         * now with this policy. */
        if (rc < 0 && e->class == AIRLOCK_ERR_NOT_FOUND) {
            log_warn("egress lost the sandbox: attaching it again", "sandbox=%s", sb->id);
            airlock_error_clear(e);
            rc = reattach_locked(sb, policy, e);
        }
    }
    if (rc == 0 && sandbox_policy_save(sb, policy, AIRLOCK_ERROR_MSG(e)) < 0)
        rc = airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    pthread_mutex_unlock(&sb->net_lock);
    return rc;
}

int sandbox_network_reattach(struct sandbox *sb, struct airlock_error *e)
{
    pthread_mutex_lock(&sb->net_lock);
    Airlock__Egress__V1__Policy *policy;
    int rc = 0;
    /* A namespace to attach (deleted or taken away meanwhile: nothing to do). */
    if (sb->net_up) {
        if (sandbox_policy_load(sb, &policy, AIRLOCK_ERROR_MSG(e)) < 0) {
            rc = airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        } else {
            rc = reattach_locked(sb, policy, e);
            if (policy)
                airlock__egress__v1__policy__free_unpacked(policy, NULL);
        }
    }
    pthread_mutex_unlock(&sb->net_lock);
    return rc;
}

int sandbox_network_restore(struct sandbox *sb, struct airlock_error *e)
{
    if (sb->net_up)
        return 0;
    Airlock__Egress__V1__Policy *policy;
    if (sandbox_policy_load(sb, &policy, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
    int rc = sandbox_network_up(sb, policy, e);
    if (policy)
        airlock__egress__v1__policy__free_unpacked(policy, NULL);
    return rc;
}
