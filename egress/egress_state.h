/* The state egress's files share: the node (struct egress), each attached
 * sandbox, and each guest connection as detaches and policy changes see
 * it; with the questions the files below the registry ask of it. It calls
 * none of them: the registry (egress.c), a sandbox's loop
 * (egress_sandbox.c), DNS (egress_dns.c) and TCP (egress_tcp.c) all stand
 * above it. */
#ifndef AIRLOCK_EGRESS_STATE_H
#define AIRLOCK_EGRESS_STATE_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "conn_log.h"
#include "egress_config.h"
#include "pins.h"
#include "policy.h"

struct egress_sandbox;

struct egress {
    struct egress_config cfg;         /* timeouts resolved; uplink_netns points below */
    char uplink_netns[PATH_MAX];
    struct host_addrs *host_addrs;    /* the uplink namespace's own, followed live */
    struct cidr *protected_cidrs;     /* a copy of egress_config's */
    pthread_mutex_t lock;             /* sandboxes */
    struct egress_sandbox *sandboxes;
    struct egress_injector *injector; /* NULL without --vault (intercept.h) */
    struct conn_loop *conn_loop;      /* every guest TCP connection's (conn_loop.h) */
    char instance_id[33];             /* random per start (egress_status) */
};

/* One guest connection, as detaches and policy changes see it (the rest
 * of it is egress_tcp.c's). */
struct egress_conn {
    struct egress_sandbox *sb;
    int client_fd;
    int upstream_fd;                  /* -1 until dialled; set under sb->lock */
    /* Once allowed (under sb->lock): what was decided, for a policy
     * change to decide again (target.name points at name). */
    bool allowed;
    struct egress_target target;
    char name[NAME_MAX_LEN + 1];
    bool closed_by_policy;            /* ended by egress_sandbox_recheck */
    bool pending;                     /* counted in sb->n_pending */
    struct egress_conn *next;
};

struct egress_sandbox {
    char id[65];
    struct egress *eg;
    pthread_mutex_t lock;             /* policy, conns, stopping */
    pthread_cond_t conns_gone;
    struct egress_policy *policy;
    struct egress_conn *conns;
    unsigned n_conns;                 /* in conns */
    unsigned n_pending;               /* of them not decided yet */
    uint64_t refused_over_share;      /* connections refused for the caps */
    bool stopping;
    struct pin_table *pins;
    struct conn_log *log;
    struct sandbox_ca *ca;            /* with --vault: the sandbox's own CA */
    char project_id[129];             /* whose credentials it gets; "" = none; under lock */
    int tcp_fd;                       /* listeners, inside the sandbox namespace */
    int dns_fd;
    int wake[2];                      /* tells the loop thread to stop */
    pthread_t loop;
    bool loop_started;
    struct egress_sandbox *next;      /* protected by eg->lock */
};

/* Why no sandbox may reach addr whatever its policy says: "host_address"
 * (an address of egress's uplink namespace: the node itself),
 * "protected_range" (addr_is_never_reachable, or a range the operator
 * protects: egress_config.protected_cidrs); NULL when a policy decides. */
const char *egress_address_protection(const struct egress *eg, uint32_t addr);

/* Adds e to the sandbox's connection log, counted in egress's metrics;
 * its seq. */
uint64_t egress_log(struct egress_sandbox *sb, const struct conn_entry *e);
/* conn_log_finish on the sandbox's log, the bytes counted too. */
void egress_log_finish(struct egress_sandbox *sb, uint64_t seq, uint64_t sent, uint64_t received,
                       const char *reason);

/* A reference to the sandbox's current policy. */
struct egress_policy *egress_sandbox_policy(struct egress_sandbox *sb);

/* Whether policy still allows the allowed connection c, as it was decided
 * (its name pinned or not as when it opened). Caller holds c->sb->lock. */
bool egress_conn_still_allowed(const struct egress_conn *c, const struct egress_policy *policy);

#endif
