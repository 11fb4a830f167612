/* airlock-scheduler: the control plane. Parses configuration and wires the
 * parts together; everything else lives in the other files of scheduler/. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "internal_token.h"
#include "log.h"
#include "metrics_http.h"
#include "nats_credentials.h"
#include "scheduler.h"
#include "scheduler_service.h"
#include "stop_signals.h"
#include "tls_credentials.h"

#define SCHEDULER_DEFAULT_DATA_DIR "/var/lib/airlock"

/* --quota-<kind>, from common/quota's names ("memory_mb": --quota-memory-mb). */
#define QUOTA_FLAG_SIZE 48
#define QUOTA_OPTION 1000 /* getopt's value for kind k: QUOTA_OPTION + k */
static char quota_flags[QUOTA_KIND_COUNT][QUOTA_FLAG_SIZE];

static void quota_flags_make(void)
{
    for (int k = 0; k < QUOTA_KIND_COUNT; k++) {
        snprintf(quota_flags[k], sizeof(quota_flags[k]), "quota-%s",
                 quota_name((enum quota_kind)k));
        for (char *c = quota_flags[k]; *c; c++)
            if (*c == '_')
                *c = '-';
    }
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: airlock-scheduler [options]\n"
            "  --data-dir DIR        admin-key is written here (env AIRLOCK_DATA_DIR, default %s)\n"
            "  --listen ADDR         gRPC address (default unix:DATA_DIR/scheduler.sock)\n"
            "  --database URL        PostgreSQL connection string (env AIRLOCK_DATABASE_URL)\n"
            "  --nats URL            NATS server (env AIRLOCK_NATS_URL, default nats://127.0.0.1:4222)\n"
            "  --node-timeout MS     one request to a node, e.g. a VM boot (default 120000)\n"
            "  --node-dead-after S   a node silent this long gets no work (default 10)\n"
            "  --idle-timeout-s S    suspend a sandbox idle this long, unless its create set\n"
            "                        idle_timeout_s (default 21600; 0 = never)\n"
            "  --ttl-s S             delete a sandbox this long after creation, unless its\n"
            "                        create set ttl_s (default 0 = never)\n"
            "  --controller-interval-ms MS  between controller passes (default 2000)\n"
            "  --reconcile-interval-s S     compare every node with the database this often\n"
            "                        (default 60; also after a restart of either)\n"
            "  --reconcile-grace-s S  delete a VM the database does not know once this old\n"
            "                        (default 60)\n"
            "  --internal-token-file PATH  callers of the gRPC API must present this token\n"
            "                        (env AIRLOCK_INTERNAL_TOKEN_FILE)\n"
            "  --nats-credentials-file PATH  user:password of the scheduler's NATS user\n"
            "                        (docs/operations.md \"NATS users\")\n"
            INTERNAL_TLS_USAGE
            METRICS_LISTEN_USAGE
            "  --quota-KIND N        a project's quota where the admin set none of its own\n"
            "                        (-1 = unlimited; docs/api.md \"Quotas\"):\n",
            SCHEDULER_DEFAULT_DATA_DIR);
    for (int k = 0; k < QUOTA_KIND_COUNT; k++) {
        char flag[QUOTA_FLAG_SIZE + 4];
        snprintf(flag, sizeof(flag), "--%s N", quota_flags[k]);
        fprintf(out, "    %-28s default %lld\n", flag,
                (long long)quota_builtin_default((enum quota_kind)k));
    }
}

/* A flag's value that is a whole integer; false otherwise. */
static bool parse_int64(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end)
        return false;
    *out = v;
    return true;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

static int parse_args(int argc, char **argv, struct scheduler_config *cfg, char *listen,
                      size_t listen_len, const char **token_file, const char **nats_creds_file,
                      struct tls_files *tls_files)
{
    static const struct option fixed[] = {
        { "data-dir", required_argument, NULL, 'd' },
        { "listen", required_argument, NULL, 'l' },
        { "database", required_argument, NULL, 'D' },
        { "nats", required_argument, NULL, 'n' },
        { "node-timeout", required_argument, NULL, 't' },
        { "node-dead-after", required_argument, NULL, 'a' },
        { "idle-timeout-s", required_argument, NULL, 'i' },
        { "ttl-s", required_argument, NULL, 'T' },
        { "controller-interval-ms", required_argument, NULL, 'c' },
        { "reconcile-interval-s", required_argument, NULL, 'r' },
        { "reconcile-grace-s", required_argument, NULL, 'g' },
        { "internal-token-file", required_argument, NULL, 'k' },
        { "nats-credentials-file", required_argument, NULL, 'C' },
        INTERNAL_TLS_OPTIONS,
        { METRICS_LISTEN_FLAG, required_argument, NULL, 'M' },
        { "help", no_argument, NULL, 'h' },
    };
    enum { N_FIXED = sizeof(fixed) / sizeof(*fixed) };
    struct option opts[N_FIXED + QUOTA_KIND_COUNT + 1];
    memcpy(opts, fixed, sizeof(fixed));
    for (int k = 0; k < QUOTA_KIND_COUNT; k++) {
        opts[N_FIXED + k] =
            (struct option){ quota_flags[k], required_argument, NULL, QUOTA_OPTION + k };
        cfg->quota_defaults.v[k] = quota_builtin_default((enum quota_kind)k);
    }
    opts[N_FIXED + QUOTA_KIND_COUNT] = (struct option){ NULL, 0, NULL, 0 };
    cfg->data_dir = env_or("AIRLOCK_DATA_DIR", SCHEDULER_DEFAULT_DATA_DIR);
    cfg->database_url = env_or("AIRLOCK_DATABASE_URL", NULL);
    cfg->nats_url = env_or("AIRLOCK_NATS_URL", "nats://127.0.0.1:4222");
    cfg->node_timeout_ms = 120000;
    cfg->node_dead_after_s = 10;
    cfg->idle_timeout_s = 21600;
    cfg->ttl_s = 0;
    cfg->controller_interval_ms = 2000;
    cfg->reconcile_interval_s = 60;
    cfg->reconcile_grace_s = 60;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (tls_files_option(tls_files, c, optarg))
            continue;
        switch (c) {
        case 'd': cfg->data_dir = optarg; break;
        case 'l': cfg->listen = optarg; break;
        case 'D': cfg->database_url = optarg; break;
        case 'n': cfg->nats_url = optarg; break;
        case 't': cfg->node_timeout_ms = atoi(optarg); break;
        case 'a': cfg->node_dead_after_s = atoi(optarg); break;
        case 'i': cfg->idle_timeout_s = atoi(optarg); break;
        case 'T': cfg->ttl_s = atoi(optarg); break;
        case 'c': cfg->controller_interval_ms = atoi(optarg); break;
        case 'r': cfg->reconcile_interval_s = atoi(optarg); break;
        case 'g': cfg->reconcile_grace_s = atoi(optarg); break;
        case 'k': *token_file = optarg; break;
        case 'C': *nats_creds_file = optarg; break;
        case 'M': cfg->metrics_listen = optarg; break;
        case 'h': usage(stdout); exit(0);
        default:
            if (c >= QUOTA_OPTION && c < QUOTA_OPTION + QUOTA_KIND_COUNT) {
                int k = c - QUOTA_OPTION;
                int64_t *v = &cfg->quota_defaults.v[k];
                if (!parse_int64(optarg, v) || !quota_default_valid(*v)) {
                    fprintf(stderr, "airlock-scheduler: --%s: \"%s\" is not -1 (unlimited) or a "
                                    "number of 0 or more\n", quota_flags[k], optarg);
                    return -1;
                }
                break;
            }
            usage(stderr);
            return -1;
        }
    }
    if (!cfg->database_url) {
        fprintf(stderr, "airlock-scheduler: --database or AIRLOCK_DATABASE_URL is required\n");
        return -1;
    }
    if (cfg->node_timeout_ms <= 0 || cfg->node_dead_after_s <= 0) {
        fprintf(stderr, "airlock-scheduler: --node-timeout and --node-dead-after must be positive\n");
        return -1;
    }
    if (cfg->idle_timeout_s < 0 || cfg->ttl_s < 0 || cfg->controller_interval_ms <= 0 ||
        cfg->reconcile_interval_s <= 0 || cfg->reconcile_grace_s < 0) {
        fprintf(stderr, "airlock-scheduler: --idle-timeout-s, --ttl-s and --reconcile-grace-s"
                        " must be 0 or more, --controller-interval-ms and"
                        " --reconcile-interval-s positive\n");
        return -1;
    }
    char err[256];
    cfg->metrics_listen = metrics_listen_addr(cfg->metrics_listen);
    if (cfg->metrics_listen && metrics_listen_check(cfg->metrics_listen, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-scheduler: %s\n", err);
        return -1;
    }
    if (!cfg->listen) {
        snprintf(listen, listen_len, "unix:%s/scheduler.sock", cfg->data_dir);
        cfg->listen = listen;
    }
    return 0;
}

int main(int argc, char **argv)
{
    log_init("scheduler", getenv("AIRLOCK_DEBUG") ? LOG_DEBUG : LOG_INFO);
    signal(SIGPIPE, SIG_IGN);
    quota_flags_make();
    struct scheduler_config cfg = { 0 };
    char listen[4200];
    const char *token_file = NULL, *nats_creds_file = NULL;
    struct tls_files tls_files = { 0 };
    if (parse_args(argc, argv, &cfg, listen, sizeof(listen), &token_file, &nats_creds_file,
                   &tls_files) < 0)
        return 2;
    char err[4096];
    char *internal_token = NULL;
    struct tls_credentials *tls = NULL;
    struct nats_credentials nats_creds = { 0 };
    struct rpc_server *srv = NULL;
    struct controller *ctl = NULL;
    struct metrics_server *metrics = NULL;
    struct scheduler s;
    bool inited = false;
    int rc = 1;
    if (nats_credentials_configure(nats_creds_file, &nats_creds, err, sizeof(err)) < 0 ||
        internal_token_configure(token_file, &internal_token, err, sizeof(err)) < 0 ||
        tls_credentials_configure(&tls_files, PEER_SCHEDULER, false, &tls, err, sizeof(err)) < 0)
        goto fail;
    cfg.nats_credentials = &nats_creds;
    cfg.internal_token = internal_token;
    cfg.internal_tls = tls;
    nats_credentials_use_tls(&nats_creds, tls);

    sigset_t stop_signals;
    stop_signals_block(&stop_signals);

    if (scheduler_init(&s, &cfg, err, sizeof(err)) < 0)
        goto fail;
    inited = true;
    if (scheduler_metrics_init(&s.metrics) < 0) {
        snprintf(err, sizeof(err), "out of memory for the metrics");
        goto fail;
    }
    if ((cfg.metrics_listen &&
         !(metrics = metrics_server_start(s.metrics.reg, cfg.metrics_listen, err, sizeof(err)))) ||
        !(srv = scheduler_service_start(&s, err, sizeof(err))) ||
        !(ctl = controller_start(&s, err, sizeof(err))))
        goto fail;
    log_info("scheduler listening", "addr=%s nats=%s metrics=%s", cfg.listen, cfg.nats_url,
             cfg.metrics_listen ? cfg.metrics_listen : "-");
    int sig = stop_signals_wait(&stop_signals, tls_credentials_refresh_cb, tls);
    log_info("scheduler stopping", "signal=%d", sig);
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "airlock-scheduler: %s\n", err);
out:
    rpc_server_stop(srv);
    controller_stop(ctl);
    metrics_server_stop(metrics);
    if (inited) {
        scheduler_metrics_destroy(&s.metrics);
        scheduler_shutdown(&s);
    }
    tls_credentials_free(tls);
    free(internal_token);
    nats_credentials_free(&nats_creds);
    return rc;
}
