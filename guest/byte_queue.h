/* A FIFO of byte chunks waiting to be written to a non-blocking fd (a
 * child's stdin). Callers bound its size. */
#ifndef GUESTD_BYTE_QUEUE_H
#define GUESTD_BYTE_QUEUE_H

#include <stddef.h>
#include <sys/types.h>

struct byte_chunk;

struct byte_queue {
    struct byte_chunk *head, *tail;
    size_t len; /* bytes queued */
};

void byte_queue_init(struct byte_queue *q);
void byte_queue_clear(struct byte_queue *q);
/* Copies len bytes to the tail. Returns 0 or -1 (out of memory). */
int byte_queue_push(struct byte_queue *q, const void *data, size_t len);
/* Writes from the head once; returns bytes written (dequeued) or -1 with
 * errno (EAGAIN when the fd is full). */
ssize_t byte_queue_write(struct byte_queue *q, int fd);

#endif
