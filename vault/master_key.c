#include "master_key.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto.h"
#include "fsutil.h"

static int master_key_create(const char *path, unsigned char *key, char *err, size_t errlen)
{
    if (RAND_bytes(key, VAULT_KEY_BYTES) != 1) {
        snprintf(err, errlen, "master key: no randomness");
        return -1;
    }
    /* O_EXCL: two vaults starting at once must not each write a key. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "master key %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = fs_write_all(fd, key, VAULT_KEY_BYTES) == 0 && fsync(fd) == 0 ? 0 : -1;
    if (rc < 0)
        snprintf(err, errlen, "master key %s: write: %s", path, strerror(errno));
    close(fd);
    return rc;
}

int master_key_load(const char *path, unsigned char *key, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return master_key_create(path, key, err, errlen);
    if (fd < 0) {
        snprintf(err, errlen, "master key %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || (st.st_mode & 077) != 0) {
        snprintf(err, errlen, "master key %s: must be a file only its owner can read (chmod 600)",
                 path);
        goto out;
    }
    if (st.st_size != VAULT_KEY_BYTES ||
        read(fd, key, VAULT_KEY_BYTES) != VAULT_KEY_BYTES) {
        snprintf(err, errlen, "master key %s: must hold exactly %d bytes", path, VAULT_KEY_BYTES);
        goto out;
    }
    rc = 0;
out:
    close(fd);
    return rc;
}
