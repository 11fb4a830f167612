/* Each service's own NATS user (docs/operations.md "NATS users"): nats-server
 * gives every identity — each node, the scheduler, the gateway — a user
 * whose permissions name only the subjects it needs, so one compromised
 * node can neither forge another's heartbeat nor receive its work. A
 * service reads "user:password" (one line) from --nats-credentials-file at
 * start.
 *
 * With the service's internal TLS (tls_credentials.h) the connection is TLS:
 * nats-server must present the identity NATS_SERVER_DNS of the internal CA,
 * and asks for the service's own certificate (docs/operations.md "NATS
 * over TLS"). The certificate is a second factor beside the password, not
 * the NATS user: nats-server's subject permissions stay per user. NATS.c
 * reads the files at connect; a renewed certificate (SIGHUP) is used from
 * the next start of the service on. */
#ifndef AIRLOCK_NATS_CREDENTIALS_H
#define AIRLOCK_NATS_CREDENTIALS_H

#include <stddef.h>

#include <nats/nats.h>

#define NATS_PASSWORD_MIN_LEN 16
/* nats-server's certificate names it (scripts/internal-pki.sh's `nats`). */
#define NATS_SERVER_DNS "nats.airlock.internal"

struct tls_credentials;
struct tls_files;

struct nats_credentials {
    char *user;     /* NULL: connect without credentials */
    char *password;
    char path[4096]; /* where they came from, for messages */
    const struct tls_files *tls; /* CA, certificate and key; NULL: plain TCP */
};

/* Reads "user:password" from path (a private file: secret_file.h). The user
 * is 1..127 characters of [A-Za-z0-9_.-]; the password at least
 * NATS_PASSWORD_MIN_LEN printable ASCII characters without space, quote or
 * backslash (both go into nats-server's config). Returns 0, or -1 with a
 * message naming path in err (never the password). */
int nats_credentials_load(const char *path, struct nats_credentials *c, char *err, size_t errlen);

/* From path (a service's --nats-credentials-file); path NULL: none, the
 * connection is unauthenticated and one warning line is logged. */
int nats_credentials_configure(const char *path, struct nats_credentials *c, char *err,
                               size_t errlen);

void nats_credentials_free(struct nats_credentials *c);

/* Connect over TLS with the files of t (the service's internal
 * credentials, which must outlive c); t NULL: plain TCP, as before. */
void nats_credentials_use_tls(struct nats_credentials *c, const struct tls_credentials *t);

/* Sets c's user and password on opts (none without), its TLS (above), and
 * an error handler that logs what nats-server refuses after connecting — a
 * permissions violation arrives asynchronously, not as a publish's status. */
natsStatus nats_credentials_apply(natsOptions *opts, const struct nats_credentials *c);

/* "nats URL: <the server's error>" in err, and which user, file or TLS
 * flag to check when the server refused the credentials. */
void nats_connect_error(const struct nats_credentials *c, const char *url, natsStatus st,
                        natsConnection *nc, char *err, size_t errlen);

#endif
