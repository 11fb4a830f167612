#include "tls_intercept.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct tls_intercept {
    SSL_CTX *guest_side;
    SSL_CTX *upstream_side;
};

static const unsigned char alpn_http11[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };

static void set_ssl_err(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_get_error();
    char buf[256] = "no further detail";
    if (e)
        ERR_error_string_n(e, buf, sizeof(buf));
    snprintf(err, errlen, "%s: %s", what, buf);
    ERR_clear_error();
}

/* egress parses HTTP/1.x only: a guest offering h2 gets http/1.1 or no
 * ALPN at all, which every client reads as HTTP/1.1. */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl;
    (void)arg;
    unsigned char *sel;
    if (SSL_select_next_proto(&sel, outlen, alpn_http11, sizeof(alpn_http11), in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

struct tls_intercept *tls_intercept_new(const char *upstream_ca_file, char *err, size_t errlen)
{
    struct tls_intercept *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->guest_side = SSL_CTX_new(TLS_server_method());
    t->upstream_side = SSL_CTX_new(TLS_client_method());
    if (!t->guest_side || !t->upstream_side ||
        !SSL_CTX_set_min_proto_version(t->guest_side, TLS1_2_VERSION) ||
        !SSL_CTX_set_min_proto_version(t->upstream_side, TLS1_2_VERSION) ||
        !SSL_CTX_set_num_tickets(t->guest_side, 0) ||
        SSL_CTX_set_alpn_protos(t->upstream_side, alpn_http11, sizeof(alpn_http11)) != 0) {
        set_ssl_err(err, errlen, "TLS contexts");
        goto fail;
    }
    SSL_CTX_set_alpn_select_cb(t->guest_side, select_alpn, NULL);
    SSL_CTX_set_session_cache_mode(t->guest_side, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_verify(t->upstream_side, SSL_VERIFY_PEER, NULL);
    int loaded = upstream_ca_file
                     ? SSL_CTX_load_verify_locations(t->upstream_side, upstream_ca_file, NULL)
                     : SSL_CTX_set_default_verify_paths(t->upstream_side);
    if (!loaded) {
        char what[512];
        snprintf(what, sizeof(what), "upstream CA bundle %s",
                 upstream_ca_file ? upstream_ca_file : "(system default)");
        set_ssl_err(err, errlen, what);
        goto fail;
    }
    return t;
fail:
    tls_intercept_free(t);
    return NULL;
}

void tls_intercept_free(struct tls_intercept *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->guest_side);
    SSL_CTX_free(t->upstream_side);
    free(t);
}

/* Bounds a blocking handshake: a peer that stops half-way fails it. 0
 * lifts the bound again (an idle keep-alive connection may wait). */
static void io_timeout(int fd, int timeout_ms)
{
    struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A new SSL on ctx over fd (prefix first). */
static SSL *ssl_on(SSL_CTX *ctx, int fd, const uint8_t *prefix, size_t len)
{
    SSL *ssl = SSL_new(ctx);
    BIO *bio = ssl ? conn_stream_bio(fd, prefix, len) : NULL;
    if (!bio) {
        SSL_free(ssl);
        return NULL;
    }
    SSL_set_bio(ssl, bio, bio);
    return ssl;
}

int tls_accept_guest(struct tls_intercept *t, int fd, const uint8_t *prefix, size_t len,
                     X509 *cert, EVP_PKEY *key, int timeout_ms, struct conn_stream *s, char *err,
                     size_t errlen)
{
    SSL *ssl = ssl_on(t->guest_side, fd, prefix, len);
    if (!ssl || SSL_use_certificate(ssl, cert) != 1 || SSL_use_PrivateKey(ssl, key) != 1) {
        set_ssl_err(err, errlen, "guest TLS");
        SSL_free(ssl);
        return -1;
    }
    io_timeout(fd, timeout_ms);
    int rc = SSL_accept(ssl);
    io_timeout(fd, 0);
    if (rc != 1) {
        /* Typically the guest does not trust the sandbox CA (an alert). */
        set_ssl_err(err, errlen, "guest TLS handshake");
        SSL_free(ssl);
        return -1;
    }
    *s = (struct conn_stream){ .fd = fd, .ssl = ssl };
    return 0;
}

int tls_connect_upstream(struct tls_intercept *t, int fd, const char *name, int timeout_ms,
                         struct conn_stream *s, char *err, size_t errlen)
{
    SSL *ssl = ssl_on(t->upstream_side, fd, NULL, 0);
    if (!ssl || !SSL_set_tlsext_host_name(ssl, name) || !SSL_set1_host(ssl, name)) {
        set_ssl_err(err, errlen, "upstream TLS");
        SSL_free(ssl);
        return -1;
    }
    io_timeout(fd, timeout_ms);
    int rc = SSL_connect(ssl);
    io_timeout(fd, 0);
    if (rc != 1) {
        long v = SSL_get_verify_result(ssl);
        if (v != X509_V_OK) {
            snprintf(err, errlen, "upstream certificate of %s did not verify: %s", name,
                     X509_verify_cert_error_string(v));
            ERR_clear_error();
        } else {
            set_ssl_err(err, errlen, "upstream TLS handshake");
        }
        SSL_free(ssl);
        return -1;
    }
    *s = (struct conn_stream){ .fd = fd, .ssl = ssl };
    return 0;
}
