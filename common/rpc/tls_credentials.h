/* A service's TLS key and certificate, and for the internal network the CA
 * its peers' certificates must chain to (docs/security.md "Between
 * services: mutual TLS"). Loaded and checked at start (a problem names the
 * file and the service refuses to start), reloaded when the files change
 * (tls_credentials_refresh: on SIGHUP and every minute): new connections
 * use the new files while calls in flight go on over the old ones.
 *
 * Internal credentials (tls_credentials_configure) give mutual TLS on every
 * internal gRPC hop (rpc_server.h, rpc_client.h) and the service's own
 * identity (peer_identity.h) from its certificate. Public ones (the
 * gateway's --tls-cert/--tls-key) have no CA and no identity. */
#ifndef AIRLOCK_TLS_CREDENTIALS_H
#define AIRLOCK_TLS_CREDENTIALS_H

#include <grpc/grpc_security.h>
#include <stdbool.h>
#include <stddef.h>

#include "peer_identity.h"

#define INTERNAL_CA_ENV "AIRLOCK_INTERNAL_CA"
#define INTERNAL_CERT_ENV "AIRLOCK_INTERNAL_CERT"
#define INTERNAL_KEY_ENV "AIRLOCK_INTERNAL_KEY"

/* Where the PEM files are (ca NULL for public credentials). */
struct tls_files {
    const char *ca, *cert, *key;
};

struct tls_credentials;

/* The three flags of every service, as getopt_long entries (codes above
 * any short option's), their usage lines, and their parser: true when c
 * was one of them. */
#define INTERNAL_TLS_OPT_CA 0x1001
#define INTERNAL_TLS_OPT_CERT 0x1002
#define INTERNAL_TLS_OPT_KEY 0x1003
#define INTERNAL_TLS_OPTIONS                                              \
    { "internal-ca", required_argument, NULL, INTERNAL_TLS_OPT_CA },     \
    { "internal-cert", required_argument, NULL, INTERNAL_TLS_OPT_CERT }, \
    { "internal-key", required_argument, NULL, INTERNAL_TLS_OPT_KEY }
#define INTERNAL_TLS_USAGE                                                                  \
    "  --internal-ca PATH, --internal-cert PATH, --internal-key PATH\n"                     \
    "                         mutual TLS with the other services: the internal CA, this\n"  \
    "                         service's certificate and key (scripts/internal-pki.sh;\n"     \
    "                         env " INTERNAL_CA_ENV ", " INTERNAL_CERT_ENV ",\n"               \
    "                         " INTERNAL_KEY_ENV "); reread on SIGHUP and every minute\n"
bool tls_files_option(struct tls_files *f, int c, const char *arg);

/* The internal identity a service runs with: from files (its
 * --internal-ca, --internal-cert and --internal-key; each unset one from
 * env AIRLOCK_INTERNAL_CA/_CERT/_KEY). All three or none: with none,
 * *out = NULL (the internal API runs without TLS, as before) and, unless
 * quiet (a command-line tool), one warning line is logged. The key must be private to its owner
 * (secret_file.h), match the certificate, and the certificate must chain
 * to the CA, be valid now and name one identity (want: its role, or 0 for
 * any). Returns 0, or -1 with a message naming the file in err. */
int tls_credentials_configure(const struct tls_files *flags, enum peer_role want, bool quiet,
                              struct tls_credentials **out, char *err, size_t errlen);

/* Public server credentials: files->ca NULL; the certificate must match
 * the key and be valid now. NULL with a message naming the file. */
struct tls_credentials *tls_credentials_load_public(const struct tls_files *files, char *err,
                                                   size_t errlen);

/* Reads the files again, checked as at start. On any problem the old
 * credentials stay in use and -1 comes back with the message; a new
 * identity must be the same as the old one. */
int tls_credentials_reload(struct tls_credentials *t, char *err, size_t errlen);

/* Reloads t when its files differ from those in use: 1 (logged), 0 when
 * they are the same (or t is NULL), -1 when the new ones cannot be used
 * (logged "TLS certificate not reloaded"; the old ones stay). */
int tls_credentials_refresh(struct tls_credentials *t);

/* stop_signals_wait's refresh for a service with one set (arg: a struct
 * tls_credentials *, NULL for none). */
void tls_credentials_refresh_cb(void *arg);

void tls_credentials_free(struct tls_credentials *t);

/* Made by tls_credentials_configure (mutual TLS), not _load_public. */
bool tls_credentials_internal(const struct tls_credentials *t);

/* Internal credentials only. */
const struct peer_identity *tls_credentials_identity(const struct tls_credentials *t);
const struct tls_files *tls_credentials_files(const struct tls_credentials *t);

/* Bumped by every successful reload. */
unsigned tls_credentials_generation(const struct tls_credentials *t);

/* Server credentials that pick up each reload at the next handshake. With
 * internal credentials a client certificate is asked for but checked per
 * call (tls_credentials_verify_peer), so a refusal can name the caller
 * and the reason. t must outlive the server. */
grpc_server_credentials *tls_credentials_server(struct tls_credentials *t);

/* Channel credentials with the current files (internal only): the server
 * must chain to the CA; *generation says which files they hold. */
grpc_channel_credentials *tls_credentials_channel(struct tls_credentials *t,
                                                  unsigned *generation);

/* Checks a peer's certificate (PEM, as gRPC reports it) against the
 * current CA and reads its identity. 0, or -1 with why ("certificate has
 * expired", "names no airlock identity") in why. */
int tls_credentials_verify_peer(struct tls_credentials *t, const char *pem,
                                struct peer_identity *id, char *why, size_t whylen);

#endif
