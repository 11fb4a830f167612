/* TLS on both sides of a connection egress intercepts: towards the guest
 * egress is the server, with a certificate for the name the guest asked
 * for signed by the sandbox's CA (sandbox_ca.h); towards the upstream it is
 * an ordinary client that verifies the server's certificate and name
 * against a CA bundle (the system's, or --upstream-ca). HTTP/1.1 only
 * (ALPN), TLS 1.2 and later. */
#ifndef AIRLOCK_EGRESS_TLS_INTERCEPT_H
#define AIRLOCK_EGRESS_TLS_INTERCEPT_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "conn_stream.h"

struct tls_intercept;

/* upstream_ca_file NULL = the system's trust store. NULL with err set. */
struct tls_intercept *tls_intercept_new(const char *upstream_ca_file, char *err, size_t errlen);
void tls_intercept_free(struct tls_intercept *t);

/* The guest's handshake on fd, whose ClientHello (prefix) egress has read
 * already, answered with cert/key. Waits at most timeout_ms for the guest.
 * 0 with s ready, or -1 with err set. */
int tls_accept_guest(struct tls_intercept *t, int fd, const uint8_t *prefix, size_t len,
                     X509 *cert, EVP_PKEY *key, int timeout_ms, struct conn_stream *s, char *err,
                     size_t errlen);

/* A verified TLS session to name over the connected socket fd (blocking).
 * 0 with s ready, or -1 with err saying why (e.g. the certificate did not
 * verify). */
int tls_connect_upstream(struct tls_intercept *t, int fd, const char *name, int timeout_ms,
                         struct conn_stream *s, char *err, size_t errlen);

#endif
