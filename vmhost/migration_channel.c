#include "migration_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "file_delta.h"
#include "fsutil.h"
#include "log.h"
#include "random_id.h"
#include "tls_credentials.h"

#define HELLO "ALMIGR1 "
#define HELLO_LEN (sizeof(HELLO) - 1 + MIGRATION_TOKEN_SIZE - 1)
#define FRAME_MAX (256u << 10)
#define IO_TIMEOUT_S 30   /* a peer silent this long is gone */
#define CONNECT_TIMEOUT_MS 10000
#define POLL_STEP_MS 200  /* how soon a cancel is seen */

/* Frame types: QEMU's bytes, the disk delta's bytes, its end (payload:
 * sha256 hex), the stream's end. */
enum { FRAME_QEMU = 'Q', FRAME_DISK = 'D', FRAME_DISK_END = 'd', FRAME_END = 'F' };

/* A TCP connection, TLS or not. */
struct conn {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;
};

static void conn_close(struct conn *c)
{
    if (c->ssl) {
        SSL_shutdown(c->ssl);
        SSL_free(c->ssl);
    }
    SSL_CTX_free(c->ctx);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->ssl = NULL;
    c->ctx = NULL;
}

static const char *ssl_why(char *buf, size_t len)
{
    unsigned long code = ERR_get_error();
    if (!code)
        return "connection closed";
    ERR_error_string_n(code, buf, len);
    ERR_clear_error();
    return buf;
}

static int conn_write(struct conn *c, const void *data, size_t len, struct airlock_error *e)
{
    const unsigned char *p = data;
    while (len) {
        ssize_t n;
        if (c->ssl) {
            int w = SSL_write(c->ssl, p, len > INT32_MAX ? INT32_MAX : (int)len);
            n = w > 0 ? w : -1;
        } else {
            n = send(c->fd, p, len, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR)
                continue;
        }
        if (n <= 0) {
            char buf[256];
            return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "send to the other node: %s",
                                     c->ssl ? ssl_why(buf, sizeof(buf)) : strerror(errno));
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int conn_read(struct conn *c, void *data, size_t len, struct airlock_error *e)
{
    unsigned char *p = data;
    while (len) {
        ssize_t n;
        if (c->ssl) {
            int r = SSL_read(c->ssl, p, len > INT32_MAX ? INT32_MAX : (int)len);
            n = r > 0 ? r : -1;
        } else {
            n = recv(c->fd, p, len, 0);
            if (n < 0 && errno == EINTR)
                continue;
        }
        if (n <= 0) {
            char buf[256];
            return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                                     "receive from the other node: %s",
                                     n == 0 ? "it closed the connection"
                                     : c->ssl ? ssl_why(buf, sizeof(buf))
                                              : strerror(errno));
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void set_io_timeouts(int fd)
{
    struct timeval tv = { IO_TIMEOUT_S, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* TLS over c->fd with the node's internal files, then the peer must be
 * vmhost:peer_node (its chain is checked in the handshake and again by
 * tls_credentials_verify_peer, which reads its identity). */
static int conn_tls(struct conn *c, struct tls_credentials *tls, bool server,
                    const char *peer_node, struct airlock_error *e)
{
    const struct tls_files *f = tls_credentials_files(tls);
    char buf[256];
    c->ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (!c->ctx || SSL_CTX_set_min_proto_version(c->ctx, TLS1_3_VERSION) != 1 ||
        SSL_CTX_use_certificate_chain_file(c->ctx, f->cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(c->ctx, f->key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_load_verify_locations(c->ctx, f->ca, NULL) != 1)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "migration TLS with %s, %s, %s: %s",
                                 f->cert, f->key, f->ca, ssl_why(buf, sizeof(buf)));
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    /* No resumption: each migration is one connection, and tickets the
     * source never reads would make its close a reset. */
    if (server)
        SSL_CTX_set_num_tickets(c->ctx, 0);
    c->ssl = SSL_new(c->ctx);
    if (!c->ssl || SSL_set_fd(c->ssl, c->fd) != 1)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "migration TLS: out of memory");
    if ((server ? SSL_accept(c->ssl) : SSL_connect(c->ssl)) != 1)
        return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                                 "TLS handshake with vmhost:%s for a migration: %s", peer_node,
                                 ssl_why(buf, sizeof(buf)));
    X509 *cert = SSL_get1_peer_certificate(c->ssl);
    BIO *mem = BIO_new(BIO_s_mem());
    char *pem = NULL;
    if (cert && mem && PEM_write_bio_X509(mem, cert) == 1) {
        long n = BIO_get_mem_data(mem, NULL);
        pem = malloc((size_t)n + 1);
        if (pem && BIO_read(mem, pem, (int)n) == n)
            pem[n] = '\0';
    }
    X509_free(cert);
    BIO_free(mem);
    struct peer_identity id = { 0 };
    char why[256] = "no certificate";
    int rc = pem ? tls_credentials_verify_peer(tls, pem, &id, why, sizeof(why)) : -1;
    free(pem);
    if (rc < 0)
        return airlock_error_set(e, AIRLOCK_ERR_PERMISSION,
                                 "the other end of the migration is not vmhost:%s: %s", peer_node,
                                 why);
    if (id.role != PEER_VMHOST || strcmp(id.node, peer_node) != 0) {
        char text[PEER_IDENTITY_TEXT_MAX];
        return airlock_error_set(e, AIRLOCK_ERR_PERMISSION,
                                 "the other end of the migration is %s, not vmhost:%s",
                                 peer_identity_text(&id, text, sizeof(text)), peer_node);
    }
    return 0;
}

static int frame_write(struct conn *c, char type, const void *data, uint32_t len,
                       struct airlock_error *e)
{
    unsigned char head[5] = { (unsigned char)type, (unsigned char)(len >> 24),
                              (unsigned char)(len >> 16), (unsigned char)(len >> 8),
                              (unsigned char)len };
    if (conn_write(c, head, sizeof(head), e) < 0)
        return -1;
    return len ? conn_write(c, data, len, e) : 0;
}

/* "host:port" or "[v6]:port" into its parts. */
static int split_addr(const char *addr, char *host, size_t hostlen, char *port, size_t portlen)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1])
        return -1;
    const char *h = addr;
    size_t n = (size_t)(colon - addr);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n == 0 || n >= hostlen || strlen(colon + 1) >= portlen)
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    snprintf(port, portlen, "%s", colon + 1);
    return 0;
}

/* ---- the target's side ---- */

struct migration_incoming {
    int listen_fd;
    struct conn c;
    struct tls_credentials *tls;
    char peer_node[PEER_NODE_MAX];
    char token[MIGRATION_TOKEN_SIZE];
    int qemu_fd, disk_fd, spool_fd;
    long long accept_deadline_ms;
    volatile int cancelled;
    pthread_t thread;
    struct airlock_error result;
    int rc;
};

static int incoming_accept(struct migration_incoming *in, struct airlock_error *e)
{
    for (;;) {
        if (in->cancelled)
            return airlock_error_set(e, AIRLOCK_ERR_CANCELLED, "the migration was cancelled");
        long long left = in->accept_deadline_ms - clock_monotonic_ms();
        if (left <= 0)
            return airlock_error_set(e, AIRLOCK_ERR_TIMEOUT,
                                     "vmhost:%s did not connect to send the migration",
                                     in->peer_node);
        struct pollfd p = { in->listen_fd, POLLIN, 0 };
        int n = poll(&p, 1, left < POLL_STEP_MS ? (int)left : POLL_STEP_MS);
        if (n <= 0)
            continue;
        int fd = accept4(in->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        set_io_timeouts(fd);
        struct conn c = { .fd = fd };
        struct airlock_error why = { 0 };
        char hello[HELLO_LEN + 1] = "";
        if ((in->tls && conn_tls(&c, in->tls, true, in->peer_node, &why) < 0) ||
            conn_read(&c, hello, HELLO_LEN, &why) < 0 ||
            memcmp(hello, HELLO, sizeof(HELLO) - 1) != 0 ||
            memcmp(hello + sizeof(HELLO) - 1, in->token, MIGRATION_TOKEN_SIZE - 1) != 0) {
            /* Someone else: keep waiting for the node named. */
            log_warn("migration connection refused", "peer=vmhost:%s error=\"%s\"",
                     in->peer_node, why.message[0] ? why.message : "wrong token");
            conn_close(&c);
            continue;
        }
        in->c = c;
        return 0;
    }
}

/* The disk's last changes, spooled, applied in place. */
static int incoming_apply_disk(struct migration_incoming *in, const char *sha,
                               struct airlock_error *e)
{
    struct file_delta_stats st;
    if (lseek(in->spool_fd, 0, SEEK_SET) < 0 ||
        file_delta_apply_in_place(in->spool_fd, in->disk_fd, sha, &st, AIRLOCK_ERROR_MSG(e)) < 0 ||
        fdatasync(in->disk_fd) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_DATA_LOSS);
    log_info("migration disk changes applied", "peer=vmhost:%s bytes=%llu literal=%llu",
             in->peer_node, (unsigned long long)st.target_bytes,
             (unsigned long long)st.literal_bytes);
    return 0;
}

static int incoming_relay(struct migration_incoming *in, struct airlock_error *e)
{
    unsigned char *buf = malloc(FRAME_MAX);
    bool disk_done = false;
    int rc = -1;
    if (!buf)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    for (;;) {
        unsigned char head[5];
        if (conn_read(&in->c, head, sizeof(head), e) < 0)
            goto out;
        uint32_t len = (uint32_t)head[1] << 24 | (uint32_t)head[2] << 16 |
                       (uint32_t)head[3] << 8 | head[4];
        if (len > FRAME_MAX) {
            airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS, "a migration frame of %u bytes", len);
            goto out;
        }
        if (len && conn_read(&in->c, buf, len, e) < 0)
            goto out;
        switch (head[0]) {
        case FRAME_QEMU:
            if (fs_send_all(in->qemu_fd, buf, len) < 0) {
                airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "relay the migration to QEMU: %s",
                                  strerror(errno));
                goto out;
            }
            break;
        case FRAME_DISK:
            if (fs_write_all(in->spool_fd, buf, len) < 0) {
                airlock_error_set(e, AIRLOCK_ERR_CAPACITY, "spool the disk's changes: %s",
                                  strerror(errno));
                goto out;
            }
            break;
        case FRAME_DISK_END:
            if (len != 64) {
                airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS, "a disk delta's end without sha256");
                goto out;
            }
            buf[64] = '\0';
            if (incoming_apply_disk(in, (const char *)buf, e) < 0)
                goto out;
            disk_done = true;
            break;
        case FRAME_END:
            if (!disk_done) {
                airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS,
                                  "the migration ended without the disk's last changes");
                goto out;
            }
            /* The source learns the stream arrived whole. */
            rc = frame_write(&in->c, FRAME_END, NULL, 0, e);
            goto out;
        default:
            airlock_error_set(e, AIRLOCK_ERR_DATA_LOSS, "an unknown migration frame 0x%02x",
                              head[0]);
            goto out;
        }
    }
out:
    free(buf);
    return rc;
}

static void *incoming_thread(void *arg)
{
    struct migration_incoming *in = arg;
    in->rc = incoming_accept(in, &in->result);
    close(in->listen_fd);
    in->listen_fd = -1;
    if (in->rc == 0)
        in->rc = incoming_relay(in, &in->result);
    if (in->rc < 0 && in->cancelled)
        airlock_error_set(&in->result, AIRLOCK_ERR_CANCELLED, "the migration was cancelled");
    return NULL;
}

static int listen_on(const char *host, char addr[MIGRATION_ADDR_SIZE], struct airlock_error *e)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, "0", &hints, &res);
    if (gai != 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "migration address %s: %s", host,
                                 gai_strerror(gai));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 4) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "listen for a migration on %s: %s", host,
                          strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    int port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                        : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    snprintf(addr, MIGRATION_ADDR_SIZE, res->ai_family == AF_INET6 ? "[%s]:%d" : "%s:%d", host,
             port);
    freeaddrinfo(res);
    return fd;
}

int migration_incoming_start(const char *host, struct tls_credentials *tls, const char *peer_node,
                             int qemu_fd, int disk_fd, const char *spool_dir, int accept_ms,
                             struct migration_incoming **out, char addr[MIGRATION_ADDR_SIZE],
                             char token[MIGRATION_TOKEN_SIZE], struct airlock_error *e)
{
    struct migration_incoming *in = calloc(1, sizeof(*in));
    if (!in)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    in->c.fd = -1;
    in->tls = tls;
    in->qemu_fd = qemu_fd;
    in->disk_fd = disk_fd;
    in->accept_deadline_ms = clock_monotonic_ms() + accept_ms;
    snprintf(in->peer_node, sizeof(in->peer_node), "%s", peer_node);
    if (random_id("", (MIGRATION_TOKEN_SIZE - 1) / 2, in->token, sizeof(in->token)) < 0) {
        free(in);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "no random bytes for a token");
    }
    /* An unnamed file the relay alone holds: nothing to clean up. */
    in->spool_fd = open(spool_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (in->spool_fd < 0) {
        free(in);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "a spool file in %s: %s", spool_dir,
                                 strerror(errno));
    }
    in->listen_fd = listen_on(host, addr, e);
    if (in->listen_fd < 0)
        goto fail;
    if (pthread_create(&in->thread, NULL, incoming_thread, in) != 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot start the migration relay");
        close(in->listen_fd);
        goto fail;
    }
    memcpy(token, in->token, MIGRATION_TOKEN_SIZE);
    *out = in;
    return 0;
fail:
    close(in->spool_fd);
    free(in);
    return -1;
}

static void incoming_free(struct migration_incoming *in)
{
    conn_close(&in->c);
    if (in->listen_fd >= 0)
        close(in->listen_fd);
    close(in->spool_fd);
    free(in);
}

int migration_incoming_finish(struct migration_incoming *in, struct airlock_error *e)
{
    pthread_join(in->thread, NULL);
    int rc = in->rc;
    if (rc < 0)
        *e = in->result;
    incoming_free(in);
    return rc;
}

void migration_incoming_cancel(struct migration_incoming *in)
{
    in->cancelled = 1;
    /* The relay may be blocked reading: the socket's end wakes it. */
    if (in->c.fd >= 0)
        shutdown(in->c.fd, SHUT_RDWR);
    pthread_join(in->thread, NULL);
    incoming_free(in);
}

/* ---- the source's side ---- */

struct migration_outgoing {
    struct conn c;
    int qemu_fd;
    pthread_mutex_t lock; /* every read of qemu_fd and write to c, in stream order */
    volatile int cancelled;
    pthread_t thread;
    int rc;
    struct airlock_error result;
    unsigned char *buf;
};

/* lock held. What QEMU wrote and is waiting in the socketpair, sent; 1
 * at QEMU's end of the stream. */
static int outgoing_drain_locked(struct migration_outgoing *o, struct airlock_error *e)
{
    for (;;) {
        ssize_t n = recv(o->qemu_fd, o->buf, FRAME_MAX, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0)
            return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "read QEMU's migration: %s",
                                     strerror(errno));
        if (n == 0)
            return 1;
        if (frame_write(&o->c, FRAME_QEMU, o->buf, (uint32_t)n, e) < 0)
            return -1;
    }
}

static void *outgoing_thread(void *arg)
{
    struct migration_outgoing *o = arg;
    for (;;) {
        if (o->cancelled) {
            o->rc = airlock_error_set(&o->result, AIRLOCK_ERR_CANCELLED,
                                      "the migration was cancelled");
            shutdown(o->qemu_fd, SHUT_RDWR);
            return NULL;
        }
        struct pollfd p = { o->qemu_fd, POLLIN, 0 };
        if (poll(&p, 1, POLL_STEP_MS) <= 0)
            continue;
        pthread_mutex_lock(&o->lock);
        int rc = outgoing_drain_locked(o, &o->result);
        if (rc == 1)
            rc = frame_write(&o->c, FRAME_END, NULL, 0, &o->result) < 0 ? -1 : 1;
        pthread_mutex_unlock(&o->lock);
        /* Sent: the target answers once it has it all (and nothing is
         * left unread here, so the close is no reset). */
        unsigned char ack[5];
        if (rc == 1 && conn_read(&o->c, ack, sizeof(ack), &o->result) < 0)
            rc = -1;
        else if (rc == 1 && ack[0] != FRAME_END)
            rc = airlock_error_set(&o->result, AIRLOCK_ERR_DATA_LOSS,
                                   "the target did not confirm the migration stream");
        if (rc != 0) {
            o->rc = rc < 0 ? -1 : 0;
            /* QEMU must not wait on a relay that stopped: its writes fail. */
            if (rc < 0)
                shutdown(o->qemu_fd, SHUT_RDWR);
            return NULL;
        }
    }
}

static int connect_to(const char *addr, struct airlock_error *e)
{
    char host[MIGRATION_ADDR_SIZE], port[16];
    if (split_addr(addr, host, sizeof(host), port, sizeof(port)) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "migration address \"%s\" is not "
                                 "host:port", addr);
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_NUMERICSERV };
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0)
        return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "migration address %s: %s", addr,
                                 gai_strerror(gai));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int rc = fd < 0 ? -1 : connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc < 0 && fd >= 0 && errno == EINPROGRESS) {
        struct pollfd p = { fd, POLLOUT, 0 };
        int err = 0;
        socklen_t el = sizeof(err);
        if (poll(&p, 1, CONNECT_TIMEOUT_MS) == 1 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
            rc = 0;
        else
            errno = err ? err : ETIMEDOUT;
    }
    if (rc < 0) {
        airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "connect to %s for a migration: %s", addr,
                          strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    set_io_timeouts(fd);
    return fd;
}

int migration_outgoing_start(const char *addr, struct tls_credentials *tls, const char *peer_node,
                             const char *token, int qemu_fd, struct migration_outgoing **out,
                             struct airlock_error *e)
{
    if (strlen(token) != MIGRATION_TOKEN_SIZE - 1)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "a migration token has %d characters",
                                 MIGRATION_TOKEN_SIZE - 1);
    struct migration_outgoing *o = calloc(1, sizeof(*o));
    if (!o || !(o->buf = malloc(FRAME_MAX))) {
        free(o);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    }
    o->qemu_fd = qemu_fd;
    pthread_mutex_init(&o->lock, NULL);
    char hello[HELLO_LEN];
    memcpy(hello, HELLO, sizeof(HELLO) - 1);
    memcpy(hello + sizeof(HELLO) - 1, token, MIGRATION_TOKEN_SIZE - 1);
    o->c.fd = connect_to(addr, e);
    if (o->c.fd < 0 || (tls && conn_tls(&o->c, tls, false, peer_node, e) < 0) ||
        conn_write(&o->c, hello, sizeof(hello), e) < 0)
        goto fail;
    if (pthread_create(&o->thread, NULL, outgoing_thread, o) != 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot start the migration relay");
        goto fail;
    }
    *out = o;
    return 0;
fail:
    conn_close(&o->c);
    pthread_mutex_destroy(&o->lock);
    free(o->buf);
    free(o);
    return -1;
}

int migration_outgoing_send_disk(struct migration_outgoing *o, int delta_fd, const char *sha256,
                                 struct airlock_error *e)
{
    pthread_mutex_lock(&o->lock);
    int rc = outgoing_drain_locked(o, e) < 0 ? -1 : 0;
    if (rc == 0 && lseek(delta_fd, 0, SEEK_SET) < 0)
        rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "rewind the disk delta: %s",
                               strerror(errno));
    while (rc == 0) {
        ssize_t n = read(delta_fd, o->buf, FRAME_MAX);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "read the disk delta: %s",
                                   strerror(errno));
        else if (n == 0)
            break;
        else if (frame_write(&o->c, FRAME_DISK, o->buf, (uint32_t)n, e) < 0)
            rc = -1;
    }
    if (rc == 0 && frame_write(&o->c, FRAME_DISK_END, sha256, 64, e) < 0)
        rc = -1;
    pthread_mutex_unlock(&o->lock);
    return rc;
}

int migration_outgoing_finish(struct migration_outgoing *o, bool cancel, struct airlock_error *e)
{
    if (cancel) {
        o->cancelled = 1;
        shutdown(o->c.fd, SHUT_RDWR);
    }
    pthread_join(o->thread, NULL);
    int rc = o->rc;
    if (rc < 0)
        *e = o->result;
    conn_close(&o->c);
    pthread_mutex_destroy(&o->lock);
    free(o->buf);
    free(o);
    return rc;
}
