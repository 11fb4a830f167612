/* The TLS-interception rows of bench_egress.c: a real airlock-vault (on a
 * throwaway PostgreSQL, tests/vault/vault_fixture) holding a secret bound
 * to BENCH_TLS_HOST for project BENCH_TLS_PROJECT, an HTTPS server in
 * netlab's inet namespace whose certificate comes from a CA only egress
 * is told to trust, and an HTTPS client that reads one large answer. */
#ifndef AIRLOCK_BENCH_EGRESS_TLS_H
#define AIRLOCK_BENCH_EGRESS_TLS_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "vault_fixture.h"

/* netlab's DNS answers NETLAB_WEB2 for it. */
#define BENCH_TLS_HOST "other.test"
#define BENCH_TLS_PROJECT "bench-tls"
#define BENCH_TLS_PORT 8443

struct bench_tls {
    struct vault_fixture vault;
    bool vault_up;
    char upstream_ca_file[PATH_MAX]; /* for egress_config.upstream_ca_file */
    char *upstream_ca_pem;           /* what a direct client trusts */
    SSL_CTX *server_ctx;
    int fd;
    int connections;
    uint64_t body_bytes;
    pthread_t thread;
    bool serving;
};

/* Starts vault, stores the bound secret, makes the upstream's CA and
 * certificate. 0, or -1 after printing why. */
int bench_tls_setup(struct bench_tls *t);
void bench_tls_teardown(struct bench_tls *t);

/* Serves connections HTTPS requests on NETLAB_WEB2:BENCH_TLS_PORT (inet
 * namespace), each answered with body_bytes; join waits for the last. */
int bench_tls_serve(struct bench_tls *t, int connections, uint64_t body_bytes);
void bench_tls_join(struct bench_tls *t);

/* GET over TLS to ip:port naming BENCH_TLS_HOST, the server's certificate
 * verified against ca_pem; the body's length once read in full, or -1.
 * Runs in the calling thread's namespace. */
long long bench_tls_fetch(const char *ip, uint16_t port, const char *ca_pem);

/* How many injections vault audited as OK: each intercepted request is
 * one, so the figures are of interception indeed. -1 when vault does not
 * say. */
int bench_tls_injections(struct bench_tls *t);

#endif
