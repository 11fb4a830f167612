/* file_delta_encode_pages: a file whose 4 KiB pages may sit anywhere in
 * the base, at any offset of the target (a QEMU migration stream against
 * the guest memory file: each page follows an 8-byte header). The base's
 * non-zero pages are indexed by rsync's weak rolling checksum; the target
 * is scanned byte by byte, the checksum rolled, and a window whose
 * checksum is indexed is compared with those pages (memcmp: a weak match
 * alone is never trusted). A match is a copy and the scan jumps a page;
 * what no page matches is literal. Cost: one index entry per base page,
 * and a checksum step per literal byte. */
#include "file_delta_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE FILE_DELTA_PAGE
#define MAX_CANDIDATES 8 /* weak collisions compared per window */

/* rsync's checksum: a = sum of bytes, b = sum of running a, 16 bits each. */
struct rolling {
    uint32_t a, b;
};

static struct rolling rolling_of(const unsigned char *p)
{
    struct rolling r = { 0, 0 };
    for (uint32_t i = 0; i < PAGE; i++) {
        r.a += p[i];
        r.b += (PAGE - i) * (uint32_t)p[i];
    }
    r.a &= 0xffff;
    r.b &= 0xffff;
    return r;
}

static void rolling_step(struct rolling *r, unsigned char out, unsigned char in)
{
    r->a = (r->a - out + in) & 0xffff;
    r->b = (r->b - PAGE * (uint32_t)out + r->a) & 0xffff;
}

static uint32_t rolling_value(struct rolling r)
{
    return r.a | (r.b << 16);
}

/* Open addressing: weak checksum -> page number + 1 (0 = empty). */
struct page_index {
    uint32_t *weak;
    uint32_t *page;
    size_t mask;
};

static size_t slot_of(uint32_t weak, size_t mask)
{
    return (size_t)((weak * 2654435761u) ^ (weak >> 15)) & mask;
}

static int index_build(struct page_index *ix, const unsigned char *base, uint64_t size, int fd,
                       char *err, size_t errlen)
{
    uint64_t pages = size / PAGE;
    size_t cap = 1024;
    while (cap < pages * 2)
        cap *= 2;
    ix->weak = calloc(cap, sizeof(*ix->weak));
    ix->page = calloc(cap, sizeof(*ix->page));
    ix->mask = cap - 1;
    if (!ix->weak || !ix->page) {
        snprintf(err, errlen, "out of memory for an index of %llu pages",
                 (unsigned long long)pages);
        return -1;
    }
    uint64_t off = 0;
    while (off + PAGE <= size) {
        /* Holes read as zero: nothing to index there. */
        off_t data = lseek(fd, (off_t)off, SEEK_DATA);
        if (data < 0)
            break;
        off_t hole = lseek(fd, data, SEEK_HOLE);
        uint64_t end = hole < 0 ? size : (uint64_t)hole;
        for (off = ((uint64_t)data + PAGE - 1) / PAGE * PAGE; off + PAGE <= end; off += PAGE) {
            const unsigned char *p = base + off;
            if (delta_page_is_zero(p, PAGE))
                continue;
            uint32_t w = rolling_value(rolling_of(p));
            size_t s = slot_of(w, ix->mask);
            while (ix->page[s])
                s = (s + 1) & ix->mask;
            ix->weak[s] = w;
            ix->page[s] = (uint32_t)(off / PAGE) + 1;
        }
        off = end;
    }
    return 0;
}

/* The base page equal to the window at p, or -1. */
static int64_t index_find(const struct page_index *ix, uint32_t weak, const unsigned char *p,
                          const unsigned char *base)
{
    int tried = 0;
    for (size_t s = slot_of(weak, ix->mask); ix->page[s] && tried < MAX_CANDIDATES;
         s = (s + 1) & ix->mask) {
        if (ix->weak[s] != weak)
            continue;
        tried++;
        uint64_t page = ix->page[s] - 1;
        if (memcmp(p, base + page * PAGE, PAGE) == 0)
            return (int64_t)page;
    }
    return -1;
}

static void scan(struct delta_writer *w, const unsigned char *t, uint64_t size,
                 const struct page_index *ix, const unsigned char *base)
{
    uint64_t pos = 0, literal_from = 0;
    struct rolling r = { 0, 0 };
    bool fresh = true; /* r must be computed for the window at pos */
    while (pos + PAGE <= size && !w->failed) {
        if (fresh) {
            r = rolling_of(t + pos);
            fresh = false;
        }
        int64_t page = index_find(ix, rolling_value(r), t + pos, base);
        if (page >= 0) {
            if (pos > literal_from)
                delta_writer_literal(w, t + literal_from, pos - literal_from);
            delta_writer_copy(w, (uint64_t)page * PAGE, PAGE);
            pos += PAGE;
            literal_from = pos;
            fresh = true;
            continue;
        }
        if (pos + PAGE < size)
            rolling_step(&r, t[pos], t[pos + PAGE]);
        pos++;
    }
    if (size > literal_from)
        delta_writer_literal(w, t + literal_from, size - literal_from);
}

static void *map_file(int fd, uint64_t size)
{
    if (size == 0)
        return NULL;
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, size, MADV_SEQUENTIAL);
    return p;
}

int file_delta_encode_pages(int target_fd, int base_fd, int out_fd, char sha256_hex[65],
                            struct file_delta_stats *stats, char *err, size_t errlen)
{
    struct stat tst, bst;
    if (fstat(target_fd, &tst) < 0 || fstat(base_fd, &bst) < 0) {
        snprintf(err, errlen, "stat: %s", strerror(errno));
        return -1;
    }
    uint64_t tsize = (uint64_t)tst.st_size, bsize = (uint64_t)bst.st_size;
    if (bsize / PAGE > UINT32_MAX - 1) {
        snprintf(err, errlen, "a base of %llu bytes is too large to index",
                 (unsigned long long)bsize);
        return -1;
    }
    unsigned char *t = map_file(target_fd, tsize), *b = map_file(base_fd, bsize);
    struct page_index ix = { 0 };
    int rc = -1;
    if ((tsize && !t) || (bsize && !b)) {
        snprintf(err, errlen, "map the files: %s", strerror(errno));
        goto out;
    }
    if (b)
        madvise(b, bsize, MADV_RANDOM); /* matched pages come in any order */
    if (index_build(&ix, b, bsize, base_fd, err, errlen) < 0)
        goto out;
    struct delta_writer w;
    if (delta_writer_open(&w, out_fd, tsize, stats, err, errlen) < 0)
        goto out;
    scan(&w, t, tsize, &ix, b);
    rc = delta_writer_close(&w, sha256_hex);
out:
    free(ix.weak);
    free(ix.page);
    if (t)
        munmap(t, tsize);
    if (b)
        munmap(b, bsize);
    return rc;
}
