#include "sandbox_ca.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "fsutil.h"
#include "log.h"
#include "names.h"

#define CA_DAYS 3650
/* What clients accept for a server certificate at most (398 days). */
#define LEAF_DAYS 397
/* A guest clock slightly behind still accepts fresh certificates. */
#define BACKDATE_SECONDS 86400
#define LEAF_CACHE 64

struct leaf {
    char name[NAME_MAX_LEN + 1];
    X509 *cert;
};

struct sandbox_ca {
    char path[PATH_MAX]; /* saved copy; "" when none */
    EVP_PKEY *key;
    X509 *cert;
    char *pem;
    EVP_PKEY *leaf_key;  /* one key for every leaf of this sandbox */
    pthread_mutex_t lock;
    struct leaf leaves[LEAF_CACHE];
    size_t next_slot;
};

static void set_ssl_err(char *err, size_t errlen, const char *what)
{
    char buf[256];
    ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
    snprintf(err, errlen, "%s: %s", what, buf);
    ERR_clear_error();
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    int rc = ext && X509_add_ext(cert, ext, -1) ? 0 : -1;
    X509_EXTENSION_free(ext);
    return rc;
}

/* An unsigned certificate for key with subject CN=cn, valid from a day ago
 * for days, with a random serial; issuer NULL = its own. */
static X509 *cert_new(EVP_PKEY *key, const char *cn, int days, X509 *issuer)
{
    X509 *cert = X509_new();
    BIGNUM *serial = BN_new();
    X509_NAME *subject = X509_NAME_new();
    if (!cert || !serial || !subject || !X509_set_version(cert, 2) ||
        !BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) ||
        !BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert)) ||
        !X509_gmtime_adj(X509_getm_notBefore(cert), -BACKDATE_SECONDS) ||
        !X509_time_adj_ex(X509_getm_notAfter(cert), days, 0, NULL) ||
        !X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC, (const unsigned char *)"airlock",
                                    -1, -1, 0) ||
        !X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1,
                                    -1, 0) ||
        !X509_set_subject_name(cert, subject) ||
        !X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : subject) ||
        !X509_set_pubkey(cert, key)) {
        X509_free(cert);
        cert = NULL;
    }
    BN_free(serial);
    X509_NAME_free(subject);
    return cert;
}

static X509 *ca_cert_new(EVP_PKEY *key, const char *sandbox_id)
{
    char cn[128];
    snprintf(cn, sizeof(cn), "airlock sandbox %.64s CA", sandbox_id);
    X509 *cert = cert_new(key, cn, CA_DAYS, NULL);
    if (!cert || add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
        add_ext(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
        add_ext(cert, cert, NID_subject_key_identifier, "hash") < 0 ||
        !X509_sign(cert, key, EVP_sha256())) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

static X509 *leaf_cert_new(struct sandbox_ca *ca, const char *name)
{
    char san[NAME_MAX_LEN + 8];
    snprintf(san, sizeof(san), "DNS:%s", name);
    X509 *cert = cert_new(ca->leaf_key, name, LEAF_DAYS, ca->cert);
    if (!cert || add_ext(cert, ca->cert, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
        add_ext(cert, ca->cert, NID_key_usage, "critical,digitalSignature") < 0 ||
        add_ext(cert, ca->cert, NID_ext_key_usage, "serverAuth") < 0 ||
        add_ext(cert, ca->cert, NID_subject_alt_name, san) < 0 ||
        add_ext(cert, ca->cert, NID_authority_key_identifier, "keyid:always") < 0 ||
        !X509_sign(cert, ca->key, EVP_sha256())) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

/* Key and certificate from a file an earlier egress saved; -1 when there
 * is none or it is not a matching pair. */
static int load_saved(struct sandbox_ca *ca)
{
    FILE *f = fopen(ca->path, "re");
    if (!f)
        return -1;
    ca->key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    ca->cert = ca->key ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
    fclose(f);
    if (!ca->cert || X509_check_private_key(ca->cert, ca->key) != 1) {
        EVP_PKEY_free(ca->key);
        X509_free(ca->cert);
        ca->key = NULL;
        ca->cert = NULL;
        ERR_clear_error();
        log_warn("saved sandbox CA unusable: making a new one", "path=%s", ca->path);
        return -1;
    }
    return 0;
}

/* Key then certificate, 0600, written whole or not at all. Without fsync
 * (1-3.5 ms of every attach here): the copy is for an egress restart while
 * the sandbox's VM keeps running, and a power cut that could lose it stops
 * the VMs too; a resumed sandbox's guest is given the CA of its new
 * attachment at its SessionInit. */
static int save(struct sandbox_ca *ca, char *err, size_t errlen)
{
    BIO *mem = BIO_new(BIO_s_mem());
    char *data;
    int rc = -1;
    if (!mem || !PEM_write_bio_PrivateKey(mem, ca->key, NULL, NULL, 0, NULL, NULL) ||
        !PEM_write_bio_X509(mem, ca->cert)) {
        set_ssl_err(err, errlen, "sandbox CA: encode");
        goto out;
    }
    long len = BIO_get_mem_data(mem, &data);
    rc = fs_write_file_replace(ca->path, data, (size_t)len, 0600, err, errlen);
    OPENSSL_cleanse(data, (size_t)len);
out:
    BIO_free(mem);
    return rc;
}

static char *cert_pem(X509 *cert)
{
    BIO *mem = BIO_new(BIO_s_mem());
    char *data, *pem = NULL;
    if (mem && PEM_write_bio_X509(mem, cert)) {
        long len = BIO_get_mem_data(mem, &data);
        pem = strndup(data, (size_t)len);
    }
    BIO_free(mem);
    return pem;
}

struct sandbox_ca *sandbox_ca_open(const char *sandbox_id, const char *state_dir, char *err,
                                   size_t errlen)
{
    struct sandbox_ca *ca = calloc(1, sizeof(*ca));
    if (!ca) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&ca->lock, NULL);
    if (state_dir && fs_path(ca->path, sizeof(ca->path), "%s/%s.pem", state_dir, sandbox_id) < 0) {
        snprintf(err, errlen, "sandbox CA: path under %s too long", state_dir);
        goto fail;
    }
    if (!ca->path[0] || load_saved(ca) < 0) {
        ca->key = EVP_EC_gen("P-256");
        ca->cert = ca->key ? ca_cert_new(ca->key, sandbox_id) : NULL;
        if (!ca->cert) {
            set_ssl_err(err, errlen, "sandbox CA");
            goto fail;
        }
        if (ca->path[0] && save(ca, err, errlen) < 0)
            goto fail;
    }
    ca->leaf_key = EVP_EC_gen("P-256");
    ca->pem = cert_pem(ca->cert);
    if (!ca->leaf_key || !ca->pem) {
        set_ssl_err(err, errlen, "sandbox CA: leaf key");
        goto fail;
    }
    return ca;
fail:
    sandbox_ca_free(ca);
    return NULL;
}

void sandbox_ca_forget(struct sandbox_ca *ca)
{
    if (ca->path[0] && unlink(ca->path) < 0 && errno != ENOENT)
        log_warn("cannot remove saved sandbox CA", "path=%s error=\"%s\"", ca->path,
                 strerror(errno));
}

void sandbox_ca_free(struct sandbox_ca *ca)
{
    if (!ca)
        return;
    for (size_t i = 0; i < LEAF_CACHE; i++)
        X509_free(ca->leaves[i].cert);
    EVP_PKEY_free(ca->key);
    EVP_PKEY_free(ca->leaf_key);
    X509_free(ca->cert);
    free(ca->pem);
    pthread_mutex_destroy(&ca->lock);
    free(ca);
}

const char *sandbox_ca_pem(const struct sandbox_ca *ca)
{
    return ca->pem;
}

/* Still valid for a day more? */
static int fresh(X509 *cert)
{
    time_t soon = time(NULL) + 86400;
    return X509_cmp_time(X509_get0_notAfter(cert), &soon) > 0;
}

int sandbox_ca_leaf(struct sandbox_ca *ca, const char *name, X509 **cert, EVP_PKEY **key,
                    char *err, size_t errlen)
{
    pthread_mutex_lock(&ca->lock);
    struct leaf *hit = NULL;
    for (size_t i = 0; i < LEAF_CACHE && !hit; i++)
        if (ca->leaves[i].cert && strcmp(ca->leaves[i].name, name) == 0 &&
            fresh(ca->leaves[i].cert))
            hit = &ca->leaves[i];
    if (!hit) {
        X509 *made = leaf_cert_new(ca, name);
        if (made) {
            hit = &ca->leaves[ca->next_slot];
            ca->next_slot = (ca->next_slot + 1) % LEAF_CACHE;
            X509_free(hit->cert);
            hit->cert = made;
            snprintf(hit->name, sizeof(hit->name), "%s", name);
        }
    }
    int rc = -1;
    if (hit) {
        X509_up_ref(hit->cert);
        EVP_PKEY_up_ref(ca->leaf_key);
        *cert = hit->cert;
        *key = ca->leaf_key;
        rc = 0;
    } else {
        set_ssl_err(err, errlen, "leaf certificate");
    }
    pthread_mutex_unlock(&ca->lock);
    return rc;
}
