/* The connection a live migration runs over (vmhost/migration_channel.c),
 * on loopback without QEMU: socketpairs stand in for the two QEMUs. The
 * stream arrives whole and in order with the disk's changes applied in
 * place before the bytes after them; with mutual TLS from the internal
 * PKI (scripts/internal-pki.sh, as make up makes it) the source must be
 * the node named and the target too; a wrong token is dropped and the
 * target goes on waiting for the right one until it gives up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "file_delta.h"
#include "fsutil.h"
#include "migration_channel.h"
#include "tls_credentials.h"

#define PG FILE_DELTA_PAGE
#define STREAM_BYTES (3u << 20)

static char dir[64];
static struct tls_credentials *node_a, *node_b;

static struct tls_credentials *load(const char *name)
{
    char ca[160], cert[160], key[160], err[512];
    snprintf(ca, sizeof(ca), "%s/pki/ca.crt", dir);
    snprintf(cert, sizeof(cert), "%s/pki/%s.crt", dir, name);
    snprintf(key, sizeof(key), "%s/pki/%s.key", dir, name);
    struct tls_files f = { ca, cert, key };
    struct tls_credentials *t = NULL;
    if (tls_credentials_configure(&f, PEER_VMHOST, true, &t, err, sizeof(err)) < 0)
        fprintf(stderr, "%s\n", err);
    return t;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/airlock-test-migch-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "sh %s %s/pki vmhost:node-a vmhost:node-b >/dev/null",
             AIRLOCK_INTERNAL_PKI_SCRIPT, dir);
    if (system(cmd) != 0 || !(node_a = load("vmhost-node-a")) || !(node_b = load("vmhost-node-b")))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tls_credentials_free(node_a);
    tls_credentials_free(node_b);
    return fs_remove_tree(dir, NULL, 0);
}

static int tmpfile_in_dir(void)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    return fd;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (unsigned char)(seed >> 16);
    }
}

/* The disks: the target's holds the first pass; the source's changed one
 * page since; the delta between them. */
struct disks {
    int target, source, pass1, delta;
    char sha[65];
};

static void make_disks(struct disks *d)
{
    unsigned char page[PG];
    d->target = tmpfile_in_dir();
    d->source = tmpfile_in_dir();
    d->pass1 = tmpfile_in_dir();
    d->delta = tmpfile_in_dir();
    for (unsigned i = 0; i < 8; i++) {
        fill(page, PG, 100 + i);
        assert_int_equal(pwrite(d->target, page, PG, (off_t)i * PG), (ssize_t)PG);
        assert_int_equal(pwrite(d->pass1, page, PG, (off_t)i * PG), (ssize_t)PG);
        if (i == 3)
            fill(page, PG, 999);
        assert_int_equal(pwrite(d->source, page, PG, (off_t)i * PG), (ssize_t)PG);
    }
    struct file_delta_stats st;
    char err[256];
    assert_int_equal(file_delta_encode_blocks(d->source, d->pass1, d->delta, d->sha, &st, err,
                                              sizeof(err)),
                     0);
}

static void close_disks(struct disks *d)
{
    close(d->target);
    close(d->source);
    close(d->pass1);
    close(d->delta);
}

/* What the target's QEMU reads: everything until the source's end. */
struct reader {
    int fd;
    unsigned char *got;
    size_t n;
};

static void *read_all(void *arg)
{
    struct reader *r = arg;
    for (;;) {
        ssize_t k = read(r->fd, r->got + r->n, STREAM_BYTES + 1 - r->n);
        if (k <= 0)
            break;
        r->n += (size_t)k;
        if (r->n >= STREAM_BYTES)
            break;
    }
    return NULL;
}

/* source → target over the channel: the bytes, then the disk, then more
 * bytes (as QEMU sends before and after the switchover). */
static void migrate_once(struct tls_credentials *src_tls, struct tls_credentials *dst_tls,
                         const char *source_name, const char *target_name, int *send_rc,
                         int *finish_rc, char *why, size_t whylen)
{
    struct disks d;
    make_disks(&d);
    int qemu_in[2], qemu_out[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, qemu_in), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, qemu_out), 0);
    struct migration_incoming *in;
    struct migration_outgoing *out = NULL;
    char addr[MIGRATION_ADDR_SIZE], token[MIGRATION_TOKEN_SIZE];
    struct airlock_error e = { 0 };
    assert_int_equal(migration_incoming_start("127.0.0.1", dst_tls, source_name, qemu_in[1],
                                              d.target, dir, 10000, &in, addr, token, &e),
                     0);
    struct reader r = { qemu_in[0], malloc(STREAM_BYTES + 1), 0 };
    pthread_t t;
    pthread_create(&t, NULL, read_all, &r);

    unsigned char *stream = malloc(STREAM_BYTES);
    fill(stream, STREAM_BYTES, 7);
    *send_rc = migration_outgoing_start(addr, src_tls, target_name, token, qemu_out[1], &out,
                                       &e);
    if (*send_rc == 0) {
        assert_int_equal(fs_write_all(qemu_out[0], stream, STREAM_BYTES / 2), 0);
        /* The switchover: what QEMU wrote so far, then the disk. */
        *send_rc = migration_outgoing_send_disk(out, d.delta, d.sha, &e);
        if (*send_rc == 0)
            assert_int_equal(fs_write_all(qemu_out[0], stream + STREAM_BYTES / 2,
                                          STREAM_BYTES - STREAM_BYTES / 2),
                             0);
        close(qemu_out[0]); /* QEMU's end: the stream is over */
        qemu_out[0] = -1;
        if (migration_outgoing_finish(out, *send_rc < 0, &e) < 0)
            *send_rc = -1;
    }
    if (*send_rc < 0)
        snprintf(why, whylen, "%.500s", e.message);
    struct airlock_error fe = { 0 };
    if (*send_rc < 0) {
        migration_incoming_cancel(in);
        *finish_rc = -1;
    } else {
        *finish_rc = migration_incoming_finish(in, &fe);
        if (*finish_rc < 0)
            snprintf(why, whylen, "%.500s", fe.message);
    }
    shutdown(qemu_in[1], SHUT_RDWR);
    pthread_join(t, NULL);
    if (*send_rc == 0 && *finish_rc == 0) {
        assert_int_equal(r.n, STREAM_BYTES);
        assert_memory_equal(r.got, stream, STREAM_BYTES);
        /* The target's disk is the source's now. */
        unsigned char a[8 * PG], b[8 * PG];
        assert_int_equal(pread(d.target, a, sizeof(a), 0), (ssize_t)sizeof(a));
        assert_int_equal(pread(d.source, b, sizeof(b), 0), (ssize_t)sizeof(b));
        assert_memory_equal(a, b, sizeof(a));
    }
    free(r.got);
    free(stream);
    for (int i = 0; i < 2; i++) {
        close(qemu_in[i]);
        if (qemu_out[i] >= 0)
            close(qemu_out[i]);
    }
    close_disks(&d);
}

static void over_tls_between_the_nodes_named(void **state)
{
    (void)state;
    int sent, finished;
    char why[512] = "";
    migrate_once(node_a, node_b, "node-a", "node-b", &sent, &finished, why, sizeof(why));
    if (sent < 0 || finished < 0)
        fail_msg("%s", why);
}

static void plain_with_its_token(void **state)
{
    (void)state;
    int sent, finished;
    char why[512] = "";
    migrate_once(NULL, NULL, "node-a", "node-b", &sent, &finished, why, sizeof(why));
    if (sent < 0 || finished < 0)
        fail_msg("%s", why);
}

/* The source checks the target is the node the scheduler named. */
static void a_target_of_another_name_is_refused(void **state)
{
    (void)state;
    int sent, finished;
    char why[512] = "";
    migrate_once(node_a, node_b, "node-a", "node-c", &sent, &finished, why, sizeof(why));
    assert_int_equal(sent, -1);
    assert_non_null(strstr(why, "vmhost:node-c"));
    assert_non_null(strstr(why, "vmhost:node-b"));
}

/* The target takes only the source it was told of: another node's
 * connection is dropped, and with none left the target gives up. */
static void a_source_of_another_name_is_dropped(void **state)
{
    (void)state;
    int qemu_in[2], disk = tmpfile_in_dir();
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, qemu_in), 0);
    struct migration_incoming *in;
    char addr[MIGRATION_ADDR_SIZE], token[MIGRATION_TOKEN_SIZE];
    struct airlock_error e = { 0 };
    assert_int_equal(migration_incoming_start("127.0.0.1", node_b, "node-x", qemu_in[1], disk,
                                              dir, 3000, &in, addr, token, &e),
                     0);
    int q[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, q), 0);
    struct migration_outgoing *out;
    /* The handshake completes on the source's side first; the target
     * drops it once it reads the source's name. */
    if (migration_outgoing_start(addr, node_a, "node-b", token, q[1], &out, &e) == 0) {
        close(q[0]);
        q[0] = -1;
        assert_int_equal(migration_outgoing_finish(out, false, &e), -1);
    }
    assert_int_equal(migration_incoming_finish(in, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_TIMEOUT);
    assert_non_null(strstr(e.message, "vmhost:node-x"));
    close(disk);
    for (int i = 0; i < 2; i++) {
        close(qemu_in[i]);
        if (q[i] >= 0)
            close(q[i]);
    }
}

static void a_wrong_token_is_dropped(void **state)
{
    (void)state;
    int qemu_in[2], disk = tmpfile_in_dir(), q[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, qemu_in), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, q), 0);
    struct migration_incoming *in;
    char addr[MIGRATION_ADDR_SIZE], token[MIGRATION_TOKEN_SIZE], wrong[MIGRATION_TOKEN_SIZE];
    struct airlock_error e = { 0 };
    assert_int_equal(migration_incoming_start("127.0.0.1", NULL, "node-a", qemu_in[1], disk, dir,
                                              3000, &in, addr, token, &e),
                     0);
    memcpy(wrong, token, sizeof(wrong));
    wrong[0] = wrong[0] == '0' ? '1' : '0';
    struct migration_outgoing *out;
    assert_int_equal(migration_outgoing_start(addr, NULL, "node-b", wrong, q[1], &out, &e), 0);
    close(q[0]);
    assert_int_equal(migration_outgoing_finish(out, false, &e), -1);
    assert_int_equal(migration_incoming_finish(in, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_TIMEOUT);
    close(disk);
    close(q[1]);
    close(qemu_in[0]);
    close(qemu_in[1]);
}

int main(void)
{
    /* As vmhost's main: a refused source's SSL_write to a closed socket
     * is an error to handle, not a signal that ends the process. */
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(over_tls_between_the_nodes_named),
        cmocka_unit_test(plain_with_its_token),
        cmocka_unit_test(a_target_of_another_name_is_refused),
        cmocka_unit_test(a_source_of_another_name_is_dropped),
        cmocka_unit_test(a_wrong_token_is_dropped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
