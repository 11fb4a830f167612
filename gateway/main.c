/* airlock-gateway: the public REST/SSE API (and, with --grpc-listen, the
 * public gRPC API). Parses configuration and wires
 * the parts together; everything else lives in the other files of
 * gateway/. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "internal_token.h"
#include "log.h"
#include "nats_credentials.h"
#include "routes.h"
#include "stop_signals.h"
#include "tls_credentials.h"

#define GATEWAY_DEFAULT_DATA_DIR "/var/lib/airlock"
/* libmicrohttpd's threads wait on their sockets with select(), which takes
 * descriptors below FD_SETSIZE (1024) only; the rest is room for the
 * gateway's own files and channels. */
#define GATEWAY_MAX_CONNECTIONS 1000

static void usage(FILE *out)
{
    fprintf(out,
            "usage: airlock-gateway [options]\n"
            "       airlock-gateway --routes     print every route (METHOD PATH) and exit\n"
            "  --listen HOST:PORT     HTTP address (default 127.0.0.1:7070)\n"
            "  --scheduler ADDR       scheduler gRPC address (default unix:DATA_DIR/scheduler.sock)\n"
            "  --nats URL             lifecycle events (env AIRLOCK_NATS_URL, default nats://127.0.0.1:4222)\n"
            "  --vault ADDR           airlock-vault gRPC address (default unix:DATA_DIR/vault.sock)\n"
            "  --data-dir DIR         (env AIRLOCK_DATA_DIR, default %s)\n"
            "  --max-body BYTES       largest JSON request body (default 1048576)\n"
            "  --grpc-listen HOST:PORT  also serve the public gRPC API there (off by default)\n"
            "  --key-cache-ttl-ms MS  keep successful API key checks this long, 0 = off\n"
            "                         (env AIRLOCK_KEY_CACHE_TTL_MS, default %d)\n"
            "  --internal-token-file PATH  presented to scheduler, vault and vmhosts\n"
            "                         (env AIRLOCK_INTERNAL_TOKEN_FILE; unset: none)\n"
            "  --nats-credentials-file PATH  user:password of the gateway's NATS user\n"
            "                         (docs/operations.md \"NATS users\")\n"
            INTERNAL_TLS_USAGE
            "  --max-execs-per-key N  execs one API key may have running through this gateway\n"
            "                         at once (REST and gRPC), 0 = no cap (default %d)\n"
            "  --rate-limit-per-key RPS  requests a second one API key may make through this\n"
            "                         gateway (REST and gRPC; 0.5 too), 0 = none (default %d)\n"
            "  --rate-limit-burst N   requests a key may make at once before the rate holds it\n"
            "                         back (1..%d, default %d)\n"
            "  --max-connections N    HTTP connections at once, each a thread: one more is\n"
            "                         closed at once (1..%d, default %d)\n"
            "  --max-connections-per-ip N  the same from one address, 0 = no cap (default 0)\n"
            "  --tls-cert FILE        serve the public API over TLS only: PEM certificate and\n"
            "  --tls-key FILE         its chain, and its PEM key; both or neither (env\n"
            "                         AIRLOCK_TLS_CERT, AIRLOCK_TLS_KEY); reread on SIGHUP\n"
            "  --public-domain NAME   sandbox ports answer as PORT-ID.NAME (a wildcard DNS\n"
            "                         record; env AIRLOCK_PUBLIC_DOMAIN, default localhost)\n"
            "  --console-dir DIR      the web console's built files, served at /console/ (env\n"
            "                         AIRLOCK_CONSOLE_DIR, default this build's: %s)\n",
            GATEWAY_DEFAULT_DATA_DIR, KEY_CACHE_DEFAULT_TTL_MS, EXEC_SLOTS_DEFAULT_MAX,
            RATE_LIMIT_DEFAULT_PER_KEY_MILLI / 1000, RATE_LIMIT_MAX, RATE_LIMIT_DEFAULT_BURST,
            GATEWAY_MAX_CONNECTIONS, GATEWAY_MAX_CONNECTIONS, AIRLOCK_CONSOLE_BUILD_DIR);
}

static void print_routes(void)
{
    for (size_t i = 0; i < gw_routes_count; i++)
        printf("%s %s\n", gw_routes[i].method, gw_routes[i].pattern);
}

static int parse_listen(const char *s, char *host, size_t hostlen, uint16_t *port)
{
    const char *colon = strrchr(s, ':');
    long p = colon ? strtol(colon + 1, NULL, 10) : 0;
    if (!colon || colon == s || (size_t)(colon - s) >= hostlen || p <= 0 || p > 65535)
        return -1;
    snprintf(host, hostlen, "%.*s", (int)(colon - s), s);
    *port = (uint16_t)p;
    return 0;
}

static int parse_ttl_ms(const char *s, int64_t *ms)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > KEY_CACHE_MAX_TTL_MS)
        return -1;
    *ms = v;
    return 0;
}

/* A count flag: 0 or more. */
static int parse_count(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v > 1000000)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* SIGHUP and every minute: the internal certificate and, when its files
 * changed, the public one (the gRPC API's and REST's). */
static void refresh_certificates(void *arg)
{
    struct gateway *gw = arg;
    char err[512];
    tls_credentials_refresh(gw->cfg.internal_tls);
    if (tls_credentials_refresh(gw->cfg.public_tls) == 1 &&
        gateway_reload_tls(gw, err, sizeof(err)) < 0)
        log_error("TLS certificate not reloaded", "error=\"%s\"", err);
}

int main(int argc, char **argv)
{
    log_init("gateway", getenv("AIRLOCK_DEBUG") ? LOG_DEBUG : LOG_INFO);
    signal(SIGPIPE, SIG_IGN);
    static const struct option opts[] = {
        { "listen", required_argument, NULL, 'l' },
        { "scheduler", required_argument, NULL, 's' },
        { "nats", required_argument, NULL, 'n' },
        { "vault", required_argument, NULL, 'v' },
        { "data-dir", required_argument, NULL, 'd' },
        { "max-body", required_argument, NULL, 'b' },
        { "grpc-listen", required_argument, NULL, 'g' },
        { "key-cache-ttl-ms", required_argument, NULL, 'k' },
        { "internal-token-file", required_argument, NULL, 'T' },
        { "nats-credentials-file", required_argument, NULL, 'C' },
        INTERNAL_TLS_OPTIONS,
        { "max-execs-per-key", required_argument, NULL, 'x' },
        { "rate-limit-per-key", required_argument, NULL, 'R' },
        { "rate-limit-burst", required_argument, NULL, 'B' },
        { "max-connections", required_argument, NULL, 'c' },
        { "max-connections-per-ip", required_argument, NULL, 'p' },
        { "tls-cert", required_argument, NULL, 'e' },
        { "tls-key", required_argument, NULL, 'K' },
        { "public-domain", required_argument, NULL, 'D' },
        { "console-dir", required_argument, NULL, 'W' },
        { "routes", no_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *env_data = getenv("AIRLOCK_DATA_DIR");
    const char *data_dir = env_data && *env_data ? env_data : GATEWAY_DEFAULT_DATA_DIR;
    const char *listen = "127.0.0.1:7070";
    char host[64], scheduler[4200], vault[4200];
    const char *env_nats = getenv("AIRLOCK_NATS_URL");
    const char *env_ttl = getenv("AIRLOCK_KEY_CACHE_TTL_MS");
    const char *key_cache_ttl = env_ttl && *env_ttl ? env_ttl : NULL;
    const char *token_file = NULL, *nats_creds_file = NULL;
    struct tls_files tls_files = { 0 };
    const char *env_tls_cert = getenv("AIRLOCK_TLS_CERT"), *env_tls_key = getenv("AIRLOCK_TLS_KEY");
    const char *env_domain = getenv("AIRLOCK_PUBLIC_DOMAIN");
    const char *env_console = getenv("AIRLOCK_CONSOLE_DIR");
    struct gateway_config cfg = {
        .max_json_body = 1 << 20,
        .nats_url = env_nats && *env_nats ? env_nats : "nats://127.0.0.1:4222",
        .key_cache_ttl_ms = KEY_CACHE_DEFAULT_TTL_MS,
        .max_execs_per_key = EXEC_SLOTS_DEFAULT_MAX,
        .rate_per_key_milli = RATE_LIMIT_DEFAULT_PER_KEY_MILLI,
        .rate_burst = RATE_LIMIT_DEFAULT_BURST,
        .max_connections = GATEWAY_MAX_CONNECTIONS,
        .tls_cert_file = env_tls_cert && *env_tls_cert ? env_tls_cert : NULL,
        .tls_key_file = env_tls_key && *env_tls_key ? env_tls_key : NULL,
        .public_domain = env_domain && *env_domain ? env_domain : "localhost",
        .console_dir = env_console && *env_console ? env_console : AIRLOCK_CONSOLE_BUILD_DIR,
    };
    const char *max_execs = NULL, *max_conns = NULL, *max_conns_ip = NULL;
    const char *rate = NULL, *burst = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (tls_files_option(&tls_files, c, optarg))
            continue;
        switch (c) {
        case 'l': listen = optarg; break;
        case 's': cfg.scheduler = optarg; break;
        case 'n': cfg.nats_url = optarg; break;
        case 'v': cfg.vault = optarg; break;
        case 'd': data_dir = optarg; break;
        case 'b': cfg.max_json_body = strtoul(optarg, NULL, 10); break;
        case 'g': cfg.grpc_listen = optarg; break;
        case 'k': key_cache_ttl = optarg; break;
        case 'T': token_file = optarg; break;
        case 'C': nats_creds_file = optarg; break;
        case 'x': max_execs = optarg; break;
        case 'R': rate = optarg; break;
        case 'B': burst = optarg; break;
        case 'c': max_conns = optarg; break;
        case 'p': max_conns_ip = optarg; break;
        case 'e': cfg.tls_cert_file = optarg; break;
        case 'K': cfg.tls_key_file = optarg; break;
        case 'D': cfg.public_domain = optarg; break;
        case 'W': cfg.console_dir = optarg; break;
        case 'r': print_routes(); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (parse_listen(listen, host, sizeof(host), &cfg.listen_port) < 0 || cfg.max_json_body == 0) {
        fprintf(stderr, "airlock-gateway: --listen must be HOST:PORT and --max-body positive\n");
        return 2;
    }
    if (key_cache_ttl && parse_ttl_ms(key_cache_ttl, &cfg.key_cache_ttl_ms) < 0) {
        fprintf(stderr, "airlock-gateway: --key-cache-ttl-ms (AIRLOCK_KEY_CACHE_TTL_MS) must be "
                        "0..%d milliseconds, not \"%s\"\n", KEY_CACHE_MAX_TTL_MS, key_cache_ttl);
        return 2;
    }
    if (max_execs && parse_count(max_execs, &cfg.max_execs_per_key) < 0) {
        fprintf(stderr, "airlock-gateway: --max-execs-per-key must be a number of 0 or more, "
                        "not \"%s\"\n", max_execs);
        return 2;
    }
    if (rate && rate_limit_parse_rate(rate, &cfg.rate_per_key_milli) < 0) {
        fprintf(stderr, "airlock-gateway: --rate-limit-per-key must be 0..%d requests a second "
                        "(thousandths at the finest), not \"%s\"\n", RATE_LIMIT_MAX, rate);
        return 2;
    }
    if (burst && (parse_count(burst, &cfg.rate_burst) < 0 || cfg.rate_burst == 0 ||
                  cfg.rate_burst > RATE_LIMIT_MAX)) {
        fprintf(stderr, "airlock-gateway: --rate-limit-burst must be 1..%d, not \"%s\"\n",
                RATE_LIMIT_MAX, burst);
        return 2;
    }
    if (max_conns && (parse_count(max_conns, &cfg.max_connections) < 0 ||
                      cfg.max_connections == 0 || cfg.max_connections > GATEWAY_MAX_CONNECTIONS)) {
        fprintf(stderr, "airlock-gateway: --max-connections must be 1..%d, not \"%s\"\n",
                GATEWAY_MAX_CONNECTIONS, max_conns);
        return 2;
    }
    if (max_conns_ip && parse_count(max_conns_ip, &cfg.max_connections_per_ip) < 0) {
        fprintf(stderr, "airlock-gateway: --max-connections-per-ip must be a number of 0 or "
                        "more, not \"%s\"\n", max_conns_ip);
        return 2;
    }
    if (!cfg.tls_cert_file != !cfg.tls_key_file) {
        fprintf(stderr, "airlock-gateway: --tls-cert and --tls-key (AIRLOCK_TLS_CERT, "
                        "AIRLOCK_TLS_KEY) go together: %s is missing\n",
                cfg.tls_cert_file ? "--tls-key" : "--tls-cert");
        return 2;
    }
    cfg.listen_host = host;
    if (!cfg.scheduler) {
        snprintf(scheduler, sizeof(scheduler), "unix:%s/scheduler.sock", data_dir);
        cfg.scheduler = scheduler;
    }
    if (!cfg.vault) {
        snprintf(vault, sizeof(vault), "unix:%s/vault.sock", data_dir);
        cfg.vault = vault;
    }

    char err[512];
    char *internal_token = NULL;
    struct nats_credentials nats_creds;
    if (nats_credentials_configure(nats_creds_file, &nats_creds, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-gateway: %s\n", err);
        return 1;
    }
    cfg.nats_credentials = &nats_creds;
    if (internal_token_configure(token_file, &internal_token, err, sizeof(err)) < 0 ||
        tls_credentials_configure(&tls_files, PEER_GATEWAY, false, &cfg.internal_tls, err,
                                  sizeof(err)) < 0) {
        fprintf(stderr, "airlock-gateway: %s\n", err);
        free(internal_token);
        nats_credentials_free(&nats_creds);
        return 1;
    }
    cfg.internal_token = internal_token;
    nats_credentials_use_tls(&nats_creds, cfg.internal_tls);

    /* The public gRPC API serves the REST listener's certificate. */
    struct tls_files public_files = { .cert = cfg.tls_cert_file, .key = cfg.tls_key_file };
    if (cfg.tls_cert_file &&
        !(cfg.public_tls = tls_credentials_load_public(&public_files, err, sizeof(err)))) {
        fprintf(stderr, "airlock-gateway: %s\n", err);
        tls_credentials_free(cfg.internal_tls);
        free(internal_token);
        nats_credentials_free(&nats_creds);
        return 1;
    }

    /* SIGHUP rereads the TLS files: blocked with the stop signals before
     * any thread starts, and taken by the same wait. */
    sigset_t signals;
    stop_signals_block(&signals);

    struct gateway gw;
    if (gateway_start(&gw, &cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-gateway: %s\n", err);
        tls_credentials_free(cfg.public_tls);
        tls_credentials_free(cfg.internal_tls);
        free(internal_token);
        nats_credentials_free(&nats_creds);
        return 1;
    }
    log_info("gateway listening",
             "addr=%s:%u tls=%s grpc=%s scheduler=%s nats=%s vault=%s key_cache_ttl_ms=%lld "
             "max_execs_per_key=%u rate_limit_per_key=%.10g rate_limit_burst=%u "
             "max_connections=%u max_connections_per_ip=%u console_dir=%s",
             host, cfg.listen_port, cfg.tls_cert_file ? "on" : "off", cfg.grpc_listen ? cfg.grpc_listen : "-", cfg.scheduler,
             cfg.nats_url, cfg.vault, (long long)cfg.key_cache_ttl_ms, cfg.max_execs_per_key,
             cfg.rate_per_key_milli / 1000.0, cfg.rate_burst, cfg.max_connections,
             cfg.max_connections_per_ip, cfg.console_dir);
    int sig = stop_signals_wait(&signals, refresh_certificates, &gw);
    log_info("gateway stopping", "signal=%d", sig);
    gateway_stop(&gw);
    tls_credentials_free(cfg.public_tls);
    tls_credentials_free(cfg.internal_tls);
    free(internal_token);
    nats_credentials_free(&nats_creds);
    return 0;
}
