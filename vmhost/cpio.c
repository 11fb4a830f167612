#include "cpio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CPIO_NEWC_MAGIC "070701"
#define CPIO_FILE_MAX (1u << 30) /* newc sizes are 32-bit; initramfs files are small */

static void fail(struct cpio_writer *w, const char *what, const char *name)
{
    if (!w->error[0])
        snprintf(w->error, sizeof(w->error), "cpio %s: %s %s: %s", w->path, what, name,
                 errno ? strerror(errno) : "failed");
}

static void pad4(struct cpio_writer *w, size_t written)
{
    static const char zeros[4];
    size_t pad = (4 - written % 4) % 4;
    if (pad)
        fwrite(zeros, 1, pad, w->out);
}

/* Header + name, padded so that the data starts 4-byte aligned. */
static void write_header(struct cpio_writer *w, const char *name, mode_t mode, size_t size,
                         unsigned rdev_major, unsigned rdev_minor)
{
    size_t namesize = strlen(name) + 1;
    unsigned ino = strcmp(name, "TRAILER!!!") == 0 ? 0 : ++w->next_ino;
    unsigned nlink = S_ISDIR(mode) ? 2 : 1;
    /* Every field is 8 hex digits; callers keep sizes below CPIO_FILE_MAX. */
    char header[128];
    snprintf(header, sizeof(header), "%s%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
             CPIO_NEWC_MAGIC, ino, (unsigned)mode, 0u, 0u, nlink, 0u, (unsigned)size, 0u, 0u,
             rdev_major, rdev_minor, (unsigned)namesize, 0u);
    fwrite(header, 1, 110, w->out);
    fwrite(name, 1, namesize, w->out);
    pad4(w, 110 + namesize);
}

static int entry_ok(struct cpio_writer *w, const char *name)
{
    if (w->error[0] || !w->out)
        return 0;
    if (!name || !*name || name[0] == '/') {
        errno = EINVAL;
        fail(w, "bad entry name", name ? name : "(null)");
        return 0;
    }
    return 1;
}

void cpio_add_dir(struct cpio_writer *w, const char *name, mode_t perm)
{
    if (entry_ok(w, name))
        write_header(w, name, S_IFDIR | (perm & 07777), 0, 0, 0);
}

void cpio_add_file(struct cpio_writer *w, const char *name, mode_t perm, const void *data,
                   size_t len)
{
    if (!entry_ok(w, name))
        return;
    if (len > CPIO_FILE_MAX) {
        errno = EFBIG;
        fail(w, "add", name);
        return;
    }
    write_header(w, name, S_IFREG | (perm & 07777), len, 0, 0);
    fwrite(data, 1, len, w->out);
    pad4(w, len);
}

void cpio_add_file_from(struct cpio_writer *w, const char *name, mode_t perm,
                        const char *src_path)
{
    if (!entry_ok(w, name))
        return;
    FILE *in = fopen(src_path, "rbe");
    struct stat st;
    if (!in || fstat(fileno(in), &st) < 0) {
        fail(w, "read", src_path);
        goto out;
    }
    if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size > CPIO_FILE_MAX) {
        errno = EINVAL;
        fail(w, "not a regular file of sane size:", src_path);
        goto out;
    }
    size_t size = (size_t)st.st_size;
    write_header(w, name, S_IFREG | (perm & 07777), size, 0, 0);
    char buf[1 << 16];
    size_t copied = 0, n;
    while (copied < size && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
        if (n > size - copied)
            n = size - copied; /* the file grew while we copied: keep the header honest */
        fwrite(buf, 1, n, w->out);
        copied += n;
    }
    if (copied != size) {
        errno = EIO;
        fail(w, "short read of", src_path);
        goto out;
    }
    pad4(w, size);
out:
    if (in)
        fclose(in);
}

void cpio_add_symlink(struct cpio_writer *w, const char *name, const char *target)
{
    if (!entry_ok(w, name))
        return;
    size_t len = strlen(target);
    write_header(w, name, S_IFLNK | 0777, len, 0, 0);
    fwrite(target, 1, len, w->out);
    pad4(w, len);
}

void cpio_add_chardev(struct cpio_writer *w, const char *name, mode_t perm, unsigned major,
                      unsigned minor)
{
    if (entry_ok(w, name))
        write_header(w, name, S_IFCHR | (perm & 07777), 0, major, minor);
}

int cpio_writer_open(struct cpio_writer *w, const char *path, char *err, size_t errlen)
{
    memset(w, 0, sizeof(*w));
    w->path = path;
    w->out = fopen(path, "wbe");
    if (!w->out) {
        snprintf(err, errlen, "cpio: create %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int cpio_writer_close(struct cpio_writer *w, char *err, size_t errlen)
{
    if (!w->out) {
        snprintf(err, errlen, "cpio %s: not open", w->path ? w->path : "");
        return -1;
    }
    if (!w->error[0]) {
        write_header(w, "TRAILER!!!", 0, 0, 0, 0);
        errno = 0;
        if (ferror(w->out) || fflush(w->out) != 0 || fsync(fileno(w->out)) < 0)
            fail(w, "write", "archive");
    }
    if (fclose(w->out) != 0)
        fail(w, "close", "archive");
    w->out = NULL;
    if (w->error[0]) {
        snprintf(err, errlen, "%s", w->error);
        return -1;
    }
    return 0;
}
