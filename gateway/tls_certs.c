#include "tls_certs.h"

#include <gnutls/gnutls.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

/* A certificate, its intermediates, and more than anyone sends. */
#define TLS_CERTS_MAX_CHAIN 8
#define TLS_CERTS_MAX_FILE (1 << 20)

struct tls_cert_set {
    gnutls_pcert_st chain[TLS_CERTS_MAX_CHAIN];
    unsigned chain_len;
    gnutls_privkey_t key;
    struct tls_cert_set *older;
};

/* The set handshakes get. Sets replaced by a reload are kept (on older)
 * until tls_certs_free: a handshake that began with one may still use
 * it, and a reload is rare and a few KB. */
static _Atomic(struct tls_cert_set *) current;

static void set_free(struct tls_cert_set *s)
{
    for (unsigned i = 0; i < s->chain_len; i++)
        gnutls_pcert_deinit(&s->chain[i]);
    if (s->key)
        gnutls_privkey_deinit(s->key);
    free(s);
}

/* The PEM file at path (what: "certificate" or "key") into *datum (free
 * with free()). */
static int read_pem(const char *path, const char *what, gnutls_datum_t *datum, char *err,
                    size_t errlen)
{
    char *data, why[512];
    size_t len;
    if (fs_read_file(path, TLS_CERTS_MAX_FILE, &data, &len, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "TLS %s: %s", what, why);
        return -1;
    }
    datum->data = (unsigned char *)data;
    datum->size = (unsigned)len;
    return 0;
}

/* Whether key is the private half of the certificate's public key. */
static bool key_matches(const struct tls_cert_set *s)
{
    gnutls_pubkey_t pub;
    unsigned char want[64], have[64];
    size_t want_len = sizeof(want), have_len = sizeof(have);
    if (gnutls_pubkey_init(&pub) < 0)
        return false;
    bool same = gnutls_pubkey_import_privkey(pub, s->key, 0, 0) == 0 &&
                gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, have, &have_len) == 0 &&
                gnutls_pubkey_get_key_id(s->chain[0].pubkey, GNUTLS_KEYID_USE_SHA256, want,
                                         &want_len) == 0 &&
                want_len == have_len && memcmp(want, have, want_len) == 0;
    gnutls_pubkey_deinit(pub);
    return same;
}

int tls_certs_load(const char *cert_file, const char *key_file, char *err, size_t errlen)
{
    gnutls_datum_t cert = { 0 }, key = { 0 };
    struct tls_cert_set *s = calloc(1, sizeof(*s));
    int rc = -1;
    if (!s) {
        snprintf(err, errlen, "out of memory for the TLS certificate");
        return -1;
    }
    if (read_pem(cert_file, "certificate", &cert, err, errlen) < 0 ||
        read_pem(key_file, "key", &key, err, errlen) < 0)
        goto out;
    s->chain_len = TLS_CERTS_MAX_CHAIN;
    int gr = gnutls_pcert_list_import_x509_raw(s->chain, &s->chain_len, &cert,
                                               GNUTLS_X509_FMT_PEM, 0);
    if (gr < 0 || s->chain_len == 0) {
        s->chain_len = 0;
        snprintf(err, errlen, "TLS certificate %s: %s", cert_file,
                 gr < 0 ? gnutls_strerror(gr) : "no certificate in it");
        goto out;
    }
    if ((gr = gnutls_privkey_init(&s->key)) < 0 ||
        (gr = gnutls_privkey_import_x509_raw(s->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        snprintf(err, errlen, "TLS key %s: %s", key_file, gnutls_strerror(gr));
        goto out;
    }
    if (!key_matches(s)) {
        snprintf(err, errlen, "TLS key %s is not the key of the certificate in %s", key_file,
                 cert_file);
        goto out;
    }
    s->older = atomic_load(&current);
    atomic_store(&current, s);
    s = NULL;
    rc = 0;
out:
    if (s)
        set_free(s);
    free(cert.data);
    free(key.data);
    return rc;
}

int tls_certs_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                       const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                       gnutls_pcert_st **pcert, unsigned int *pcert_length,
                       gnutls_privkey_t *privkey)
{
    (void)session, (void)req_ca_rdn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
    struct tls_cert_set *s = atomic_load(&current);
    if (!s)
        return -1;
    *pcert = s->chain;
    *pcert_length = s->chain_len;
    *privkey = s->key;
    return 0;
}

void tls_certs_free(void)
{
    struct tls_cert_set *s = atomic_exchange(&current, NULL);
    while (s) {
        struct tls_cert_set *older = s->older;
        set_free(s);
        s = older;
    }
}
