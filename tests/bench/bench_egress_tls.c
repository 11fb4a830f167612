#include "bench_egress_tls.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "fsutil.h"
#include "netlab.h"
#include "sandbox_ca.h"
#include "vault.pb-c.h"

#define IO_TIMEOUT_MS 30000
#define BLOCK (1 << 20)

static int store_secret(struct bench_tls *t)
{
    Airlock__Vault__V1__CreateSecretRequest req = AIRLOCK__VAULT__V1__CREATE_SECRET_REQUEST__INIT;
    char *patterns[] = { BENCH_TLS_HOST };
    req.project_id = BENCH_TLS_PROJECT;
    req.name = "bench";
    req.value.data = (uint8_t *)"bench-secret-value";
    req.value.len = strlen("bench-secret-value");
    req.n_host_patterns = 1;
    req.host_patterns = patterns;
    req.injection_rule = "Authorization: Bearer {secret}";
    req.actor = "bench";
    ProtobufCMessage *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(t->vault.ch, "/airlock.vault.v1.Vault/CreateSecret", &req.base,
                                    &airlock__vault__v1__secret_metadata__descriptor, &resp,
                                    &details, 20000);
    if (st != GRPC_STATUS_OK)
        fprintf(stderr, "bench egress tls: CreateSecret: %s\n", details ? details : "");
    free(details);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st == GRPC_STATUS_OK ? 0 : -1;
}

/* The upstream's certificate for BENCH_TLS_HOST from a CA of its own,
 * made with egress's CA code; the CA goes to a file for egress. */
static int make_upstream(struct bench_tls *t)
{
    char err[256];
    struct sandbox_ca *ca = sandbox_ca_open("bench-upstream", NULL, err, sizeof(err));
    X509 *cert = NULL;
    EVP_PKEY *key = NULL;
    int rc = -1;
    if (!ca || sandbox_ca_leaf(ca, BENCH_TLS_HOST, &cert, &key, err, sizeof(err)) < 0)
        goto out;
    t->upstream_ca_pem = strdup(sandbox_ca_pem(ca));
    fs_path(t->upstream_ca_file, sizeof(t->upstream_ca_file), "%s/upstream-ca.pem", t->vault.dir);
    if (!t->upstream_ca_pem ||
        fs_write_file_atomic(t->upstream_ca_file, t->upstream_ca_pem, strlen(t->upstream_ca_pem),
                             0644, err, sizeof(err)) < 0)
        goto out;
    t->server_ctx = SSL_CTX_new(TLS_server_method());
    if (!t->server_ctx || SSL_CTX_use_certificate(t->server_ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey(t->server_ctx, key) != 1) {
        snprintf(err, sizeof(err), "server context");
        goto out;
    }
    rc = 0;
out:
    if (rc < 0)
        fprintf(stderr, "bench egress tls: upstream certificate: %s\n", err);
    X509_free(cert);
    EVP_PKEY_free(key);
    sandbox_ca_free(ca);
    return rc;
}

int bench_tls_setup(struct bench_tls *t)
{
    memset(t, 0, sizeof(*t));
    t->fd = -1;
    if (vault_fixture_start(&t->vault) != 0)
        return -1;
    t->vault_up = true;
    return store_secret(t) < 0 || make_upstream(t) < 0 ? -1 : 0;
}

void bench_tls_teardown(struct bench_tls *t)
{
    bench_tls_join(t);
    if (t->vault_up)
        vault_fixture_stop(&t->vault);
    t->vault_up = false;
    SSL_CTX_free(t->server_ctx);
    t->server_ctx = NULL;
    free(t->upstream_ca_pem);
    t->upstream_ca_pem = NULL;
}

/* One connection: the request head, then the answer. */
static void serve_one(struct bench_tls *t, int fd, char *block)
{
    SSL *ssl = SSL_new(t->server_ctx);
    char head[4096], answer_head[160];
    if (!ssl || SSL_set_fd(ssl, fd) != 1 || SSL_accept(ssl) != 1 ||
        SSL_read(ssl, head, sizeof(head)) <= 0)
        goto out;
    int hl = snprintf(answer_head, sizeof(answer_head),
                      "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\nConnection: close\r\n\r\n",
                      (unsigned long long)t->body_bytes);
    if (SSL_write(ssl, answer_head, hl) != hl)
        goto out;
    for (uint64_t sent = 0; sent < t->body_bytes;) {
        int n = SSL_write(ssl, block, (int)(t->body_bytes - sent < BLOCK ? t->body_bytes - sent
                                                                        : BLOCK));
        if (n <= 0)
            goto out;
        sent += (uint64_t)n;
    }
    SSL_shutdown(ssl);
out:
    SSL_free(ssl);
    close(fd);
}

static void *tls_serve(void *arg)
{
    struct bench_tls *t = arg;
    char *block = calloc(1, BLOCK);
    for (int c = 0; block && c < t->connections; c++) {
        struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
        if (poll(&pfd, 1, IO_TIMEOUT_MS) != 1)
            break;
        int fd = accept4(t->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0)
            serve_one(t, fd, block);
    }
    free(block);
    return NULL;
}

int bench_tls_serve(struct bench_tls *t, int connections, uint64_t body_bytes)
{
    t->connections = connections;
    t->body_bytes = body_bytes;
    if ((t->fd = netlab_inet_listen(NETLAB_WEB2, BENCH_TLS_PORT, 8)) < 0 ||
        pthread_create(&t->thread, NULL, tls_serve, t) != 0) {
        fprintf(stderr, "bench egress tls: server: %s\n", strerror(errno));
        if (t->fd >= 0)
            close(t->fd);
        t->fd = -1;
        return -1;
    }
    t->serving = true;
    return 0;
}

void bench_tls_join(struct bench_tls *t)
{
    /* A failed client leaves the server waiting: its poll ends it. */
    if (t->serving)
        pthread_join(t->thread, NULL);
    t->serving = false;
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
}

static SSL_CTX *client_ctx(const char *ca_pem)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    BIO *bio = BIO_new_mem_buf(ca_pem, -1);
    X509 *ca = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    bool ok = ctx && ca && X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca) == 1;
    X509_free(ca);
    BIO_free(bio);
    if (!ok) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

/* Reads the answer: the head, then Content-Length bytes of body. */
static long long read_answer(SSL *ssl)
{
    char *buf = malloc(BLOCK + 1);
    size_t have = 0;
    long long body = -1, want = -1;
    while (buf) {
        int n = SSL_read(ssl, buf + have, (int)(BLOCK - have));
        if (n <= 0)
            break;
        if (want >= 0) {
            body += n;
            if (body >= want)
                break;
            continue;
        }
        have += (size_t)n;
        buf[have] = '\0';
        char *end = strstr(buf, "\r\n\r\n"), *cl = strcasestr(buf, "\r\nContent-Length:");
        if (!end || !cl || strncmp(buf, "HTTP/1.1 200", 12) != 0) {
            if (have == BLOCK)
                break;
            continue;
        }
        want = strtoll(cl + 17, NULL, 10);
        body = (long long)(have - (size_t)(end + 4 - buf));
        have = 0; /* from here on only counted */
        if (body >= want)
            break;
    }
    free(buf);
    return want >= 0 && body == want ? body : -1;
}

long long bench_tls_fetch(const char *ip, uint16_t port, const char *ca_pem)
{
    static const char request[] = "GET /bulk HTTP/1.1\r\nHost: " BENCH_TLS_HOST
                                  "\r\nConnection: close\r\n\r\n";
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
    struct timeval tv = { .tv_sec = IO_TIMEOUT_MS / 1000 };
    long long got = -1;
    SSL_CTX *ctx = client_ctx(ca_pem);
    SSL *ssl = NULL;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!ctx || fd < 0 || inet_pton(AF_INET, ip, &sa.sin_addr) != 1 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || !(ssl = SSL_new(ctx)) ||
        SSL_set_fd(ssl, fd) != 1 || SSL_set_tlsext_host_name(ssl, BENCH_TLS_HOST) != 1 ||
        SSL_set1_host(ssl, BENCH_TLS_HOST) != 1 || SSL_connect(ssl) != 1 ||
        SSL_write(ssl, request, (int)strlen(request)) != (int)strlen(request))
        goto out;
    got = read_answer(ssl);
out:
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    if (fd >= 0)
        close(fd);
    return got;
}

int bench_tls_injections(struct bench_tls *t)
{
    Airlock__Vault__V1__ListAuditRequest req = AIRLOCK__VAULT__V1__LIST_AUDIT_REQUEST__INIT;
    req.project_id = BENCH_TLS_PROJECT;
    req.limit = 1000;
    ProtobufCMessage *resp = NULL;
    if (rpc_unary(t->vault.ch, "/airlock.vault.v1.Vault/ListAudit", &req.base,
                  &airlock__vault__v1__list_audit_response__descriptor, &resp, NULL,
                  20000) != GRPC_STATUS_OK)
        return -1;
    Airlock__Vault__V1__ListAuditResponse *a = (void *)resp;
    int n = 0;
    for (size_t i = 0; i < a->n_entries; i++)
        n += strcmp(a->entries[i]->action, "inject") == 0 &&
             strcmp(a->entries[i]->status, "OK") == 0;
    protobuf_c_message_free_unpacked(resp, NULL);
    return n;
}
