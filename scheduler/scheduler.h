/* The scheduler's shared state: the database, the NATS connection that
 * carries heartbeats and node work, and its configuration. */
#ifndef AIRLOCK_SCHEDULER_H
#define AIRLOCK_SCHEDULER_H

#include <nats/nats.h>
#include <stddef.h>

#include "db.h"
#include "nats_credentials.h"
#include "node_heartbeats.h"
#include "node_liveness.h"
#include "quota.h"
#include "scheduler_metrics.h"

struct tls_credentials;

struct scheduler_config {
    const char *data_dir;      /* admin-key is written here at first start */
    const char *listen;        /* gRPC address */
    const char *metrics_listen; /* Prometheus /metrics; NULL: not served */
    const char *database_url;  /* libpq connection string */
    const char *nats_url;
    const struct nats_credentials *nats_credentials; /* the scheduler's NATS user */
    const char *internal_token; /* gRPC callers present it; NULL: none */
    struct tls_credentials *internal_tls; /* mutual TLS (tls_credentials.h); NULL: none */
    int node_timeout_ms;       /* one NATS request to a node (a create boots a VM) */
    int node_dead_after_s;     /* a node without heartbeat this long gets no work */
    /* Controllers (controller.h). */
    int idle_timeout_s;        /* for sandboxes created without one; 0 = never suspend */
    int ttl_s;                 /* for sandboxes created without one; 0 = no TTL */
    int controller_interval_ms; /* between two passes of the controllers */
    int reconcile_interval_s;  /* every node is compared this often, besides after restarts */
    int reconcile_grace_s;     /* a VM no row knows is deleted once this old (a fork's VM
                                  exists a moment before its row) */
    /* A project's quotas where it has none of its own (--quota-*;
     * QUOTA_UNLIMITED: none). */
    struct quota_values quota_defaults;
};

struct scheduler {
    struct scheduler_config cfg;
    struct db db;
    natsConnection *nc;
    natsSubscription *heartbeats;
    struct node_heartbeats heard;  /* node_heard.h */
    struct node_heartbeats pools;  /* node_pools.h */
    struct node_liveness liveness; /* the nodes heard, for requests waiting on them */
    struct scheduler_metrics metrics; /* set up by main after scheduler_init */
};

/* Connects to PostgreSQL (migrating and bootstrapping the admin key) and
 * NATS, and starts following node heartbeats. */
int scheduler_init(struct scheduler *s, const struct scheduler_config *cfg, char *err,
                   size_t errlen);
void scheduler_shutdown(struct scheduler *s);

#endif
