#include "ring.h"

#include <stdlib.h>
#include <string.h>

/* Byte at position p lives at buf[p % cap]; while the ring has not wrapped
 * that is buf[p], so growing with realloc keeps every byte in place. */

void ring_init(struct ring *r, size_t cap)
{
    memset(r, 0, sizeof(*r));
    r->cap = cap;
}

void ring_free(struct ring *r)
{
    free(r->buf);
    r->buf = NULL;
    r->alloc = 0;
}

static int ring_reserve(struct ring *r, uint64_t end)
{
    size_t need = end >= r->cap ? r->cap : (size_t)end;
    if (need <= r->alloc)
        return 0;
    size_t n = r->alloc ? r->alloc : 4096;
    while (n < need)
        n *= 2;
    if (n > r->cap)
        n = r->cap;
    uint8_t *nb = realloc(r->buf, n);
    if (!nb)
        return -1;
    r->buf = nb;
    r->alloc = n;
    return 0;
}

int ring_append(struct ring *r, const void *data, size_t len)
{
    const uint8_t *p = data;
    if (len > r->cap) { /* only the tail survives anyway */
        r->total += len - r->cap;
        r->held = 0;
        p += len - r->cap;
        len = r->cap;
    }
    if (ring_reserve(r, r->total + len) < 0) {
        r->total += len;
        r->held = 0;
        return -1;
    }
    r->held = r->held + len > r->cap ? r->cap : r->held + len;
    while (len > 0) {
        size_t at = (size_t)(r->total % r->cap);
        size_t n = r->cap - at < len ? r->cap - at : len;
        memcpy(r->buf + at, p, n);
        r->total += n;
        p += n;
        len -= n;
    }
    return 0;
}

uint64_t ring_start(const struct ring *r)
{
    return r->total - r->held;
}

size_t ring_read(const struct ring *r, uint64_t pos, void *out, size_t max)
{
    if (pos < ring_start(r) || pos >= r->total)
        return 0;
    uint64_t avail = r->total - pos;
    size_t n = avail < max ? (size_t)avail : max;
    size_t at = (size_t)(pos % r->cap);
    size_t first = r->cap - at < n ? r->cap - at : n;
    memcpy(out, r->buf + at, first);
    memcpy((uint8_t *)out + first, r->buf, n - first);
    return n;
}
