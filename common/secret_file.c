/* Reading a secret from a private file (secret_file.h). */
#include "secret_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads at most max bytes of the open file; the mode is checked on the same
 * descriptor, so a file swapped after the check is never read. */
static ssize_t read_private_fd(int fd, const char *path, const char *what, char *buf, size_t max,
                               char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        snprintf(err, errlen, "%s file %s: %s", what, path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s file %s is not a regular file", what, path);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen,
                 "%s file %s has mode %04o: group and others must not have access"
                 " (chmod 600 %s)", what, path, (unsigned)(st.st_mode & 07777), path);
        return -1;
    }
    size_t len = 0;
    while (len < max) {
        ssize_t n = read(fd, buf + len, max - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s file %s: %s", what, path, strerror(errno));
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    return (ssize_t)len;
}

char *secret_file_load(const char *path, const char *what, size_t max, char *err, size_t errlen)
{
    /* Two bytes for a \r\n, one more to tell "too long". */
    size_t size = max + 3;
    char *buf = malloc(size), *text = NULL;
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s file %s: %s", what, path, strerror(errno));
        free(buf);
        return NULL;
    }
    ssize_t n = read_private_fd(fd, path, what, buf, size, err, errlen);
    close(fd);
    if (n < 0)
        goto cleanup;
    size_t len = (size_t)n;
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    if (len == 0) {
        snprintf(err, errlen, "%s file %s is empty", what, path);
        goto cleanup;
    }
    if (memchr(buf, '\0', len)) {
        snprintf(err, errlen, "%s in %s contains a NUL byte", what, path);
        goto cleanup;
    }
    if (len > max) {
        snprintf(err, errlen, "%s in %s is longer than %zu characters", what, path, max);
        goto cleanup;
    }
    text = strndup(buf, len);
    if (!text)
        snprintf(err, errlen, "out of memory");
cleanup:
    explicit_bzero(buf, size);
    free(buf);
    return text;
}

void secret_free(char *secret)
{
    if (secret) {
        explicit_bzero(secret, strlen(secret));
        free(secret);
    }
}
