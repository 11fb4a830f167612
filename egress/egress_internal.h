/* Shared by egress's own files only. */
#ifndef AIRLOCK_EGRESS_INTERNAL_H
#define AIRLOCK_EGRESS_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

#include "conn_log.h"
#include "egress.h"
#include "intercept.h"
#include "pins.h"
#include "policy.h"

#define EGRESS_PINS_PER_SANDBOX 4096
#define EGRESS_LOG_PER_SANDBOX 4096

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

/* A reference to the sandbox's current policy. */
struct egress_policy *egress_sandbox_policy(struct egress_sandbox *sb);

/* Why no sandbox may reach addr whatever its policy says: "host_address"
 * (an address of egress's uplink namespace: the node itself),
 * "protected_range" (addr_is_never_reachable, or a range the operator
 * protects: egress_config.protected_cidrs); NULL when a policy decides. */
const char *egress_address_protection(const struct egress *eg, uint32_t addr);

/* The reply to one guest DNS message (0 = send nothing). Blocks on the
 * upstream resolver for at most dns_timeout_ms. */
size_t egress_dns_answer(struct egress_sandbox *sb, const uint8_t *query, size_t len,
                         uint8_t *out, size_t outlen);

/* Takes over client_fd: registered in sb->conns, it is decided, dialled
 * and spliced on the connection loop (egress_tcp.c). */
void egress_tcp_accept(struct egress_sandbox *sb, int client_fd);

/* Creates the socket (recorded in c->upstream_fd, where a detach can shut
 * it down) and starts connecting from the calling thread's namespace: 0
 * connected, 1 in progress (egress_dial_result once writable), -1 failed
 * or the sandbox is being detached. */
int egress_dial_begin(struct egress_conn *c, uint32_t addr, uint16_t port);
/* 0 when the connect of fd succeeded. */
int egress_dial_result(int fd);

/* Dials addr:port from the calling thread's namespace (the uplink one)
 * into c->upstream_fd (non-blocking socket), blocking for at most
 * timeout_ms: for intercepted connections, on their own thread. -1 when
 * it failed or the sandbox is being detached. */
int egress_dial(struct egress_conn *c, uint32_t addr, uint16_t port, int timeout_ms);

/* Makes the close of fd a reset (SO_LINGER 0). */
void egress_reset(int fd);

/* Whether policy still allows the allowed connection c, as it was decided
 * (its name pinned or not as when it opened). Caller holds c->sb->lock. */
bool egress_conn_still_allowed(const struct egress_conn *c, const struct egress_policy *policy);

/* Decides every allowed connection again under policy (a policy change):
 * those it no longer allows are shut down. Returns how many. */
unsigned egress_sandbox_recheck(struct egress_sandbox *sb, const struct egress_policy *policy);

/* Stops the loop, closes the listeners, ends every connection, frees. */
void egress_sandbox_stop(struct egress_sandbox *sb);

/* Opens the listeners inside netns_path and starts the loop thread. Takes
 * over policy and ca (NULL without credential injection), also on
 * failure. */
struct egress_sandbox *egress_sandbox_start(struct egress *eg, const char *id,
                                            const char *netns_path, struct egress_policy *policy,
                                            struct sandbox_ca *ca, const char *project_id,
                                            char *err, size_t errlen);

#endif
