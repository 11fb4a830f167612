/* TLS files checked with OpenSSL, swapped whole on reload; gRPC reads the
 * current set at each new handshake (server) or channel (client). */
#include "tls_credentials.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fsutil.h"
#include "log.h"
#include "peer_cache.h"
#include "secret_file.h"

#define PEM_MAX (256 * 1024)

/* One consistent set of files; never changed once made. */
struct tls_material {
    char *ca_pem, *cert_pem, *key_pem;
    X509_STORE *store; /* the CA (internal only) */
    struct peer_identity id;
};

/* gRPC asks at every new handshake; the config it gets is its own. One per
 * server, as each server remembers the config it was given. */
struct server_fetch {
    struct tls_credentials *t;
    unsigned served;
    bool any;
    struct server_fetch *next;
};

struct tls_credentials {
    pthread_mutex_t mu;
    struct peer_identity id; /* internal: the same across reloads */
    struct server_fetch *fetchers; /* under mu */
    struct peer_cache *verified;   /* internal: clients' certificates checked */
    char *ca_path, *cert_path, *key_path;
    struct tls_files files;
    bool internal;
    struct tls_material *cur; /* under mu */
    atomic_uint generation;
};

static void material_free(struct tls_material *m)
{
    if (!m)
        return;
    free(m->ca_pem);
    free(m->cert_pem);
    secret_free(m->key_pem);
    X509_STORE_free(m->store);
    free(m);
}

static const char *ssl_reason(void)
{
    unsigned long e = ERR_get_error();
    ERR_clear_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    return r ? r : "not PEM";
}

static X509 *pem_certificate(const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509 *x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    return x;
}

/* The one airlock identity among the certificate's DNS names. */
static int certificate_identity(X509 *x, struct peer_identity *id)
{
    GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    int found = 0;
    for (int i = 0; names && i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *n = sk_GENERAL_NAME_value(names, i);
        if (n->type != GEN_DNS)
            continue;
        const unsigned char *s = ASN1_STRING_get0_data(n->d.dNSName);
        int len = ASN1_STRING_length(n->d.dNSName);
        char dns[PEER_IDENTITY_DNS_MAX];
        struct peer_identity candidate;
        if (len <= 0 || (size_t)len >= sizeof(dns) || memchr(s, '\0', (size_t)len))
            continue;
        memcpy(dns, s, (size_t)len);
        dns[len] = '\0';
        if (peer_identity_from_dns(dns, &candidate) == 0) {
            *id = candidate;
            found++;
        }
    }
    GENERAL_NAMES_free(names);
    return found == 1 ? 0 : -1;
}

/* Chain to store and validity now; purpose is X509_PURPOSE_SSL_CLIENT or
 * _SERVER (our certificates carry both usages). */
static int verify_chain(X509_STORE *store, X509 *leaf, int purpose, char *why, size_t whylen)
{
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    int ok = ctx && X509_STORE_CTX_init(ctx, store, leaf, NULL) == 1 &&
             X509_STORE_CTX_set_purpose(ctx, purpose) == 1 && X509_verify_cert(ctx) == 1;
    if (!ok)
        snprintf(why, whylen, "%s",
                 ctx ? X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx))
                     : "out of memory");
    X509_STORE_CTX_free(ctx);
    ERR_clear_error();
    return ok ? 0 : -1;
}

static X509_STORE *ca_store(const char *pem, const char *path, char *err, size_t errlen)
{
    X509_STORE *store = X509_STORE_new();
    BIO *bio = BIO_new_mem_buf(pem, -1);
    STACK_OF(X509_INFO) *infos = bio ? PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL) : NULL;
    int n = 0;
    for (int i = 0; store && infos && i < sk_X509_INFO_num(infos); i++) {
        X509_INFO *info = sk_X509_INFO_value(infos, i);
        if (info->x509 && X509_STORE_add_cert(store, info->x509) == 1)
            n++;
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    BIO_free(bio);
    ERR_clear_error();
    if (!store || n == 0) {
        snprintf(err, errlen, "CA file %s holds no PEM certificate", path);
        X509_STORE_free(store);
        return NULL;
    }
    return store;
}

/* Reads and checks the files; NULL with a message naming the file. */
static struct tls_material *material_load(const struct tls_files *f, bool internal,
                                          enum peer_role want, char *err, size_t errlen)
{
    struct tls_material *m = calloc(1, sizeof(*m));
    X509 *leaf = NULL;
    EVP_PKEY *key = NULL;
    BIO *bio = NULL;
    char why[256];
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (fs_read_file(f->cert, PEM_MAX, &m->cert_pem, NULL, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "certificate file %s: %s", f->cert, why);
        goto fail;
    }
    if (!(leaf = pem_certificate(m->cert_pem))) {
        snprintf(err, errlen, "certificate file %s: %s", f->cert, ssl_reason());
        goto fail;
    }
    if (!(m->key_pem = secret_file_load(f->key, "TLS key", PEM_MAX, err, errlen)))
        goto fail;
    if (!(bio = BIO_new_mem_buf(m->key_pem, -1)) ||
        !(key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL))) {
        snprintf(err, errlen, "key file %s: %s", f->key, ssl_reason());
        goto fail;
    }
    if (X509_check_private_key(leaf, key) != 1) {
        ERR_clear_error();
        snprintf(err, errlen, "key file %s does not match certificate %s", f->key, f->cert);
        goto fail;
    }
    if (!internal) {
        if (X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0 ||
            X509_cmp_current_time(X509_get0_notBefore(leaf)) >= 0) {
            snprintf(err, errlen, "certificate %s is not valid now (expired or not yet valid)",
                     f->cert);
            goto fail;
        }
        goto done;
    }
    if (fs_read_file(f->ca, PEM_MAX, &m->ca_pem, NULL, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "CA file %s: %s", f->ca, why);
        goto fail;
    }
    if (!(m->store = ca_store(m->ca_pem, f->ca, err, errlen)))
        goto fail;
    if (verify_chain(m->store, leaf, X509_PURPOSE_SSL_SERVER, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "certificate %s does not verify with CA %s: %s", f->cert, f->ca,
                 why);
        goto fail;
    }
    if (certificate_identity(leaf, &m->id) < 0) {
        snprintf(err, errlen,
                 "certificate %s names no airlock identity (one DNS name like"
                 " vault." PEER_IDENTITY_DOMAIN "; scripts/internal-pki.sh makes them)",
                 f->cert);
        goto fail;
    }
    if (want && m->id.role != want) {
        snprintf(err, errlen, "certificate %s is for a %s, not a %s", f->cert,
                 peer_role_name(m->id.role), peer_role_name(want));
        goto fail;
    }
done:
    X509_free(leaf);
    EVP_PKEY_free(key);
    BIO_free(bio);
    return m;
fail:
    X509_free(leaf);
    EVP_PKEY_free(key);
    BIO_free(bio);
    material_free(m);
    return NULL;
}

static struct tls_credentials *credentials_new(const struct tls_files *f, bool internal,
                                               enum peer_role want, char *err, size_t errlen)
{
    struct tls_credentials *t = calloc(1, sizeof(*t));
    if (!t || !(t->cert_path = strdup(f->cert)) || !(t->key_path = strdup(f->key)) ||
        (internal && !(t->ca_path = strdup(f->ca)))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    t->files = (struct tls_files){ .ca = t->ca_path, .cert = t->cert_path, .key = t->key_path };
    t->internal = internal;
    pthread_mutex_init(&t->mu, NULL);
    if (!(t->cur = material_load(&t->files, internal, want, err, errlen))) {
        pthread_mutex_destroy(&t->mu);
        goto fail;
    }
    t->id = t->cur->id;
    if (internal && !(t->verified = peer_cache_new())) {
        snprintf(err, errlen, "out of memory");
        tls_credentials_free(t);
        return NULL;
    }
    return t;
fail:
    if (t) {
        free(t->ca_path);
        free(t->cert_path);
        free(t->key_path);
        free(t);
    }
    return NULL;
}

bool tls_files_option(struct tls_files *f, int c, const char *arg)
{
    switch (c) {
    case INTERNAL_TLS_OPT_CA: f->ca = arg; return true;
    case INTERNAL_TLS_OPT_CERT: f->cert = arg; return true;
    case INTERNAL_TLS_OPT_KEY: f->key = arg; return true;
    default: return false;
    }
}

int tls_credentials_configure(const struct tls_files *flags, enum peer_role want, bool quiet,
                              struct tls_credentials **out, char *err, size_t errlen)
{
    const char *env_ca = getenv(INTERNAL_CA_ENV), *env_cert = getenv(INTERNAL_CERT_ENV),
               *env_key = getenv(INTERNAL_KEY_ENV);
    struct tls_files f = {
        .ca = flags->ca ? flags->ca : (env_ca && *env_ca ? env_ca : NULL),
        .cert = flags->cert ? flags->cert : (env_cert && *env_cert ? env_cert : NULL),
        .key = flags->key ? flags->key : (env_key && *env_key ? env_key : NULL),
    };
    *out = NULL;
    if (!f.ca && !f.cert && !f.key) {
        if (!quiet)
            log_warn("internal API runs without TLS",
                 "hint=\"pass --internal-ca, --internal-cert and --internal-key"
                 " (scripts/internal-pki.sh makes them)\"");
        return 0;
    }
    if (!f.ca || !f.cert || !f.key) {
        snprintf(err, errlen, "--internal-ca, --internal-cert and --internal-key go together"
                              " (env " INTERNAL_CA_ENV ", " INTERNAL_CERT_ENV ", "
                              INTERNAL_KEY_ENV ")");
        return -1;
    }
    *out = credentials_new(&f, true, want, err, errlen);
    if (!*out)
        return -1;
    char text[PEER_IDENTITY_TEXT_MAX];
    if (!quiet)
        log_info("internal TLS", "identity=%s cert=%s",
             peer_identity_text(&(*out)->id, text, sizeof(text)), f.cert);
    return 0;
}

struct tls_credentials *tls_credentials_load_public(const struct tls_files *files, char *err,
                                                   size_t errlen)
{
    return credentials_new(files, false, 0, err, errlen);
}

int tls_credentials_reload(struct tls_credentials *t, char *err, size_t errlen)
{
    pthread_mutex_lock(&t->mu);
    enum peer_role role = t->cur->id.role;
    struct tls_material *m = material_load(&t->files, t->internal, role, err, errlen);
    if (m && t->internal && strcmp(m->id.node, t->cur->id.node) != 0) {
        snprintf(err, errlen, "certificate %s names node %s, not %s as before", t->files.cert,
                 m->id.node, t->cur->id.node);
        material_free(m);
        m = NULL;
    }
    if (!m) {
        pthread_mutex_unlock(&t->mu);
        return -1;
    }
    material_free(t->cur);
    t->cur = m;
    atomic_fetch_add(&t->generation, 1);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

/* Whether path holds exactly pem as it was read (NULL: the file does not
 * matter); the key is read as material_load reads it. */
static bool file_is(const char *path, const char *pem, bool key)
{
    char *now = NULL;
    if (!pem || !path)
        return true;
    if (key)
        now = secret_file_load(path, "TLS key", PEM_MAX, NULL, 0);
    else if (fs_read_file(path, PEM_MAX, &now, NULL, NULL, 0) < 0)
        now = NULL;
    bool same = now && strcmp(now, pem) == 0;
    secret_free(now);
    return same;
}

int tls_credentials_refresh(struct tls_credentials *t)
{
    char err[1024];
    if (!t)
        return 0;
    pthread_mutex_lock(&t->mu);
    bool same = file_is(t->files.cert, t->cur->cert_pem, false) &&
                file_is(t->files.key, t->cur->key_pem, true) &&
                file_is(t->files.ca, t->cur->ca_pem, false);
    pthread_mutex_unlock(&t->mu);
    if (same)
        return 0;
    if (tls_credentials_reload(t, err, sizeof(err)) < 0) {
        log_error("TLS certificate not reloaded", "error=\"%s\"", err);
        return -1;
    }
    log_info("TLS certificate reloaded", "cert=%s generation=%u", t->files.cert,
             tls_credentials_generation(t));
    return 1;
}

void tls_credentials_refresh_cb(void *arg)
{
    tls_credentials_refresh(arg);
}

void tls_credentials_free(struct tls_credentials *t)
{
    if (!t)
        return;
    material_free(t->cur);
    peer_cache_free(t->verified);
    while (t->fetchers) {
        struct server_fetch *next = t->fetchers->next;
        free(t->fetchers);
        t->fetchers = next;
    }
    pthread_mutex_destroy(&t->mu);
    free(t->ca_path);
    free(t->cert_path);
    free(t->key_path);
    free(t);
}

const struct peer_identity *tls_credentials_identity(const struct tls_credentials *t)
{
    return &t->id;
}

bool tls_credentials_internal(const struct tls_credentials *t)
{
    return t->internal;
}

const struct tls_files *tls_credentials_files(const struct tls_credentials *t)
{
    return &t->files;
}

unsigned tls_credentials_generation(const struct tls_credentials *t)
{
    return atomic_load(&((struct tls_credentials *)t)->generation);
}

static grpc_ssl_certificate_config_reload_status fetch_server_config(
    void *user, grpc_ssl_server_certificate_config **config)
{
    struct server_fetch *f = user;
    struct tls_credentials *t = f->t;
    pthread_mutex_lock(&t->mu);
    unsigned gen = atomic_load(&t->generation);
    if (f->any && f->served == gen) {
        pthread_mutex_unlock(&t->mu);
        return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
    }
    grpc_ssl_pem_key_cert_pair pair = { .private_key = t->cur->key_pem,
                                        .cert_chain = t->cur->cert_pem };
    /* gRPC's reloading server wants client roots even when it asks for no
     * client certificate (public credentials): the unused roots are then
     * the server's own chain. */
    const char *roots = t->internal ? t->cur->ca_pem : t->cur->cert_pem;
    *config = grpc_ssl_server_certificate_config_create(roots, &pair, 1);
    if (*config) {
        f->served = gen;
        f->any = true;
    }
    pthread_mutex_unlock(&t->mu);
    return *config ? GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW
                   : GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_FAIL;
}

grpc_server_credentials *tls_credentials_server(struct tls_credentials *t)
{
    struct server_fetch *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->t = t;
    pthread_mutex_lock(&t->mu);
    f->next = t->fetchers;
    t->fetchers = f;
    pthread_mutex_unlock(&t->mu);
    /* Internal: ask for a certificate but check it per call, where the
     * refusal can name the caller, its identity and the reason. */
    grpc_ssl_client_certificate_request_type request =
        t->internal ? GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY
                    : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
    grpc_ssl_server_credentials_options *opts =
        grpc_ssl_server_credentials_create_options_using_config_fetcher(request,
                                                                        fetch_server_config, f);
    return opts ? grpc_ssl_server_credentials_create_with_options(opts) : NULL;
}

grpc_channel_credentials *tls_credentials_channel(struct tls_credentials *t,
                                                  unsigned *generation)
{
    pthread_mutex_lock(&t->mu);
    grpc_ssl_pem_key_cert_pair pair = { .private_key = t->cur->key_pem,
                                        .cert_chain = t->cur->cert_pem };
    grpc_channel_credentials *creds =
        grpc_ssl_credentials_create_ex(t->cur->ca_pem, &pair, NULL, NULL);
    *generation = atomic_load(&t->generation);
    pthread_mutex_unlock(&t->mu);
    return creds;
}

/* When a certificate stops being valid, as a time_t; 0 when unreadable. */
static time_t not_after_of(X509 *x)
{
    struct tm tm;
    if (ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) != 1)
        return 0;
    return timegm(&tm);
}

int tls_credentials_verify_peer(struct tls_credentials *t, const char *pem,
                                struct peer_identity *id, char *why, size_t whylen)
{
    unsigned generation = tls_credentials_generation(t);
    if (pem && t->verified && peer_cache_get(t->verified, pem, generation, time(NULL), id))
        return 0;
    X509 *leaf = pem ? pem_certificate(pem) : NULL;
    if (!leaf) {
        ERR_clear_error();
        snprintf(why, whylen, "no client certificate");
        return -1;
    }
    pthread_mutex_lock(&t->mu);
    X509_STORE *store = t->cur->store;
    X509_STORE_up_ref(store);
    pthread_mutex_unlock(&t->mu);
    int rc = verify_chain(store, leaf, X509_PURPOSE_SSL_CLIENT, why, whylen);
    if (rc == 0 && certificate_identity(leaf, id) < 0) {
        snprintf(why, whylen, "certificate names no airlock identity");
        rc = -1;
    }
    if (rc == 0 && t->verified)
        peer_cache_put(t->verified, pem, generation, not_after_of(leaf), id);
    X509_STORE_free(store);
    X509_free(leaf);
    return rc;
}
