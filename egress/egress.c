/* The registry of attached sandboxes and egress's node-wide settings. */
#include "egress.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "conn_loop.h"
#include "egress_sandbox.h"
#include "egress_state.h"
#include "host_addrs.h"
#include "intercept.h"
#include "log.h"
#include "random_id.h"
#include "sandbox_id.h"

struct egress *egress_new(const struct egress_config *cfg, char *err, size_t errlen)
{
    struct egress *eg = calloc(1, sizeof(*eg));
    if (!eg) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    eg->cfg = *cfg;
    if (random_id("", 16, eg->instance_id, sizeof(eg->instance_id)) < 0) {
        snprintf(err, errlen, "getrandom failed");
        free(eg);
        return NULL;
    }
    if (cfg->n_protected_cidrs) {
        eg->protected_cidrs = calloc(cfg->n_protected_cidrs, sizeof(*eg->protected_cidrs));
        if (!eg->protected_cidrs) {
            snprintf(err, errlen, "out of memory");
            free(eg);
            return NULL;
        }
        memcpy(eg->protected_cidrs, cfg->protected_cidrs,
               cfg->n_protected_cidrs * sizeof(*eg->protected_cidrs));
    }
    eg->cfg.protected_cidrs = eg->protected_cidrs;
    if (cfg->uplink_netns) {
        snprintf(eg->uplink_netns, sizeof(eg->uplink_netns), "%s", cfg->uplink_netns);
        eg->cfg.uplink_netns = eg->uplink_netns;
    }
    if (!eg->cfg.upstream_dns_port)
        eg->cfg.upstream_dns_port = 53;
    if (eg->cfg.sniff_timeout_ms <= 0)
        eg->cfg.sniff_timeout_ms = 5000;
    if (eg->cfg.connect_timeout_ms <= 0)
        eg->cfg.connect_timeout_ms = 10000;
    if (eg->cfg.dns_timeout_ms <= 0)
        eg->cfg.dns_timeout_ms = 2000;
    if (eg->cfg.max_conns_per_sandbox == 0)
        eg->cfg.max_conns_per_sandbox = 256;
    if (eg->cfg.max_pending_per_sandbox == 0)
        eg->cfg.max_pending_per_sandbox = 32;
    if (eg->cfg.idle_timeout_ms <= 0)
        eg->cfg.idle_timeout_ms = 600000;
    if (eg->cfg.conn_threads == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        eg->cfg.conn_threads = cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
    }
    pthread_mutex_init(&eg->lock, NULL);

    if (!(eg->host_addrs = host_addrs_start(eg->cfg.uplink_netns, err, errlen))) {
        pthread_mutex_destroy(&eg->lock);
        free(eg->protected_cidrs);
        free(eg);
        return NULL;
    }
    if (!(eg->conn_loop = conn_loop_new(eg->cfg.conn_threads, eg->cfg.uplink_netns, err,
                                        errlen)) ||
        (cfg->vault_addr && !(eg->injector = egress_injector_new(cfg, err, errlen)))) {
        egress_free(eg);
        return NULL;
    }
    return eg;
}

void egress_free(struct egress *eg)
{
    if (!eg)
        return;
    while (eg->sandboxes) {
        struct egress_sandbox *sb = eg->sandboxes;
        eg->sandboxes = sb->next;
        egress_sandbox_stop(sb);
    }
    conn_loop_free(eg->conn_loop); /* every connection ended with its sandbox */
    pthread_mutex_destroy(&eg->lock);
    egress_injector_free(eg->injector);
    host_addrs_stop(eg->host_addrs);
    free(eg->protected_cidrs);
    free(eg);
}

void egress_status(struct egress *eg, char *instance_id, unsigned *sandboxes)
{
    memcpy(instance_id, eg->instance_id, sizeof(eg->instance_id));
    pthread_mutex_lock(&eg->lock);
    *sandboxes = 0;
    for (struct egress_sandbox *sb = eg->sandboxes; sb; sb = sb->next)
        (*sandboxes)++;
    pthread_mutex_unlock(&eg->lock);
}

static struct egress_sandbox **find_locked(struct egress *eg, const char *id)
{
    struct egress_sandbox **pp = &eg->sandboxes;
    while (*pp && strcmp((*pp)->id, id) != 0)
        pp = &(*pp)->next;
    return pp;
}

/* vault's rule for ids; empty = none. */
static bool project_id_valid(const char *id, struct airlock_error *e)
{
    size_t n = strlen(id);
    bool valid = n <= 128;
    for (size_t i = 0; valid && i < n; i++)
        valid = (id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
                (id[i] >= '0' && id[i] <= '9') || id[i] == '-' || id[i] == '_' || id[i] == '.';
    if (!valid)
        airlock_error_set(e, AIRLOCK_ERR_INVALID,
                          "project_id: at most 128 characters of A-Z a-z 0-9 _ . -");
    return valid;
}

static bool sandbox_id_checked(const char *id, struct airlock_error *e)
{
    if (sandbox_id_valid(id))
        return true;
    airlock_error_set(e, AIRLOCK_ERR_INVALID, "sandbox_id: must be [a-z0-9_-]{1,64}");
    return false;
}

static bool netns_path_valid(const char *path, struct airlock_error *e)
{
    if (path && path[0] == '/')
        return true;
    airlock_error_set(e, AIRLOCK_ERR_INVALID, "netns_path: must be an absolute path");
    return false;
}

/* inspect_tls terminates TLS with the sandbox's CA: without --vault
 * there is none. */
static bool policy_possible(const struct egress *eg, const struct egress_policy *policy,
                            struct airlock_error *e)
{
    if (!egress_policy_inspects_tls(policy) || eg->injector)
        return true;
    airlock_error_set(e, AIRLOCK_ERR_INVALID,
                      "policy.inspect_tls: this egress runs without --vault, so it has no "
                      "sandbox CA to terminate TLS with");
    return false;
}

int egress_attach(struct egress *eg, const char *sandbox_id, const char *netns_path,
                  struct egress_policy *policy, const char *project_id, char **ca_pem,
                  struct airlock_error *e)
{
    *ca_pem = NULL;
    if (!sandbox_id_checked(sandbox_id, e) || !netns_path_valid(netns_path, e) ||
        !project_id_valid(project_id, e) || !policy_possible(eg, policy, e)) {
        egress_policy_put(policy);
        return -1;
    }
    /* Held across the start so two attaches of one id cannot both open
     * listeners; starting takes a millisecond. */
    pthread_mutex_lock(&eg->lock);
    int rc = -1;
    if (*find_locked(eg, sandbox_id)) {
        airlock_error_set(e, AIRLOCK_ERR_EXISTS, "sandbox %s is attached already", sandbox_id);
        egress_policy_put(policy);
        goto out;
    }
    int64_t started = clock_monotonic_us();
    struct sandbox_ca *ca = NULL;
    if (eg->injector &&
        (!(ca = egress_injector_sandbox_ca(eg->injector, sandbox_id, e->message,
                                           sizeof(e->message))) ||
         !(*ca_pem = strdup(sandbox_ca_pem(ca))))) {
        if (ca)
            airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        else
            airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        sandbox_ca_free(ca);
        egress_policy_put(policy);
        goto out;
    }
    int64_t ca_issued = clock_monotonic_us();
    struct egress_sandbox *sb = egress_sandbox_start(eg, sandbox_id, netns_path, policy, ca,
                                                     project_id, e->message, sizeof(e->message));
    if (!sb) {
        free(*ca_pem);
        *ca_pem = NULL;
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto out;
    }
    sb->next = eg->sandboxes;
    eg->sandboxes = sb;
    rc = 0;
    /* Where an attach's time goes: the sandbox CA (keys, certificate,
     * saved with --state-dir), the listeners in the sandbox's netns. */
    int64_t done = clock_monotonic_us();
    log_info("sandbox attached",
             "sandbox=%s netns=%s project=%s injection=%s us=%lld ca_us=%lld start_us=%lld",
             sandbox_id, netns_path, project_id[0] ? project_id : "-",
             eg->injector ? "on" : "off", (long long)(done - started),
             (long long)(ca_issued - started), (long long)(done - ca_issued));
out:
    pthread_mutex_unlock(&eg->lock);
    return rc;
}

int egress_set_policy(struct egress *eg, const char *sandbox_id, struct egress_policy *policy,
                      const char *project_id, char **ca_pem, struct airlock_error *e)
{
    if (ca_pem)
        *ca_pem = NULL;
    if (!project_id_valid(project_id, e) || !policy_possible(eg, policy, e)) {
        egress_policy_put(policy);
        return -1;
    }
    pthread_mutex_lock(&eg->lock);
    struct egress_sandbox *sb = *find_locked(eg, sandbox_id);
    if (!sb) {
        airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "sandbox %s is not attached", sandbox_id);
        goto out_eg;
    }
    pthread_mutex_lock(&sb->lock);
    /* A sandbox never moves to another project's credentials. */
    if (project_id[0] && sb->project_id[0] && strcmp(project_id, sb->project_id) != 0) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "project_id: sandbox %s belongs to project %s",
                          sandbox_id, sb->project_id);
        goto out_sb;
    }
    if (ca_pem && sb->ca && !(*ca_pem = strdup(sandbox_ca_pem(sb->ca)))) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        goto out_sb;
    }
    if (project_id[0])
        snprintf(sb->project_id, sizeof(sb->project_id), "%s", project_id);
    struct egress_policy *old = sb->policy;
    sb->policy = policy;
    pthread_mutex_unlock(&sb->lock);
    /* Open connections the new policy denies end now (kept-alive ones
     * would otherwise keep reaching what is no longer allowed). Under
     * eg->lock, so the sandbox cannot be detached meanwhile. */
    unsigned closed = egress_sandbox_recheck(sb, policy);
    pthread_mutex_unlock(&eg->lock);
    egress_policy_put(old);
    log_info("policy changed", "sandbox=%s connections_closed=%u", sandbox_id, closed);
    return 0;
out_sb:
    pthread_mutex_unlock(&sb->lock);
out_eg:
    pthread_mutex_unlock(&eg->lock);
    egress_policy_put(policy);
    return -1;
}

int egress_detach(struct egress *eg, const char *sandbox_id, struct airlock_error *e)
{
    pthread_mutex_lock(&eg->lock);
    struct egress_sandbox **pp = find_locked(eg, sandbox_id);
    struct egress_sandbox *sb = *pp;
    if (sb)
        *pp = sb->next;
    pthread_mutex_unlock(&eg->lock);
    if (!sb)
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "sandbox %s is not attached",
                                 sandbox_id);
    /* Gone for good, unlike at egress's own shutdown: its CA too. */
    if (sb->ca)
        sandbox_ca_forget(sb->ca);
    egress_sandbox_stop(sb);
    log_info("sandbox detached", "sandbox=%s", sandbox_id);
    return 0;
}

int egress_connections(struct egress *eg, const char *sandbox_id, uint64_t after_seq,
                       struct conn_entry **out, size_t *n, struct airlock_error *e)
{
    pthread_mutex_lock(&eg->lock);
    struct egress_sandbox *sb = *find_locked(eg, sandbox_id);
    int rc = 0;
    if (!sb)
        rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "sandbox %s is not attached",
                               sandbox_id);
    else if (conn_log_read(sb->log, after_seq, out, n) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    pthread_mutex_unlock(&eg->lock);
    return rc;
}
