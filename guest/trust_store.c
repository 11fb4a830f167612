#include "trust_store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "guest_fs.h"

#define BUNDLE_MAX (8u << 20)
#define PEM_BEGIN "-----BEGIN CERTIFICATE-----\n"
#define PEM_END "-----END CERTIFICATE-----\n"

static bool pem_valid(const char *pem, size_t len)
{
    if (len < strlen(PEM_BEGIN) + strlen(PEM_END) || len > TRUST_STORE_PEM_MAX ||
        strncmp(pem, PEM_BEGIN, strlen(PEM_BEGIN)) != 0 ||
        strcmp(pem + len - strlen(PEM_END), PEM_END) != 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (pem[i] != '\n' && (pem[i] < 0x20 || pem[i] > 0x7e))
            return false;
    return true;
}

/* Temp file + rename, without fsync: every session writes it again, so a
 * write lost in a guest crash is redone, and fsync under TCG would cost
 * milliseconds of every hand-out. */
static int replace_file(const char *path, const char *a, size_t alen, const char *b, size_t blen,
                        char *msg, size_t msglen)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.airlock-tmp", path) >= (int)sizeof(tmp)) {
        snprintf(msg, msglen, "trust store: path too long: %s", path);
        return ENAMETOOLONG;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    int err = 0;
    if (fd < 0 || fs_write_all(fd, a, alen) < 0 || fs_write_all(fd, b, blen) < 0)
        err = errno;
    if (fd >= 0 && close(fd) < 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) < 0)
        err = errno;
    if (err) {
        unlink(tmp);
        snprintf(msg, msglen, "trust store: write %s: %s", path, strerror(err));
    }
    return err;
}

static int make_parent_dir(const char *path, char *msg, size_t msglen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    if (mkdir_parents(dir, 0755) < 0) {
        int err = errno;
        snprintf(msg, msglen, "trust store: mkdir %s: %s", dir, strerror(err));
        return err;
    }
    return 0;
}

int trust_store_install_ca(const char *pem, const char *bundle, const char *ca_file, char *msg,
                           size_t msglen)
{
    size_t pem_len = strlen(pem);
    if (!pem_valid(pem, pem_len)) {
        snprintf(msg, msglen, "trust store: not one PEM certificate of at most %d bytes",
                 TRUST_STORE_PEM_MAX);
        return EINVAL;
    }
    char *old = NULL, ferr[256];
    size_t old_len = 0;
    /* A rootfs without ca-certificates gets a bundle of the sandbox CA. */
    if (access(bundle, F_OK) == 0 &&
        fs_read_file(bundle, BUNDLE_MAX, &old, &old_len, ferr, sizeof(ferr)) < 0) {
        snprintf(msg, msglen, "trust store: %s", ferr);
        return EIO;
    }
    /* The block an earlier session appended, if any, ends the file. */
    size_t keep = old_len;
    const char *block = old ? strstr(old, TRUST_STORE_MARKER) : NULL;
    if (block && (block == old || block[-1] == '\n'))
        keep = (size_t)(block - old);
    size_t marker_len = strlen(TRUST_STORE_MARKER);
    bool same = block && old_len - keep == marker_len + pem_len &&
                memcmp(old + keep + marker_len, pem, pem_len) == 0;
    int err = 0;
    if (!same) {
        char *head = malloc(keep + marker_len + 1);
        if (!head) {
            free(old);
            snprintf(msg, msglen, "trust store: out of memory");
            return ENOMEM;
        }
        if (keep)
            memcpy(head, old, keep);
        size_t head_len = keep;
        /* A bundle that does not end its last line would glue the marker
         * onto it. */
        if (head_len && head[head_len - 1] != '\n')
            head[head_len++] = '\n';
        memcpy(head + head_len, TRUST_STORE_MARKER, marker_len);
        head_len += marker_len;
        err = make_parent_dir(bundle, msg, msglen);
        if (!err)
            err = replace_file(bundle, head, head_len, pem, pem_len, msg, msglen);
        free(head);
        if (!err)
            err = make_parent_dir(ca_file, msg, msglen);
        if (!err)
            err = replace_file(ca_file, pem, pem_len, "", 0, msg, msglen);
    }
    free(old);
    return err;
}
