#include "byte_queue.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct byte_chunk {
    struct byte_chunk *next;
    size_t len, off;
    unsigned char data[];
};

void byte_queue_init(struct byte_queue *q)
{
    memset(q, 0, sizeof(*q));
}

void byte_queue_clear(struct byte_queue *q)
{
    while (q->head) {
        struct byte_chunk *c = q->head;
        q->head = c->next;
        free(c);
    }
    byte_queue_init(q);
}

int byte_queue_push(struct byte_queue *q, const void *data, size_t len)
{
    if (len == 0)
        return 0;
    struct byte_chunk *c = malloc(sizeof(*c) + len);
    if (!c)
        return -1;
    c->next = NULL;
    c->len = len;
    c->off = 0;
    memcpy(c->data, data, len);
    if (q->tail)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
    q->len += len;
    return 0;
}

ssize_t byte_queue_write(struct byte_queue *q, int fd)
{
    struct byte_chunk *c = q->head;
    if (!c)
        return 0;
    ssize_t n = write(fd, c->data + c->off, c->len - c->off);
    if (n < 0)
        return -1;
    c->off += (size_t)n;
    q->len -= (size_t)n;
    if (c->off == c->len) {
        q->head = c->next;
        if (!q->head)
            q->tail = NULL;
        free(c);
    }
    return n;
}
