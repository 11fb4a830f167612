/* Loading the shared internal token (internal_token.h). */
#include "internal_token.h"

#include "log.h"
#include "secret_file.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Visible ASCII except the characters that would need quoting in
 * nats-server's config or break an HTTP header value. */
static bool token_char_ok(char c)
{
    return c > ' ' && c <= '~' && c != '"' && c != '\\';
}

char *internal_token_load(const char *path, char *err, size_t errlen)
{
    char *token = secret_file_load(path, "internal token", INTERNAL_TOKEN_MAX_LEN, err, errlen);
    if (!token)
        return NULL;
    size_t len = strlen(token);
    if (len < INTERNAL_TOKEN_MIN_LEN) {
        snprintf(err, errlen, "internal token in %s has %zu characters, at least %d are needed",
                 path, len, INTERNAL_TOKEN_MIN_LEN);
        secret_free(token);
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        if (!token_char_ok(token[i])) {
            snprintf(err, errlen,
                     "internal token in %s has a character at offset %zu that is not printable"
                     " ASCII (or is a space, quote or backslash)", path, i);
            secret_free(token);
            return NULL;
        }
    }
    return token;
}

int internal_token_configure(const char *path, char **token, char *err, size_t errlen)
{
    *token = NULL;
    if (!path || !*path) {
        const char *env = getenv(INTERNAL_TOKEN_ENV);
        path = env && *env ? env : NULL;
    }
    if (!path) {
        log_warn("internal API is unauthenticated",
                 "hint=\"pass --internal-token-file (env " INTERNAL_TOKEN_ENV ")\"");
        return 0;
    }
    *token = internal_token_load(path, err, errlen);
    return *token ? 0 : -1;
}
