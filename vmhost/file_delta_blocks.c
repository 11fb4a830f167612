/* file_delta_encode_blocks: a disk image against the file it was
 * reflinked from. Extents both files still share (FIEMAP: same physical
 * address at the same offset) are copies without reading a byte; the
 * target's holes are zero; the rest is read and compared page by page with
 * the base at the same offset (a block rewritten with the same bytes is
 * still a copy). Without FIEMAP (another file system) everything is
 * compared. */
#include "file_delta_internal.h"

#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCKS_CHUNK (1u << 20) /* read and compared at a time */
#define FIEMAP_BATCH 256
/* Extents whose physical address says nothing about their bytes. */
#define EXTENT_OPAQUE                                                                    \
    (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED |            \
     FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_NOT_ALIGNED |   \
     FIEMAP_EXTENT_UNWRITTEN)

struct extent_map {
    struct fiemap_extent *ext;
    size_t n, cap;
    size_t cursor; /* lookups move forward */
};

/* Every extent of fd (synced first: delayed allocation has no address);
 * an empty map when the file system has no FIEMAP. */
static int extent_map_load(int fd, struct extent_map *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    size_t sz = sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent);
    struct fiemap *fm = calloc(1, sz);
    if (!fm) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint64_t start = 0;
    for (;;) {
        memset(fm, 0, sz);
        fm->fm_start = start;
        fm->fm_length = FIEMAP_MAX_OFFSET - start;
        fm->fm_flags = FIEMAP_FLAG_SYNC;
        fm->fm_extent_count = FIEMAP_BATCH;
        if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
            free(fm);
            if (errno == EOPNOTSUPP || errno == ENOTTY)
                return 0;
            snprintf(err, errlen, "FIEMAP: %s", strerror(errno));
            free(m->ext);
            return -1;
        }
        if (fm->fm_mapped_extents == 0)
            break;
        if (m->n + fm->fm_mapped_extents > m->cap) {
            size_t cap = (m->cap ? m->cap * 2 : 1024) + fm->fm_mapped_extents;
            struct fiemap_extent *e = realloc(m->ext, cap * sizeof(*e));
            if (!e) {
                free(fm);
                free(m->ext);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            m->ext = e;
            m->cap = cap;
        }
        memcpy(m->ext + m->n, fm->fm_extents, fm->fm_mapped_extents * sizeof(*m->ext));
        m->n += fm->fm_mapped_extents;
        struct fiemap_extent *last = &fm->fm_extents[fm->fm_mapped_extents - 1];
        if (last->fe_flags & FIEMAP_EXTENT_LAST)
            break;
        start = last->fe_logical + last->fe_length;
    }
    free(fm);
    return 0;
}

/* The physical address of byte off (0: unknown, a hole or opaque), and
 * how many bytes from off on it stays contiguous (*run). Lookups must not
 * go backwards. */
static uint64_t extent_map_physical(struct extent_map *m, uint64_t off, uint64_t *run)
{
    while (m->cursor < m->n &&
           m->ext[m->cursor].fe_logical + m->ext[m->cursor].fe_length <= off)
        m->cursor++;
    if (m->cursor == m->n)
        return 0;
    const struct fiemap_extent *e = &m->ext[m->cursor];
    if (off < e->fe_logical || (e->fe_flags & EXTENT_OPAQUE) || e->fe_physical == 0)
        return 0;
    *run = e->fe_logical + e->fe_length - off;
    return e->fe_physical + (off - e->fe_logical);
}

/* [off, off+len) of the target, all data: copies, zeros or literals. */
static int encode_range(struct delta_writer *w, int target_fd, int base_fd, uint64_t base_size,
                        struct extent_map *tm, struct extent_map *bm, uint64_t off, uint64_t len,
                        unsigned char *tbuf, unsigned char *bbuf)
{
    while (len && !w->failed) {
        uint64_t trun = 0, brun = 0;
        uint64_t tp = extent_map_physical(tm, off, &trun);
        uint64_t bp = tp ? extent_map_physical(bm, off, &brun) : 0;
        uint64_t shared = tp && tp == bp ? (trun < brun ? trun : brun) : 0;
        if (shared >= FILE_DELTA_PAGE) {
            uint64_t n = shared < len ? shared - shared % FILE_DELTA_PAGE : len;
            delta_writer_copy(w, off, n);
            off += n;
            len -= n;
            continue;
        }
        size_t n = len < BLOCKS_CHUNK ? (size_t)len : BLOCKS_CHUNK;
        if (trun && trun < n)
            n = (size_t)trun; /* the next extent may be shared again */
        if (n > FILE_DELTA_PAGE)
            n -= n % FILE_DELTA_PAGE;
        ssize_t got = pread(target_fd, tbuf, n, (off_t)off);
        if (got != (ssize_t)n) {
            snprintf(w->err, w->errlen, "read the disk at %llu: %s", (unsigned long long)off,
                     got < 0 ? strerror(errno) : "short read");
            return -1;
        }
        ssize_t bgot = off < base_size ? pread(base_fd, bbuf, n, (off_t)off) : 0;
        if (bgot < 0)
            bgot = 0;
        for (size_t p = 0; p < n; p += FILE_DELTA_PAGE) {
            size_t plen = n - p < FILE_DELTA_PAGE ? n - p : FILE_DELTA_PAGE;
            if ((ssize_t)(p + plen) <= bgot && memcmp(tbuf + p, bbuf + p, plen) == 0)
                delta_writer_copy(w, off + p, plen);
            else if (delta_page_is_zero(tbuf + p, plen))
                delta_writer_zero(w, plen);
            else
                delta_writer_literal(w, tbuf + p, plen);
        }
        off += n;
        len -= n;
    }
    return w->failed ? -1 : 0;
}

int file_delta_encode_blocks(int target_fd, int base_fd, int out_fd, char sha256_hex[65],
                             struct file_delta_stats *stats, char *err, size_t errlen)
{
    struct stat tst, bst;
    if (fstat(target_fd, &tst) < 0 || fstat(base_fd, &bst) < 0) {
        snprintf(err, errlen, "stat: %s", strerror(errno));
        return -1;
    }
    uint64_t size = (uint64_t)tst.st_size;
    struct extent_map tm, bm = { 0 };
    if (extent_map_load(target_fd, &tm, err, errlen) < 0)
        return -1;
    if (extent_map_load(base_fd, &bm, err, errlen) < 0) {
        free(tm.ext);
        return -1;
    }
    unsigned char *tbuf = malloc(BLOCKS_CHUNK), *bbuf = malloc(BLOCKS_CHUNK);
    struct delta_writer w;
    int rc = -1;
    if (!tbuf || !bbuf) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (delta_writer_open(&w, out_fd, size, stats, err, errlen) < 0)
        goto out;
    uint64_t off = 0;
    while (off < size) {
        off_t data = lseek(target_fd, (off_t)off, SEEK_DATA);
        if (data < 0 && errno != ENXIO) {
            snprintf(err, errlen, "SEEK_DATA: %s", strerror(errno));
            delta_writer_abort(&w);
            goto out;
        }
        uint64_t d = data < 0 ? size : (uint64_t)data;
        if (d > off)
            delta_writer_zero(&w, d - off);
        if (d >= size)
            break;
        off_t hole = lseek(target_fd, (off_t)d, SEEK_HOLE);
        uint64_t h = hole < 0 || (uint64_t)hole > size ? size : (uint64_t)hole;
        if (encode_range(&w, target_fd, base_fd, (uint64_t)bst.st_size, &tm, &bm, d, h - d, tbuf,
                         bbuf) < 0) {
            delta_writer_abort(&w);
            goto out;
        }
        off = h;
    }
    rc = delta_writer_close(&w, sha256_hex);
out:
    free(tbuf);
    free(bbuf);
    free(tm.ext);
    free(bm.ext);
    return rc;
}
