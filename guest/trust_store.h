/* The sandbox CA in the guest's trust store. egress answers TLS to hosts
 * with a credential binding with certificates signed by a CA of the
 * sandbox's own; the host hands its certificate over in SessionInit and
 * programs in the guest (curl, python, openssl) must trust it. */
#ifndef GUESTD_TRUST_STORE_H
#define GUESTD_TRUST_STORE_H

#include <stddef.h>

#define TRUST_STORE_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define TRUST_STORE_CA_FILE "/usr/local/share/ca-certificates/airlock-sandbox.crt"
/* Opens the block at the end of the bundle; everything from it on is the
 * sandbox CA of the last session. */
#define TRUST_STORE_MARKER "# airlock sandbox CA (replaced at every session)\n"
#define TRUST_STORE_PEM_MAX 16384

/* Writes pem (one PEM certificate) to ca_file, so a later
 * update-ca-certificates keeps it, and puts it at the end of bundle in
 * place of an earlier session's (bundle is created if missing). Leaves both
 * alone when the bundle already ends with it. 0, or an errno with msg
 * naming what failed. */
int trust_store_install_ca(const char *pem, const char *bundle, const char *ca_file, char *msg,
                           size_t msglen);

#endif
