/* Loading the shared internal token (internal_token.h). */
#include "internal_token.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Visible ASCII except the characters that would need quoting in
 * nats-server's config or break an HTTP header value. */
static bool token_char_ok(char c)
{
    return c > ' ' && c <= '~' && c != '"' && c != '\\';
}

/* Reads at most max bytes of the open file; the mode is checked on the same
 * descriptor, so a file swapped after the check is never read. Symlinks are
 * followed: Kubernetes mounts Secret keys as links into a ..data dir. */
static ssize_t token_read_fd(int fd, const char *path, char *buf, size_t max, char *err,
                             size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        snprintf(err, errlen, "internal token file %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "internal token file %s is not a regular file", path);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen,
                 "internal token file %s has mode %04o: group and others must not have access"
                 " (chmod 600 %s)", path, (unsigned)(st.st_mode & 07777), path);
        return -1;
    }
    size_t len = 0;
    while (len < max) {
        ssize_t n = read(fd, buf + len, max - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "internal token file %s: %s", path, strerror(errno));
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    return (ssize_t)len;
}

char *internal_token_load(const char *path, char *err, size_t errlen)
{
    /* One byte more than a token may have with its newline: tells "too long". */
    char buf[INTERNAL_TOKEN_MAX_LEN + 3];
    char *token = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "internal token file %s: %s", path, strerror(errno));
        return NULL;
    }
    ssize_t n = token_read_fd(fd, path, buf, sizeof(buf), err, errlen);
    if (n < 0)
        goto cleanup;
    size_t len = (size_t)n;
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    if (len == 0) {
        snprintf(err, errlen, "internal token file %s is empty", path);
        goto cleanup;
    }
    if (len > INTERNAL_TOKEN_MAX_LEN) {
        snprintf(err, errlen, "internal token in %s is longer than %d characters", path,
                 INTERNAL_TOKEN_MAX_LEN);
        goto cleanup;
    }
    if (len < INTERNAL_TOKEN_MIN_LEN) {
        snprintf(err, errlen, "internal token in %s has %zu characters, at least %d are needed",
                 path, len, INTERNAL_TOKEN_MIN_LEN);
        goto cleanup;
    }
    for (size_t i = 0; i < len; i++) {
        if (!token_char_ok(buf[i])) {
            snprintf(err, errlen,
                     "internal token in %s has a character at offset %zu that is not printable"
                     " ASCII (or is a space, quote or backslash)", path, i);
            goto cleanup;
        }
    }
    token = strndup(buf, len);
    if (!token)
        snprintf(err, errlen, "out of memory");
cleanup:
    explicit_bzero(buf, sizeof(buf));
    close(fd);
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
