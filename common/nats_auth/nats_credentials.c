/* A service's NATS user (nats_credentials.h). */
#include "nats_credentials.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "secret_file.h"

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
    if (st != NATS_CONNECTION_AUTH_FAILED && st != NATS_NOT_PERMITTED)
        snprintf(err, errlen, "nats %s: %s", url, text);
    else if (c->user)
        snprintf(err, errlen, "nats %s: %s: the server refused user %s (wrong password in %s,"
                 " or nats-server's config lacks the user)", url, text, c->user, c->path);
    else
        snprintf(err, errlen, "nats %s: %s: the server wants credentials"
                 " (--nats-credentials-file)", url, text);
}
