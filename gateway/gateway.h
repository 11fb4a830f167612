/* The public REST/SSE gateway: libmicrohttpd (one thread per connection, so
 * handlers and streaming readers are plain blocking code) in front of the
 * scheduler's gRPC API for control, and of each sandbox's vmhost gRPC API
 * for bulk bytes (exec output, files), whose address the scheduler reports.
 * Lifecycle events come from NATS (handlers_events.c). Stateless but for
 * a short cache of authenticated keys that revocations reach through
 * NATS: any number of replicas. */
#ifndef AIRLOCK_GATEWAY_H
#define AIRLOCK_GATEWAY_H

#include <microhttpd.h>
#include <nats/nats.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"
#include "exec_slots.h"
#include "key_cache.h"
#include "live_streams.h"
#include "metrics.h"
#include "nats_credentials.h"
#include "rate_limit.h"
#include "rpc_client.h"
#include "strbuf.h"
#include "vmhost_pool.h"

struct tls_credentials;
struct ingress;

struct gateway_config {
    const char *listen_host;   /* 127.0.0.1 */
    uint16_t listen_port;      /* 7070 */
    const char *scheduler;     /* gRPC address of the scheduler */
    const char *nats_url;      /* lifecycle events (airlock.events.<project>) */
    const struct nats_credentials *nats_credentials; /* the gateway's NATS user */
    const char *vault;         /* gRPC address of airlock-vault (secrets, audit) */
    size_t max_json_body;      /* bytes; larger JSON bodies get 413 */
    const char *grpc_listen;   /* the public gRPC API (grpc_api.h); NULL: not served */
    int64_t key_cache_ttl_ms;  /* successful authentications kept this long; 0: off */
    unsigned max_execs_per_key; /* execs in flight per API key (exec_slots.h); 0: no cap */
    /* Requests a second per API key, in thousandths, and the burst
     * (rate_limit.h); rate 0: no limit. */
    unsigned rate_per_key_milli, rate_burst;
    /* HTTP connections at once (each holds a thread), and from one
     * address (0: no cap); libmicrohttpd closes one past either at once. */
    unsigned max_connections, max_connections_per_ip;
    const char *internal_token; /* presented to scheduler, vault and vmhosts; NULL: none
                                   (internal_token.h); the public APIs never want it */
    /* Mutual TLS with scheduler, vault and vmhosts (tls_credentials.h):
     * the gateway's identity. NULL: plaintext. */
    struct tls_credentials *internal_tls;
    /* PEM certificate (with its chain) and key of the public APIs' TLS;
     * NULL: plain HTTP and gRPC. REST serves them (tls_certs.h), reread
     * on gateway_reload_tls; the gRPC API from public_tls. */
    const char *tls_cert_file, *tls_key_file;
    struct tls_credentials *public_tls;
    /* Sandbox ports are served as <port>-<sandbox id>.<public_domain>
     * (a wildcard DNS record points there; "localhost" by default, which
     * browsers resolve to this machine). Also what E2B's SDK is told. */
    const char *public_domain;
    /* The web console's built files (console_files.h); NULL or without an
     * index.html: /console/ answers 404 saying how to serve it. */
    const char *console_dir;
};

struct gateway {
    struct gateway_config cfg;
    struct rpc_channel *scheduler;
    struct rpc_channel *vault;    /* /v1/secrets and /v1/audit (handlers_secrets.c) */
    struct vmhost_pool vmhosts;
    struct gw_metrics metrics;
    natsConnection *nats;         /* reconnects by itself; /v1/events is 503 while down */
    struct key_cache keys;        /* recent authentications (key_cache.h) */
    struct exec_slots execs;      /* each key's execs in flight (exec_slots.h) */
    struct rate_limit rates;      /* each key's requests a second (rate_limit.h) */
    natsSubscription *revocations; /* keeps keys in step (key_revocations.h) */
    atomic_bool stopping;         /* ends open /v1/events streams */
    struct live_streams streams;  /* SSE responses in flight, ended first at stop */
    struct MHD_Daemon *daemon;
    /* The listener in front of daemon that routes sandbox ports
     * (ingress.h); NULL with TLS, where daemon listens itself. */
    struct ingress *ingress;
    struct grpc_api *grpc;        /* NULL when not served */
};

struct gw_route;

/* One HTTP request, from its headers to the completion callback. */
struct gw_request {
    struct gateway *gw;
    struct MHD_Connection *conn;
    const struct gw_route *route;
    char id[40];                  /* req_…: logs, X-Request-Id, scheduler calls */
    char path_id[160];            /* the {id} segment of the route, if any */
    char path_pid[32];            /* the {pid} segment (processes), if any */
    char path_name[160];          /* the {name} segment (checkpoints, secrets), if any */
    char path_port[16];           /* the {port} segment (sandbox ports), if any */
    char envd_path[64];           /* envd's API (envd_routes.h): the path; "" otherwise */
    char console_file[256];       /* the console's (console_files.h): the path after /console */
    int64_t started_us;
    int64_t auth_us;              /* the scheduler's Authenticate (part of the request's ms) */

    /* Who is calling (after authentication). */
    char key_id[64];
    char project_id[64];
    bool admin;

    struct strbuf body;           /* JSON routes: the request body */
    bool body_too_large;

    /* An error found before the body was read (auth, bad id): answered
     * once the upload is over. */
    unsigned pending_status;
    char pending_code[32];
    char pending_message[1024];
    unsigned retry_after_s;       /* rate limited: sent as Retry-After */
    bool e2b;                     /* E2B's API (e2b_routes.h): its error shape */

    void *upload;                 /* streaming-upload routes: their state */
    unsigned status;              /* what was answered, for logs/metrics */
};

int gateway_start(struct gateway *gw, const struct gateway_config *cfg, char *err, size_t errlen);
void gateway_stop(struct gateway *gw);
/* Rereads the TLS certificate and key files (SIGHUP): new connections get
 * them, open ones keep theirs. 0, or -1 with err (the old ones stay). */
int gateway_reload_tls(struct gateway *gw, char *err, size_t errlen);

/* Remembers an error to answer at the end of the request. */
void gw_request_fail(struct gw_request *r, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same for e, its HTTP status and code as reply_airlock_error's. */
void gw_request_fail_error(struct gw_request *r, const struct airlock_error *e);

#endif
