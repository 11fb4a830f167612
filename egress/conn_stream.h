/* One side of an intercepted connection: a blocking socket, with TLS or
 * without. The HTTP code reads and writes through it alike for both. */
#ifndef AIRLOCK_EGRESS_CONN_STREAM_H
#define AIRLOCK_EGRESS_CONN_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <openssl/ssl.h>

struct conn_stream {
    int fd;   /* not owned */
    SSL *ssl; /* NULL: plain */
};

/* Up to len bytes: > 0, 0 at the end of the stream, -1 when it failed. */
ssize_t conn_stream_read(struct conn_stream *s, void *buf, size_t len);
/* All len bytes or -1. */
int conn_stream_write(struct conn_stream *s, const void *buf, size_t len);
/* Sends close_notify (TLS) and frees the TLS state; the socket stays. */
void conn_stream_close(struct conn_stream *s);

/* A BIO over fd that first yields the prefix bytes (a ClientHello egress
 * read before deciding) — copied — then reads the socket. NULL when out of
 * memory. */
BIO *conn_stream_bio(int fd, const uint8_t *prefix, size_t len);

#endif
