#include "gateway.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "console_files.h"
#include "e2b_reply.h"
#include "e2b_routes.h"
#include "envd_routes.h"
#include "grpc_api.h"
#include "ingress.h"
#include "key_revocations.h"
#include "log.h"
#include "nats_credentials.h"
#include "random_id.h"
#include "reply.h"
#include "route_handlers.h"
#include "routes.h"
#include "sandbox_access.h"
#include "tls_certs.h"

void gw_request_fail(struct gw_request *r, unsigned status, const char *code, const char *fmt, ...)
{
    if (r->pending_status)
        return; /* the first problem is the one reported */
    r->pending_status = status;
    snprintf(r->pending_code, sizeof(r->pending_code), "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->pending_message, sizeof(r->pending_message), fmt, ap);
    va_end(ap);
}

static void authenticate(struct gw_request *r)
{
    struct key_principal p;
    struct airlock_error e;
    char why[256], e2b_bearer[E2B_BEARER_MAX];
    bool e2b = r->route->auth == GW_AUTH_E2B;
    const char *authorization =
        e2b ? e2b_authorization(r->conn, e2b_bearer, sizeof(e2b_bearer))
            : MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
    if (gw_authenticate(r->gw, authorization,
                        e2b ? E2B_KEY_MISSING : "missing \"Authorization: Bearer <key>\" header",
                        &p, &e) < 0) {
        gw_request_fail_error(r, &e);
    } else if (rate_limit_take(&r->gw->rates, p.key_id, &r->retry_after_s, why, sizeof(why)) < 0) {
        gw_request_fail(r, 429, "rate_limited", "%s", why);
    } else if (r->route->auth == GW_AUTH_ADMIN && !p.admin) {
        gw_request_fail(r, 403, "permission_denied", "this route needs the admin key");
    } else {
        snprintf(r->key_id, sizeof(r->key_id), "%s", p.key_id);
        snprintf(r->project_id, sizeof(r->project_id), "%s", p.project_id);
        r->admin = p.admin;
    }
}

void gw_request_fail_error(struct gw_request *r, const struct airlock_error *e)
{
    const char *code;
    unsigned status = reply_http_status(e->class, &code);
    gw_request_fail(r, status, code, "%s", e->message);
}

/* First call for a request: route, id, authentication, upload start. */
static struct gw_request *request_begin(struct gateway *gw, struct MHD_Connection *conn,
                                        const char *url, const char *method)
{
    struct gw_request *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->gw = gw;
    r->conn = conn;
    r->started_us = clock_monotonic_us();
    random_id("req_", 8, r->id, sizeof(r->id));
    gw_metrics_begin(&gw->metrics);
    if (envd_request_begin(r, method, url))
        return r; /* E2B's in-sandbox API: its own table, auth and errors */
    if (console_request_begin(r, method, url))
        return r; /* the web console's files, before E2B's paths claim it */
    bool path_known;
    struct gw_path_params params = { "", "", "", "" };
    /* E2B's API (e2b_routes.h) has the paths outside /v1/. */
    r->e2b = e2b_path(url);
    r->route = r->e2b ? e2b_route_match(method, url, &params, &path_known)
                      : gw_route_match(method, url, &params, &path_known);
    memcpy(r->path_id, params.id, sizeof(r->path_id));
    memcpy(r->path_pid, params.pid, sizeof(r->path_pid));
    memcpy(r->path_name, params.name, sizeof(r->path_name));
    memcpy(r->path_port, params.port, sizeof(r->path_port));
    if (!r->route) {
        if (path_known)
            gw_request_fail(r, 405, "invalid_argument", "method %s is not allowed on %s", method, url);
        else
            gw_request_fail(r, 404, "not_found", "no route %s %s", method, url);
        return r;
    }
    struct airlock_error id_error;
    if (strstr(r->route->pattern, "{id}") && gw_id_check(r->path_id, &id_error) < 0) {
        gw_request_fail_error(r, &id_error);
        return r;
    }
    if (r->route->auth != GW_AUTH_NONE) {
        int64_t started = clock_monotonic_us();
        authenticate(r);
        r->auth_us = clock_monotonic_us() - started;
    }
    if (!r->pending_status && r->route->upload_begin)
        r->route->upload_begin(r);
    return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    struct gateway *gw = cls;
    struct gw_request *r = *con_cls;
    if (!r) {
        r = request_begin(gw, conn, url, method);
        *con_cls = r;
        return r ? MHD_YES : MHD_NO;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (r->pending_status)
            return MHD_YES; /* already failed: drain the body */
        if (r->route->upload_chunk) {
            r->route->upload_chunk(r, upload_data, n);
        } else if (r->body.len + n > gw->cfg.max_json_body) {
            gw_request_fail(r, 413, "invalid_argument", "request body larger than %zu bytes",
                            gw->cfg.max_json_body);
        } else {
            strbuf_append_n(&r->body, upload_data, n);
        }
        return MHD_YES;
    }
    if (r->pending_status && r->envd_path[0])
        return envd_reply_pending(r);
    if (r->pending_status && r->e2b)
        return e2b_reply_error(r, r->pending_status, "%s", r->pending_message);
    if (r->pending_status)
        return reply_error(r, r->pending_status, r->pending_code, "%s", r->pending_message);
    if (strbuf_failed(&r->body))
        return reply_error(r, 500, "internal", "out of memory reading the body");
    return r->route->handle(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)conn;
    struct gateway *gw = cls;
    struct gw_request *r = *con_cls;
    if (!r)
        return;
    if (r->route && r->route->upload_cleanup)
        r->route->upload_cleanup(r);
    int64_t us = clock_monotonic_us() - r->started_us, ms = us / 1000;
    gw_metrics_end(&gw->metrics, r->route, r->status, ms);
    log_info("http request",
             "request=%s route=\"%s %s\" id=%s project=%s status=%u ms=%lld us=%lld auth_us=%lld%s",
             r->id,
             r->route ? r->route->method : "-", r->route ? r->route->pattern : "-",
             r->path_id[0] ? r->path_id : "-", r->project_id[0] ? r->project_id : "-", r->status,
             (long long)ms, (long long)us, (long long)r->auth_us,
             toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " aborted=true");
    strbuf_free(&r->body);
    free(r);
    *con_cls = NULL;
}

/* A connection the ingress handed over has closed: its place under
 * --max-connections is free again (ingress.h). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)conn;
    (void)socket_context;
    struct gateway *gw = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED && gw->ingress)
        ingress_connection_closed(gw->ingress);
}

static void on_nats_connected(natsConnection *nc, void *closure)
{
    (void)nc;
    (void)closure;
    log_info("nats connected", "after=\"first attempt failed\"");
}

/* Connects in the background if NATS is not up yet (a connected callback
 * is what makes NATS.c's retry asynchronous), and reconnects for ever:
 * events and key revocations are what the gateway needs NATS for. */
static int nats_connect(struct gateway *gw, char *err, size_t errlen)
{
    natsOptions *opts = NULL;
    natsStatus st = natsOptions_Create(&opts);
    if (st == NATS_OK)
        st = natsOptions_SetURL(opts, gw->cfg.nats_url);
    if (st == NATS_OK)
        st = natsOptions_SetName(opts, "airlock-gateway");
    if (st == NATS_OK)
        st = nats_credentials_apply(opts, gw->cfg.nats_credentials);
    if (st == NATS_OK)
        st = natsOptions_SetMaxReconnect(opts, -1);
    if (st == NATS_OK)
        st = natsOptions_SetRetryOnFailedConnect(opts, true, on_nats_connected, NULL);
    if (st == NATS_OK)
        st = key_revocations_options(opts, &gw->keys);
    if (st == NATS_OK)
        st = natsConnection_Connect(&gw->nats, opts);
    natsOptions_Destroy(opts);
    if (st == NATS_NOT_YET_CONNECTED)
        st = NATS_OK;
    if (st == NATS_OK)
        st = key_revocations_subscribe(gw->nats, &gw->keys, &gw->revocations);
    if (st != NATS_OK) {
        nats_connect_error(gw->cfg.nats_credentials, gw->cfg.nats_url, st, NULL, err, errlen);
        return -1;
    }
    return 0;
}

int gateway_start(struct gateway *gw, const struct gateway_config *cfg, char *err, size_t errlen)
{
    memset(gw, 0, sizeof(*gw));
    gw->cfg = *cfg;
    vmhost_pool_init(&gw->vmhosts, cfg->internal_token, cfg->internal_tls);
    live_streams_init(&gw->streams);
    exec_slots_init(&gw->execs, cfg->max_execs_per_key);
    if (gw_metrics_init(&gw->metrics) < 0 ||
        key_cache_init(&gw->keys, KEY_CACHE_DEFAULT_CAPACITY, cfg->key_cache_ttl_ms,
                       clock_monotonic_ms) < 0 ||
        key_cache_register_metrics(&gw->keys, gw->metrics.reg) < 0 ||
        rate_limit_init(&gw->rates, cfg->rate_per_key_milli, cfg->rate_burst,
                        RATE_LIMIT_DEFAULT_KEYS, clock_monotonic_ms) < 0) {
        snprintf(err, errlen, "out of memory for the metrics, key cache and rate limits");
        goto fail;
    }
    struct rpc_channel_auth to_scheduler = { .bearer_token = cfg->internal_token,
                                             .tls = cfg->internal_tls, .server = "scheduler" };
    struct rpc_channel_auth to_vault = { .bearer_token = cfg->internal_token,
                                         .tls = cfg->internal_tls, .server = "vault" };
    gw->scheduler = rpc_channel_open(cfg->scheduler, &to_scheduler);
    if (!gw->scheduler) {
        snprintf(err, errlen, "cannot open a channel to the scheduler at %s", cfg->scheduler);
        goto fail;
    }
    /* Connects lazily: the gateway serves everything else while vault is
     * down (its routes answer 503 meanwhile). */
    gw->vault = rpc_channel_open(cfg->vault, &to_vault);
    if (!gw->vault) {
        snprintf(err, errlen, "cannot open a channel to the vault at %s", cfg->vault);
        goto fail;
    }
    if (nats_connect(gw, err, errlen) < 0)
        goto fail;
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(cfg->listen_port) };
    if (inet_pton(AF_INET, cfg->listen_host, &addr.sin_addr) != 1) {
        snprintf(err, errlen, "listen address %s is not an IPv4 address", cfg->listen_host);
        goto fail;
    }
    /* In plain HTTP the ingress listens and hands the API's connections
     * over (ingress.h); with TLS libmicrohttpd listens itself, and sandbox
     * ports are not served (docs/ports.md). */
    bool own_listener = cfg->tls_cert_file == NULL;
    /* HTTPS only when configured: the certificate comes from
     * tls_certs_retrieve at each handshake, so a reload needs no restart. */
    bool tls = cfg->tls_cert_file != NULL;
    if (tls && tls_certs_load(cfg->tls_cert_file, cfg->tls_key_file, err, errlen) < 0)
        goto fail;
    struct MHD_OptionItem tls_options[] = {
        { tls ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END, 0, (void *)tls_certs_retrieve },
        { MHD_OPTION_END, 0, NULL },
    };
    /* Thread per connection: handlers block on gRPC and stream readers
     * block on the next exec event without holding up other requests. */
    gw->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                                      MHD_USE_ERROR_LOG | (tls ? MHD_USE_TLS : 0) |
                                      (own_listener ? MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC : 0),
                                  own_listener ? 0 : cfg->listen_port, NULL, NULL, on_request, gw,
                                  MHD_OPTION_ARRAY, tls_options,
                                  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                  MHD_OPTION_NOTIFY_COMPLETED, on_completed, gw,
                                  MHD_OPTION_NOTIFY_CONNECTION, on_connection, gw,
                                  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)600,
                                  MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections,
                                  MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_connections_per_ip,
                                  MHD_OPTION_END);
    if (!gw->daemon) {
        snprintf(err, errlen, "cannot listen on %s:%u", cfg->listen_host, cfg->listen_port);
        goto fail;
    }
    if (own_listener && !(gw->ingress = ingress_start(gw, err, errlen))) {
        MHD_stop_daemon(gw->daemon);
        goto fail;
    }
    if (cfg->grpc_listen && grpc_api_start(gw, cfg->grpc_listen, err, errlen) < 0) {
        ingress_stop(gw->ingress);
        MHD_stop_daemon(gw->daemon);
        ingress_free(gw->ingress);
        goto fail;
    }
    return 0;
fail:
    tls_certs_free();
    natsSubscription_Destroy(gw->revocations);
    natsConnection_Destroy(gw->nats);
    if (gw->vault)
        rpc_channel_close(gw->vault);
    if (gw->scheduler)
        rpc_channel_close(gw->scheduler);
    vmhost_pool_destroy(&gw->vmhosts);
    live_streams_destroy(&gw->streams);
    exec_slots_destroy(&gw->execs);
    rate_limit_destroy(&gw->rates);
    gw_metrics_destroy(&gw->metrics);
    key_cache_destroy(&gw->keys);
    return -1;
}

/* How long a stop waits for open streams to send their last event. */
#define GW_STOP_STREAMS_MS 5000

void gateway_stop(struct gateway *gw)
{
    atomic_store(&gw->stopping, true);
    /* Streams first: each ends with an error event while its connection
     * is still open. */
    live_streams_stop(&gw->streams, GW_STOP_STREAMS_MS);
    ingress_stop(gw->ingress); /* no new connection; relays to sandbox ports end */
    grpc_api_stop(gw);
    MHD_stop_daemon(gw->daemon);
    ingress_free(gw->ingress); /* the daemon's last connections have told it they closed */
    tls_certs_free(); /* after the listener: no handshake is left to use them */
    natsConnection_Close(gw->nats);
    natsSubscription_Destroy(gw->revocations);
    natsConnection_Destroy(gw->nats);
    rpc_channel_close(gw->scheduler);
    rpc_channel_close(gw->vault);
    vmhost_pool_destroy(&gw->vmhosts);
    live_streams_destroy(&gw->streams);
    exec_slots_destroy(&gw->execs); /* the daemon and the gRPC API gave every slot back */
    rate_limit_destroy(&gw->rates);
    gw_metrics_destroy(&gw->metrics);
    /* Frees NATS.c's global threads and pools for leak checkers. */
    nats_CloseAndWait(1000);
    key_cache_destroy(&gw->keys); /* after NATS.c's threads: its callbacks use it */
}

int gateway_reload_tls(struct gateway *gw, char *err, size_t errlen)
{
    if (!gw->cfg.tls_cert_file)
        return 0;
    return tls_certs_load(gw->cfg.tls_cert_file, gw->cfg.tls_key_file, err, errlen);
}
