/* The certificate and key the public REST listener serves over TLS
 * (--tls-cert/--tls-key), read from their files at start and again on
 * SIGHUP. libmicrohttpd asks for them at each handshake
 * (MHD_OPTION_HTTPS_CERT_CALLBACK), so a reload reaches every new
 * connection and leaves open ones as they are. One set per process:
 * GnuTLS's callback has no closure to carry it. */
#ifndef AIRLOCK_GATEWAY_TLS_CERTS_H
#define AIRLOCK_GATEWAY_TLS_CERTS_H

#include <gnutls/abstract.h>
#include <stddef.h>

/* Reads cert_file (PEM: the certificate, then its chain) and key_file
 * (its PEM private key) and serves them from now on. 0, or -1 with err
 * naming the file at fault (unreadable, not PEM, a key of another
 * certificate); what was served before stays then. */
int tls_certs_load(const char *cert_file, const char *key_file, char *err, size_t errlen);

/* For MHD_OPTION_HTTPS_CERT_CALLBACK: the set loaded last. */
gnutls_certificate_retrieve_function2 tls_certs_retrieve;

/* Frees every set loaded; after the listener stopped. */
void tls_certs_free(void);

#endif
