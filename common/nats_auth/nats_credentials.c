/* A service's NATS user (nats_credentials.h). */
#include "nats_credentials.h"

#include <openssl/crypto.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "secret_file.h"
#include "tls_credentials.h"

#define NATS_USER_MAX_LEN 127
#define NATS_CREDENTIALS_MAX_LEN 1024

/* As the internal token's: nothing nats-server's config would need quoted. */
static bool password_char_ok(char c)
{
    return c > ' ' && c <= '~' && c != '"' && c != '\\';
}

static int check(const char *path, const char *user, size_t user_len, const char *password,
                 char *err, size_t errlen)
{
    if (user_len == 0 || user_len > NATS_USER_MAX_LEN ||
        strspn(user, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
            user_len) {
        snprintf(err, errlen,
                 "NATS credentials in %s: the user (before the first ':') must be 1..%d"
                 " characters of [A-Za-z0-9_.-]", path, NATS_USER_MAX_LEN);
        return -1;
    }
    size_t len = strlen(password);
    if (len < NATS_PASSWORD_MIN_LEN) {
        snprintf(err, errlen, "NATS credentials in %s: the password has %zu characters, at least"
                 " %d are needed", path, len, NATS_PASSWORD_MIN_LEN);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (!password_char_ok(password[i])) {
            snprintf(err, errlen, "NATS credentials in %s: the password has a character at"
                     " offset %zu that is not printable ASCII (or is a space, quote or"
                     " backslash)", path, i);
            return -1;
        }
    }
    return 0;
}

int nats_credentials_load(const char *path, struct nats_credentials *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->path, sizeof(c->path), "%s", path);
    char *text = secret_file_load(path, "NATS credentials", NATS_CREDENTIALS_MAX_LEN, err, errlen);
    if (!text)
        return -1;
    char *colon = strchr(text, ':');
    if (!colon) {
        snprintf(err, errlen, "NATS credentials file %s: want one line user:password", path);
        secret_free(text);
        return -1;
    }
    *colon = '\0';
    if (check(path, text, strlen(text), colon + 1, err, errlen) < 0 ||
        !(c->user = strdup(text)) || !(c->password = strdup(colon + 1))) {
        if (!c->user || !c->password)
            snprintf(err, errlen, "out of memory");
        *colon = ':';
        secret_free(text);
        nats_credentials_free(c);
        return -1;
    }
    *colon = ':';
    secret_free(text);
    return 0;
}

int nats_credentials_configure(const char *path, struct nats_credentials *c, char *err,
                               size_t errlen)
{
    if (path && *path)
        return nats_credentials_load(path, c, err, errlen);
    memset(c, 0, sizeof(*c));
    log_warn("nats connection is unauthenticated", "hint=\"pass --nats-credentials-file\"");
    return 0;
}

void nats_credentials_free(struct nats_credentials *c)
{
    free(c->user);
    secret_free(c->password);
    c->user = c->password = NULL;
}

/* NATS.c 3.4's exit handler frees a part of OpenSSL's state (its list of
 * compression methods, made with the first TLS context) and OpenSSL's own
 * exit handler frees it again when it ran after NATS.c's — that is, when
 * OpenSSL was set up before NATS.c (by gRPC or tls_credentials): the heap
 * is corrupt at exit and the service dies of SIGSEGV or SIGABRT instead of
 * exiting 0. OpenSSL decides at its first initialisation whether to have
 * an exit handler; this runs before main in every program that speaks to
 * NATS, so there is none: the process is ending, the one free is enough. */
__attribute__((constructor)) static void openssl_without_exit_handler(void)
{
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

void nats_credentials_use_tls(struct nats_credentials *c, const struct tls_credentials *t)
{
    c->tls = t ? tls_credentials_files(t) : NULL;
}

/* The internal CA both ways: nats-server must be NATS_SERVER_DNS whatever
 * host the URL names (an address, a Service name), and it gets ours. */
static natsStatus apply_tls(natsOptions *opts, const struct tls_files *f)
{
    natsStatus st = natsOptions_SetSecure(opts, true);
    if (st == NATS_OK)
        st = natsOptions_LoadCATrustedCertificates(opts, f->ca);
    if (st == NATS_OK)
        st = natsOptions_LoadCertificatesChain(opts, f->cert, f->key);
    if (st == NATS_OK)
        st = natsOptions_SetExpectedHostname(opts, NATS_SERVER_DNS);
    return st;
}

static void on_nats_error(natsConnection *nc, natsSubscription *sub, natsStatus st, void *closure)
{
    const struct nats_credentials *c = closure;
    const char *text = NULL;
    natsConnection_GetLastError(nc, &text);
    const char *subject = sub ? natsSubscription_GetSubject(sub) : NULL;
    log_warn("nats refused", "user=%s status=\"%s\" error=\"%s\"%s%s",
             c->user ? c->user : "-", natsStatus_GetText(st), text && *text ? text : "-",
             subject ? " subscription=" : "", subject ? subject : "");
}

natsStatus nats_credentials_apply(natsOptions *opts, const struct nats_credentials *c)
{
    natsStatus st = NATS_OK;
    if (c->user)
        st = natsOptions_SetUserInfo(opts, c->user, c->password);
    if (st == NATS_OK && c->tls)
        st = apply_tls(opts, c->tls);
    if (st == NATS_OK)
        st = natsOptions_SetErrorHandler(opts, on_nats_error, (void *)c);
    return st;
}

void nats_connect_error(const struct nats_credentials *c, const char *url, natsStatus st,
                        natsConnection *nc, char *err, size_t errlen)
{
    /* A failed connect leaves no connection: its error is the thread's. */
    const char *text = NULL;
    if (nc)
        natsConnection_GetLastError(nc, &text);
    else
        text = nats_GetLastError(NULL);
    if (!text || !*text)
        text = natsStatus_GetText(st);
    /* NATS.c starts TLS itself when the server requires it, and without
     * our CA fails to verify the server. */
    if (st == NATS_SECURE_CONNECTION_REQUIRED || (st == NATS_SSL_ERROR && !c->tls))
        snprintf(err, errlen, "nats %s: %s: the server wants TLS with a certificate of the"
                 " internal CA (--internal-ca, --internal-cert, --internal-key)", url, text);
    else if (st == NATS_SECURE_CONNECTION_WANTED)
        snprintf(err, errlen, "nats %s: %s: this service has internal TLS, the server does not"
                 " serve TLS (scripts/nats-users.sh --tls)", url, text);
    else if (st == NATS_SSL_ERROR && c->tls)
        snprintf(err, errlen, "nats %s: %s: the server must present " NATS_SERVER_DNS " of"
                 " the CA in %s and accept the certificate %s", url, text, c->tls->ca,
                 c->tls->cert);
    else if (st != NATS_CONNECTION_AUTH_FAILED && st != NATS_NOT_PERMITTED)
        snprintf(err, errlen, "nats %s: %s", url, text);
    else if (c->user)
        snprintf(err, errlen, "nats %s: %s: the server refused user %s (wrong password in %s,"
                 " or nats-server's config lacks the user)", url, text, c->user, c->path);
    else
        snprintf(err, errlen, "nats %s: %s: the server wants credentials"
                 " (--nats-credentials-file)", url, text);
}
