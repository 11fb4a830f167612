/* airlock-egress: the per-node egress service. Parses configuration and
 * wires the parts together; everything else lives in egress/. */
#include <arpa/inet.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "egress.h"
#include "egress_metrics.h"
#include "internal_token.h"
#include "log.h"
#include "metrics_http.h"
#include "egress_service.h"
#include "stop_signals.h"
#include "tls_credentials.h"

#define EGRESS_DEFAULT_LISTEN "unix:/var/lib/airlock/egress.sock"
#define EGRESS_MAX_PROTECTED_CIDRS 64

static void usage(FILE *out)
{
    fprintf(out,
            "usage: airlock-egress --upstream-dns IP[:PORT] [options]\n"
            "options:\n"
            "  --listen ADDR         gRPC address (default %s)\n"
            "  --upstream-dns IP[:P] resolver egress asks for allowed names\n"
            "  --uplink-netns PATH   dial out from this network namespace instead of\n"
            "                        egress's own (tests; production leaves it unset)\n"
            "  --vault ADDR          inject credentials from this vault into requests\n"
            "                        to hosts they are bound to (TLS interception)\n"
            "  --upstream-ca FILE    CA bundle for upstream certificates when\n"
            "                        intercepting (default: the system's)\n"
            "  --state-dir DIR       keep sandbox CAs here (0600) across restarts\n"
            "                        (required with --vault)\n"
            "  --internal-token-file PATH  callers must present this token, vault is called\n"
            "                        with it (env AIRLOCK_INTERNAL_TOKEN_FILE; unset: none)\n"
            "  --protect-cidr CIDR   a range no sandbox policy can open (repeatable; the\n"
            "                        cluster's pod, service and node networks). Always\n"
            "                        protected: this node's addresses, 0/8, 127/8,\n"
            "                        169.254/16\n"
            "  --max-connections N   connections one sandbox may hold open (default 256)\n"
            "  --max-pending N       of them still being decided (default 32)\n"
            "  --idle-timeout-s N    a connection silent both ways this long ends (600)\n"
            "  --conn-threads N      event-loop threads the connections are spliced on\n"
            "                        (default: one per CPU, at most 8)\n" INTERNAL_TLS_USAGE
            METRICS_LISTEN_USAGE,
            EGRESS_DEFAULT_LISTEN);
}

static int parse_resolver(const char *s, struct egress_config *cfg)
{
    char host[64];
    const char *colon = strchr(s, ':');
    size_t hl = colon ? (size_t)(colon - s) : strlen(s);
    if (hl >= sizeof(host))
        return -1;
    memcpy(host, s, hl);
    host[hl] = '\0';
    struct in_addr in;
    if (inet_pton(AF_INET, host, &in) != 1)
        return -1;
    cfg->upstream_dns_addr = ntohl(in.s_addr);
    if (colon) {
        char *end;
        unsigned long port = strtoul(colon + 1, &end, 10);
        if (*end || port == 0 || port > 65535)
            return -1;
        cfg->upstream_dns_port = (uint16_t)port;
    }
    return 0;
}

/* A count from 1 to 1000000 for --flag; -1 after saying why. */
static int parse_count(const char *flag, const char *arg, unsigned *out)
{
    char *end;
    unsigned long v = strtoul(arg, &end, 10);
    if (*arg < '0' || *arg > '9' || *end || v == 0 || v > 1000000) {
        fprintf(stderr, "airlock-egress: --%s: %s: not a number from 1 to 1000000\n", flag, arg);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "listen", required_argument, NULL, 'l' },
        { "upstream-dns", required_argument, NULL, 'u' },
        { "uplink-netns", required_argument, NULL, 'n' },
        { "vault", required_argument, NULL, 'v' },
        { "upstream-ca", required_argument, NULL, 'c' },
        { "state-dir", required_argument, NULL, 's' },
        { "internal-token-file", required_argument, NULL, 'T' },
        INTERNAL_TLS_OPTIONS,
        { "protect-cidr", required_argument, NULL, 'p' },
        { "max-connections", required_argument, NULL, 'C' },
        { "max-pending", required_argument, NULL, 'P' },
        { "idle-timeout-s", required_argument, NULL, 'I' },
        { "conn-threads", required_argument, NULL, 'L' },
        { METRICS_LISTEN_FLAG, required_argument, NULL, 'M' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct egress_config cfg = { 0 };
    const char *listen = EGRESS_DEFAULT_LISTEN, *token_file = NULL, *metrics_listen = NULL;
    bool have_resolver = false;
    struct cidr protected_cidrs[EGRESS_MAX_PROTECTED_CIDRS];
    cfg.protected_cidrs = protected_cidrs;
    struct tls_files tls_files = { 0 };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (tls_files_option(&tls_files, c, optarg))
            continue;
        switch (c) {
        case 'l': listen = optarg; break;
        case 'u':
            if (parse_resolver(optarg, &cfg) < 0) {
                fprintf(stderr, "airlock-egress: --upstream-dns: not IPv4[:port]: %s\n", optarg);
                return 2;
            }
            have_resolver = true;
            break;
        case 'n': cfg.uplink_netns = optarg; break;
        case 'v': cfg.vault_addr = optarg; break;
        case 'c': cfg.upstream_ca_file = optarg; break;
        case 's': cfg.state_dir = optarg; break;
        case 'T': token_file = optarg; break;
        case 'p':
            if (cfg.n_protected_cidrs == EGRESS_MAX_PROTECTED_CIDRS) {
                fprintf(stderr,
                        "airlock-egress: --protect-cidr: %s: too many ranges (at most %d)\n",
                        optarg, EGRESS_MAX_PROTECTED_CIDRS);
                return 2;
            }
            if (cidr_parse(optarg, &protected_cidrs[cfg.n_protected_cidrs]) < 0) {
                fprintf(stderr,
                        "airlock-egress: --protect-cidr: %s: not a.b.c.d/len without host bits\n",
                        optarg);
                return 2;
            }
            cfg.n_protected_cidrs++;
            break;
        case 'C':
            if (parse_count("max-connections", optarg, &cfg.max_conns_per_sandbox) < 0)
                return 2;
            break;
        case 'P':
            if (parse_count("max-pending", optarg, &cfg.max_pending_per_sandbox) < 0)
                return 2;
            break;
        case 'I': {
            unsigned idle_s;
            if (parse_count("idle-timeout-s", optarg, &idle_s) < 0)
                return 2;
            cfg.idle_timeout_ms = (int)idle_s * 1000;
            break;
        }
        case 'L':
            if (parse_count("conn-threads", optarg, &cfg.conn_threads) < 0)
                return 2;
            if (cfg.conn_threads > 64) {
                fprintf(stderr, "airlock-egress: --conn-threads: %s: at most 64\n", optarg);
                return 2;
            }
            break;
        case 'M': metrics_listen = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!have_resolver || optind != argc) {
        usage(stderr);
        return 2;
    }
    /* Guests trust their sandbox CA from their session init on: a
     * restarted egress that made new ones would break every running
     * guest's injection until its next session. */
    if (cfg.vault_addr && !cfg.state_dir) {
        fprintf(stderr, "airlock-egress: --vault needs --state-dir DIR: the sandbox CAs running "
                        "guests trust must survive a restart of egress\n");
        return 2;
    }
    char err[1024];
    metrics_listen = metrics_listen_addr(metrics_listen);
    if (metrics_listen && metrics_listen_check(metrics_listen, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-egress: %s\n", err);
        return 2;
    }
    log_init("egress", getenv("AIRLOCK_DEBUG") ? LOG_DEBUG : LOG_INFO);
    /* Every connection holds descriptors: take all the kernel allows us
     * (the per-sandbox caps keep one sandbox from using them all). */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    signal(SIGPIPE, SIG_IGN);
    sigset_t stop_signals;
    stop_signals_block(&stop_signals);

    char *internal_token = NULL;
    struct tls_credentials *tls = NULL;
    if (internal_token_configure(token_file, &internal_token, err, sizeof(err)) < 0 ||
        tls_credentials_configure(&tls_files, PEER_EGRESS, false, &tls, err, sizeof(err)) < 0) {
        log_error("egress start failed", "error=\"%s\"", err);
        free(internal_token);
        return 1;
    }
    cfg.internal_token = internal_token;
    cfg.internal_tls = tls;
    cfg.metrics = egress_metrics_new();
    struct metrics_server *metrics = NULL;
    struct egress *eg = NULL;
    struct rpc_server *srv = NULL;
    int rc = 1;
    if (metrics_listen && !(metrics = metrics_server_start(cfg.metrics ? cfg.metrics->reg : NULL,
                                                           metrics_listen, err, sizeof(err)))) {
        log_error("egress start failed", "error=\"%s\"", err);
        goto out;
    }
    if (!(eg = egress_new(&cfg, err, sizeof(err)))) {
        log_error("egress start failed", "error=\"%s\"", err);
        goto out;
    }
    struct rpc_security sec = { .bearer_token = internal_token, .tls = tls,
                                .calls = cfg.metrics ? cfg.metrics->calls : NULL };
    if (!(srv = egress_service_start(eg, listen, &sec, err, sizeof(err)))) {
        log_error("egress listen failed", "addr=%s error=\"%s\"", listen, err);
        goto out;
    }
    log_info("egress ready", "addr=%s uplink_netns=%s vault=%s protected_cidrs=%zu metrics=%s",
             listen, cfg.uplink_netns ? cfg.uplink_netns : "-",
             cfg.vault_addr ? cfg.vault_addr : "-", cfg.n_protected_cidrs,
             metrics_listen ? metrics_listen : "-");
    int sig = stop_signals_wait(&stop_signals, tls_credentials_refresh_cb, tls);
    log_info("egress stopping", "signal=%d", sig);
    rc = 0;
out:
    rpc_server_stop(srv);
    if (eg)
        egress_free(eg);
    metrics_server_stop(metrics);
    egress_metrics_free(cfg.metrics);
    tls_credentials_free(tls);
    free(internal_token);
    return rc;
}
