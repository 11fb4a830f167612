/* A sandbox's own certificate authority: an EC P-256 key and a self-signed
 * CA certificate made when the sandbox is attached, which the guest trusts
 * (vmhost installs the certificate with SessionInit) and egress uses to
 * sign the certificates it answers TLS with for hosts that have a
 * credential binding. The key stays in egress: in memory, and in a 0600
 * file under the state directory when egress has one, so a restarted
 * egress re-attaching the sandbox keeps the CA the guest already trusts.
 * Leaf certificates are cached per name. Thread-safe. */
#ifndef AIRLOCK_EGRESS_SANDBOX_CA_H
#define AIRLOCK_EGRESS_SANDBOX_CA_H

#include <stddef.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

struct sandbox_ca;

/* The CA saved for sandbox_id under state_dir, or a new one (saved there
 * when state_dir is not NULL). NULL with err set. */
struct sandbox_ca *sandbox_ca_open(const char *sandbox_id, const char *state_dir, char *err,
                                   size_t errlen);
void sandbox_ca_free(struct sandbox_ca *ca);
/* Removes the saved copy (the sandbox is detached for good). */
void sandbox_ca_forget(struct sandbox_ca *ca);

/* The CA certificate as PEM (owned by ca). */
const char *sandbox_ca_pem(const struct sandbox_ca *ca);

/* A certificate for name (a normalized host name) signed by the CA, and
 * its key; the caller frees both (X509_free, EVP_PKEY_free). -1 with err
 * set. */
int sandbox_ca_leaf(struct sandbox_ca *ca, const char *name, X509 **cert, EVP_PKEY **key,
                    char *err, size_t errlen);

#endif
