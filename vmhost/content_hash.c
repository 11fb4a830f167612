#include "content_hash.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int content_hash_init(struct content_hash *h, char *err, size_t errlen)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        snprintf(err, errlen, "sha256: cannot initialise OpenSSL digest");
        return -1;
    }
    h->ctx = ctx;
    return 0;
}

static void add_header(struct content_hash *h, const char *label, uint64_t len)
{
    char header[256];
    int n = snprintf(header, sizeof(header), "%s:%llu:", label, (unsigned long long)len);
    EVP_DigestUpdate(h->ctx, header, (size_t)n);
}

void content_hash_add(struct content_hash *h, const char *label, const void *data, size_t len)
{
    add_header(h, label, len);
    EVP_DigestUpdate(h->ctx, data, len);
}

void content_hash_add_str(struct content_hash *h, const char *label, const char *s)
{
    content_hash_add(h, label, s, strlen(s));
}

int content_hash_add_file(struct content_hash *h, const char *label, const char *path, char *err,
                        size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "read %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    add_header(h, label, (uint64_t)st.st_size);
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "read %s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        EVP_DigestUpdate(h->ctx, buf, (size_t)n);
    }
    close(fd);
    return 0;
}

void content_hash_final(struct content_hash *h, char hex[65])
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_DigestFinal_ex(h->ctx, md, &mdlen);
    for (unsigned i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    content_hash_free(h);
}

void content_hash_free(struct content_hash *h)
{
    EVP_MD_CTX_free(h->ctx);
    h->ctx = NULL;
}
