/* The delta format's writer (used by file_delta_blocks.c and
 * file_delta_pages.c) and its reader, file_delta_apply. */
#include "file_delta_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

#define DELTA_OUT_BUF (1u << 20)
#define DELTA_LITERAL_RUN (1u << 20) /* a 'D' record carries at most this */
#define DELTA_READ_CHUNK (1u << 20)

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void sha_hex(EVP_MD_CTX *sha, char hex[65])
{
    unsigned char md[32];
    unsigned len = 0;
    EVP_DigestFinal_ex(sha, md, &len);
    for (unsigned i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

bool delta_page_is_zero(const unsigned char *p, size_t len)
{
    return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

/* ---- writer ---- */

static void fail(struct delta_writer *w, const char *what)
{
    if (!w->failed) {
        w->failed_errno = errno;
        snprintf(w->err, w->errlen, "write the delta: %s: %s", what, strerror(errno));
    }
    w->failed = true;
}

static void flush_out(struct delta_writer *w)
{
    if (w->failed || !w->out_len)
        return;
    if (fs_write_all(w->fd, w->out, w->out_len) < 0)
        fail(w, "write");
    w->stats->delta_bytes += w->out_len;
    w->out_len = 0;
}

/* len bytes into buf (*used of cap taken), flush(w) each time it fills. */
static void append(struct delta_writer *w, unsigned char *buf, size_t *used, size_t cap,
                   const void *data, size_t len, void (*flush)(struct delta_writer *))
{
    const unsigned char *p = data;
    while (len && !w->failed) {
        size_t n = cap - *used < len ? cap - *used : len;
        memcpy(buf + *used, p, n);
        *used += n;
        p += n;
        len -= n;
        if (*used == cap)
            flush(w);
    }
}

static void emit(struct delta_writer *w, const void *data, size_t len)
{
    EVP_DigestUpdate(w->sha, data, len);
    append(w, w->out, &w->out_len, DELTA_OUT_BUF, data, len, flush_out);
}

static void emit_record(struct delta_writer *w, char type, uint64_t a, uint64_t b, int nargs)
{
    unsigned char rec[17];
    rec[0] = (unsigned char)type;
    put_u64(rec + 1, a);
    put_u64(rec + 9, b);
    emit(w, rec, 1 + 8 * (size_t)nargs);
}

static void flush_literal(struct delta_writer *w)
{
    if (!w->lit_len)
        return;
    emit_record(w, 'D', w->lit_len, 0, 1);
    emit(w, w->lit, w->lit_len);
    w->lit_len = 0;
}

static void flush_pending(struct delta_writer *w)
{
    if (w->pending == 'C')
        emit_record(w, 'C', w->pending_off, w->pending_len, 2);
    else if (w->pending == 'Z')
        emit_record(w, 'Z', w->pending_len, 0, 1);
    w->pending = 0;
}

int delta_writer_open(struct delta_writer *w, int fd, uint64_t target_size,
                      struct file_delta_stats *stats, char *err, size_t errlen)
{
    memset(w, 0, sizeof(*w));
    memset(stats, 0, sizeof(*stats));
    w->fd = fd;
    w->stats = stats;
    w->err = err;
    w->errlen = errlen;
    w->sha = EVP_MD_CTX_new();
    w->out = malloc(DELTA_OUT_BUF);
    w->lit = malloc(DELTA_LITERAL_RUN);
    if (!w->sha || !w->out || !w->lit || EVP_DigestInit_ex(w->sha, EVP_sha256(), NULL) != 1) {
        delta_writer_abort(w);
        snprintf(err, errlen, "write the delta: out of memory");
        return -1;
    }
    stats->target_bytes = target_size;
    unsigned char size[8];
    put_u64(size, target_size);
    emit(w, FILE_DELTA_MAGIC, FILE_DELTA_MAGIC_LEN);
    emit(w, size, sizeof(size));
    return 0;
}

void delta_writer_literal(struct delta_writer *w, const void *data, size_t len)
{
    flush_pending(w);
    w->stats->literal_bytes += len;
    append(w, w->lit, &w->lit_len, DELTA_LITERAL_RUN, data, len, flush_literal);
}

void delta_writer_copy(struct delta_writer *w, uint64_t base_off, uint64_t len)
{
    flush_literal(w);
    w->stats->copied_bytes += len;
    if (w->pending == 'C' && w->pending_off + w->pending_len == base_off) {
        w->pending_len += len;
        return;
    }
    flush_pending(w);
    w->pending = 'C';
    w->pending_off = base_off;
    w->pending_len = len;
}

void delta_writer_zero(struct delta_writer *w, uint64_t len)
{
    flush_literal(w);
    w->stats->zero_bytes += len;
    if (w->pending == 'Z') {
        w->pending_len += len;
        return;
    }
    flush_pending(w);
    w->pending = 'Z';
    w->pending_len = len;
}

void delta_writer_abort(struct delta_writer *w)
{
    EVP_MD_CTX_free(w->sha);
    free(w->out);
    free(w->lit);
    w->sha = NULL;
    w->out = w->lit = NULL;
    if (w->failed)
        errno = w->failed_errno; /* what the caller classifies */
}

int delta_writer_close(struct delta_writer *w, char sha256_hex[65])
{
    flush_literal(w);
    flush_pending(w);
    emit(w, "E", 1);
    flush_out(w);
    int rc = w->failed ? -1 : 0;
    if (rc == 0)
        sha_hex(w->sha, sha256_hex);
    delta_writer_abort(w);
    return rc;
}

/* ---- reader ---- */

struct delta_reader {
    int fd;
    EVP_MD_CTX *sha;
    char *err;
    size_t errlen;
};

/* Exactly len bytes, hashed; a short read is a truncated delta. */
static int read_exact(struct delta_reader *r, void *buf, size_t len)
{
    unsigned char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(r->fd, p + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(r->err, r->errlen, "read the delta: %s", strerror(errno));
            return -1;
        }
        if (n == 0) {
            snprintf(r->err, r->errlen, "the delta is truncated");
            return -1;
        }
        got += (size_t)n;
    }
    EVP_DigestUpdate(r->sha, buf, len);
    return 0;
}

/* len bytes of base at off into target at pos: copy_file_range (a reflink
 * on btrfs when aligned), else read and write. */
static int copy_range(int base_fd, uint64_t off, int target_fd, uint64_t pos, uint64_t len,
                      unsigned char *buf, char *err, size_t errlen)
{
    loff_t in = (loff_t)off, out = (loff_t)pos;
    bool plain = false;
    while (len) {
        size_t want = len > DELTA_READ_CHUNK ? DELTA_READ_CHUNK : (size_t)len;
        ssize_t n;
        if (!plain) {
            n = copy_file_range(base_fd, &in, target_fd, &out, want, 0);
            if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                          errno == EOPNOTSUPP)) {
                plain = true;
                continue;
            }
        } else {
            n = pread(base_fd, buf, want, in);
            if (n > 0 && pwrite(target_fd, buf, (size_t)n, out) != n)
                n = -1;
            if (n > 0) {
                in += n;
                out += n;
            }
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, errlen, "copy %llu bytes from the base at %llu: %s",
                     (unsigned long long)len, (unsigned long long)in,
                     n == 0 ? "the base ends early" : strerror(errno));
            return -1;
        }
        len -= (uint64_t)n;
    }
    return 0;
}

/* base_fd == target_fd: the delta changes the file in place, so its
 * copies must be of the same offset (the blocks encoder's are). */
static int apply_records(struct delta_reader *r, int base_fd, uint64_t base_size, int target_fd,
                         uint64_t size, struct file_delta_stats *stats, unsigned char *buf)
{
    bool in_place = base_fd == target_fd;
    uint64_t pos = 0;
    for (;;) {
        unsigned char type, args[16];
        if (read_exact(r, &type, 1) < 0)
            return -1;
        if (type == 'E')
            break;
        int nargs = type == 'C' ? 2 : 1;
        if ((type != 'D' && type != 'C' && type != 'Z') || read_exact(r, args, 8u * nargs) < 0) {
            if (type != 'D' && type != 'C' && type != 'Z')
                snprintf(r->err, r->errlen, "the delta has an unknown record 0x%02x", type);
            return -1;
        }
        uint64_t len = get_u64(args + (type == 'C' ? 8 : 0));
        if (len > size - pos) {
            snprintf(r->err, r->errlen, "the delta describes more than its %llu bytes",
                     (unsigned long long)size);
            return -1;
        }
        if (type == 'D') {
            for (uint64_t left = len; left;) {
                size_t n = left > DELTA_READ_CHUNK ? DELTA_READ_CHUNK : (size_t)left;
                if (read_exact(r, buf, n) < 0)
                    return -1;
                if (pwrite(target_fd, buf, n, (off_t)(pos + len - left)) != (ssize_t)n) {
                    snprintf(r->err, r->errlen, "write the file: %s", strerror(errno));
                    return -1;
                }
                left -= n;
            }
            stats->literal_bytes += len;
        } else if (type == 'C') {
            uint64_t off = get_u64(args);
            if (off > base_size || len > base_size - off) {
                snprintf(r->err, r->errlen,
                         "the delta copies past the end of its base (%llu bytes at %llu of %llu)",
                         (unsigned long long)len, (unsigned long long)off,
                         (unsigned long long)base_size);
                return -1;
            }
            if (in_place && off != pos) {
                snprintf(r->err, r->errlen,
                         "the delta moves %llu bytes from %llu to %llu: not a file's own change",
                         (unsigned long long)len, (unsigned long long)off,
                         (unsigned long long)pos);
                return -1;
            }
            if (!in_place &&
                copy_range(base_fd, off, target_fd, pos, len, buf, r->err, r->errlen) < 0)
                return -1;
            stats->copied_bytes += len;
        } else {
            /* A new file reads zero there already; a changed one gets a hole. */
            if (in_place && len &&
                fallocate(target_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)pos,
                          (off_t)len) < 0) {
                snprintf(r->err, r->errlen, "zero %llu bytes at %llu: %s",
                         (unsigned long long)len, (unsigned long long)pos, strerror(errno));
                return -1;
            }
            stats->zero_bytes += len;
        }
        pos += len;
    }
    if (pos != size) {
        snprintf(r->err, r->errlen, "the delta describes %llu of its %llu bytes",
                 (unsigned long long)pos, (unsigned long long)size);
        return -1;
    }
    unsigned char extra;
    ssize_t n = read(r->fd, &extra, 1);
    if (n != 0) {
        snprintf(r->err, r->errlen, "the delta has data after its end");
        return -1;
    }
    return 0;
}

int file_delta_apply(int delta_fd, int base_fd, int target_fd, const char *expected_sha256_hex,
                     struct file_delta_stats *stats, char *err, size_t errlen)
{
    memset(stats, 0, sizeof(*stats));
    struct stat bst;
    if (fstat(base_fd, &bst) < 0) {
        snprintf(err, errlen, "stat the base: %s", strerror(errno));
        return -1;
    }
    struct delta_reader r = { delta_fd, EVP_MD_CTX_new(), err, errlen };
    unsigned char *buf = malloc(DELTA_READ_CHUNK);
    int rc = -1;
    if (!r.sha || !buf || EVP_DigestInit_ex(r.sha, EVP_sha256(), NULL) != 1) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    unsigned char head[FILE_DELTA_MAGIC_LEN + 8];
    if (read_exact(&r, head, sizeof(head)) < 0)
        goto out;
    if (memcmp(head, FILE_DELTA_MAGIC, FILE_DELTA_MAGIC_LEN) != 0) {
        snprintf(err, errlen, "not a delta (no %s header)", FILE_DELTA_MAGIC);
        goto out;
    }
    uint64_t size = get_u64(head + FILE_DELTA_MAGIC_LEN);
    stats->target_bytes = size;
    if (ftruncate(target_fd, (off_t)size) < 0) {
        snprintf(err, errlen, "size the file to %llu bytes: %s", (unsigned long long)size,
                 strerror(errno));
        goto out;
    }
    if (apply_records(&r, base_fd, (uint64_t)bst.st_size, target_fd, size, stats, buf) < 0)
        goto out;
    char hex[65];
    sha_hex(r.sha, hex);
    if (strcmp(hex, expected_sha256_hex) != 0) {
        snprintf(err, errlen, "the delta's sha256 is %s, not the %s recorded", hex,
                 expected_sha256_hex);
        goto out;
    }
    rc = 0;
out:
    EVP_MD_CTX_free(r.sha);
    free(buf);
    return rc;
}

int file_delta_apply_in_place(int delta_fd, int fd, const char *expected_sha256_hex,
                              struct file_delta_stats *stats, char *err, size_t errlen)
{
    return file_delta_apply(delta_fd, fd, fd, expected_sha256_hex, stats, err, errlen);
}
