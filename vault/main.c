/* airlock-vault: encrypted secrets for egress to inject. Parses
 * configuration and wires the parts together. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "internal_token.h"
#include "log.h"
#include "metrics_http.h"
#include "vault_service.h"
#include "vault.h"
#include "stop_signals.h"
#include "tls_credentials.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: airlock-vault --database URL --master-key-file PATH [--listen ADDR]\n"
                 "  --database URL         PostgreSQL connection string (env AIRLOCK_DATABASE_URL)\n"
                 "  --master-key-file PATH 32-byte master key, created (0600) when missing\n"
                 "  --listen ADDR          gRPC address (default unix:/run/airlock/vault.sock)\n"
                 "  --internal-token-file PATH  callers must present this token\n"
                 "                         (env AIRLOCK_INTERNAL_TOKEN_FILE; unset: none)\n"
                 INTERNAL_TLS_USAGE METRICS_LISTEN_USAGE);
}

int main(int argc, char **argv)
{
    /* Before anything holds a key: no core dumps, no ptrace by other
     * processes of the same user. */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    log_init("vault", getenv("AIRLOCK_DEBUG") ? LOG_DEBUG : LOG_INFO);
    signal(SIGPIPE, SIG_IGN);
    static const struct option opts[] = {
        { "database", required_argument, NULL, 'D' },
        { "master-key-file", required_argument, NULL, 'k' },
        { "listen", required_argument, NULL, 'l' },
        { "internal-token-file", required_argument, NULL, 'T' },
        INTERNAL_TLS_OPTIONS,
        { METRICS_LISTEN_FLAG, required_argument, NULL, 'M' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *database = getenv("AIRLOCK_DATABASE_URL"), *key_file = NULL;
    const char *listen = "unix:/run/airlock/vault.sock", *token_file = NULL;
    const char *metrics_listen = NULL;
    struct tls_files tls_files = { 0 };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (tls_files_option(&tls_files, c, optarg))
            continue;
        switch (c) {
        case 'D': database = optarg; break;
        case 'k': key_file = optarg; break;
        case 'l': listen = optarg; break;
        case 'T': token_file = optarg; break;
        case 'M': metrics_listen = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!database || !key_file) {
        usage(stderr);
        return 2;
    }
    char err[4096];
    metrics_listen = metrics_listen_addr(metrics_listen);
    if (metrics_listen && metrics_listen_check(metrics_listen, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-vault: %s\n", err);
        return 2;
    }
    char *internal_token = NULL;
    struct tls_credentials *tls = NULL;
    if (internal_token_configure(token_file, &internal_token, err, sizeof(err)) < 0 ||
        tls_credentials_configure(&tls_files, PEER_VAULT, false, &tls, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-vault: %s\n", err);
        free(internal_token);
        return 1;
    }
    sigset_t stop_signals;
    stop_signals_block(&stop_signals);

    struct vault v;
    struct rpc_server *srv = NULL;
    struct metrics_server *metrics = NULL;
    int rc = 1;
    if (vault_init(&v, database, key_file, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-vault: %s\n", err);
        goto out;
    }
    bool counted = vault_metrics_init(&v.metrics) == 0;
    if (!counted)
        snprintf(err, sizeof(err), "out of memory for the metrics");
    struct rpc_security sec = { .bearer_token = internal_token, .tls = tls,
                                .calls = v.metrics.calls };
    if (!counted ||
        (metrics_listen &&
         !(metrics = metrics_server_start(v.metrics.reg, metrics_listen, err, sizeof(err)))) ||
        !(srv = vault_service_start(&v, listen, &sec, err, sizeof(err)))) {
        fprintf(stderr, "airlock-vault: %s\n", err);
        metrics_server_stop(metrics);
        vault_metrics_destroy(&v.metrics);
        vault_shutdown(&v);
        goto out;
    }
    log_info("vault listening", "addr=%s metrics=%s", listen,
             metrics_listen ? metrics_listen : "-");
    int sig = stop_signals_wait(&stop_signals, tls_credentials_refresh_cb, tls);
    log_info("vault stopping", "signal=%d", sig);
    rpc_server_stop(srv);
    metrics_server_stop(metrics);
    vault_metrics_destroy(&v.metrics);
    vault_shutdown(&v);
    rc = 0;
out:
    tls_credentials_free(tls);
    free(internal_token);
    return rc;
}
