/* The last `cap` bytes of a byte stream (a background process's output).
 * Positions are absolute stream offsets, so a reader keeps a cursor and
 * notices when the ring overwrote what it had not read yet. The buffer
 * grows on demand up to cap: most processes print little. */
#ifndef GUESTD_RING_H
#define GUESTD_RING_H

#include <stddef.h>
#include <stdint.h>

struct ring {
    uint8_t *buf;
    size_t alloc; /* bytes allocated, <= cap */
    size_t cap;
    uint64_t total; /* bytes ever appended = end position */
    size_t held;    /* valid bytes ending at total */
};

void ring_init(struct ring *r, size_t cap);
void ring_free(struct ring *r);
/* Returns 0 or -1 when out of memory (the bytes are then lost). */
int ring_append(struct ring *r, const void *data, size_t len);
/* Oldest position still held. */
uint64_t ring_start(const struct ring *r);
/* Copies up to max bytes from position pos (>= ring_start) on. */
size_t ring_read(const struct ring *r, uint64_t pos, void *out, size_t max);

#endif
