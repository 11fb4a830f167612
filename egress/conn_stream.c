#include "conn_stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsutil.h"

ssize_t conn_stream_read(struct conn_stream *s, void *buf, size_t len)
{
    if (!s->ssl) {
        for (;;) {
            ssize_t n = read(s->fd, buf, len);
            if (n >= 0 || errno != EINTR)
                return n < 0 ? -1 : n;
        }
    }
    size_t got = 0;
    if (SSL_read_ex(s->ssl, buf, len, &got) == 1)
        return (ssize_t)got;
    /* A peer that closes without close_notify (common) also ends it. */
    int e = SSL_get_error(s->ssl, 0);
    return e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL || e == SSL_ERROR_SSL ? 0 : -1;
}

int conn_stream_write(struct conn_stream *s, const void *buf, size_t len)
{
    if (len == 0)
        return 0;
    if (s->ssl) {
        size_t done = 0;
        return SSL_write_ex(s->ssl, buf, len, &done) == 1 && done == len ? 0 : -1;
    }
    return fs_send_all(s->fd, buf, len);
}

void conn_stream_close(struct conn_stream *s)
{
    if (s->ssl) {
        SSL_shutdown(s->ssl);
        SSL_free(s->ssl);
        s->ssl = NULL;
    }
}

/* ---- the BIO: prefix, then the socket ---- */

struct prefixed_fd {
    int fd;
    uint8_t *prefix;
    size_t len, off;
};

static int bio_read(BIO *b, char *buf, size_t len, size_t *got)
{
    struct prefixed_fd *p = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (p->off < p->len) {
        *got = p->len - p->off < len ? p->len - p->off : len;
        memcpy(buf, p->prefix + p->off, *got);
        p->off += *got;
        return 1;
    }
    for (;;) {
        ssize_t n = read(p->fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        *got = (size_t)n;
        return 1;
    }
}

static int bio_write(BIO *b, const char *buf, size_t len, size_t *done)
{
    struct prefixed_fd *p = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    for (;;) {
        ssize_t n = send(p->fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        *done = (size_t)n;
        return 1;
    }
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int bio_destroy(BIO *b)
{
    struct prefixed_fd *p = BIO_get_data(b);
    if (p) {
        free(p->prefix);
        free(p);
    }
    BIO_set_data(b, NULL);
    return 1;
}

static BIO_METHOD *method;
static pthread_once_t method_once = PTHREAD_ONCE_INIT;

static void method_init(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "airlock-prefixed-fd");
    if (m && BIO_meth_set_read_ex(m, bio_read) && BIO_meth_set_write_ex(m, bio_write) &&
        BIO_meth_set_ctrl(m, bio_ctrl) && BIO_meth_set_destroy(m, bio_destroy))
        method = m;
    else
        BIO_meth_free(m);
}

BIO *conn_stream_bio(int fd, const uint8_t *prefix, size_t len)
{
    pthread_once(&method_once, method_init);
    struct prefixed_fd *p = calloc(1, sizeof(*p));
    BIO *b = method && p ? BIO_new(method) : NULL;
    if (!b) {
        free(p);
        return NULL;
    }
    p->fd = fd;
    if (len) {
        p->prefix = malloc(len);
        if (!p->prefix) {
            free(p);
            BIO_free(b);
            return NULL;
        }
        memcpy(p->prefix, prefix, len);
        p->len = len;
    }
    BIO_set_data(b, p);
    BIO_set_init(b, 1);
    return b;
}
