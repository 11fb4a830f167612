/* vmhost/file_delta: a file rebuilt from its delta and base is byte for
 * byte the file; pages found anywhere in the base (a migration stream's)
 * and blocks at the same offset (a disk's) are copies, not literals;
 * holes stay holes; a corrupt, truncated or foreign delta, and a base too
 * short for it, are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_delta.h"

#define PG FILE_DELTA_PAGE

struct files {
    char dir[64];
    int base, target, delta, out;
};

static int open_in(const char *dir, const char *name)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    return fd;
}

static int setup(void **state)
{
    struct files *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/airlock-delta-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->base = open_in(f->dir, "base");
    f->target = open_in(f->dir, "target");
    f->delta = open_in(f->dir, "delta");
    f->out = open_in(f->dir, "out");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct files *f = *state;
    const char *names[] = { "base", "target", "delta", "out" };
    for (size_t i = 0; i < 4; i++) {
        char path[128];
        snprintf(path, sizeof(path), "%s/%s", f->dir, names[i]);
        unlink(path);
    }
    close(f->base);
    close(f->target);
    close(f->delta);
    close(f->out);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void fill_random(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (unsigned char)(seed >> 16);
    }
}

static void pwrite_all(int fd, const void *p, size_t n, off_t at)
{
    assert_int_equal(pwrite(fd, p, n, at), (ssize_t)n);
}

static unsigned char *read_whole(int fd, size_t *n)
{
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    *n = (size_t)st.st_size;
    unsigned char *p = malloc(*n + 1);
    assert_int_equal(pread(fd, p, *n, 0), (ssize_t)*n);
    return p;
}

/* Applies f->delta (from its start) against f->base into f->out. */
static int apply(struct files *f, const char *sha, struct file_delta_stats *st, char *err,
                 size_t errlen)
{
    assert_int_equal(ftruncate(f->out, 0), 0);
    assert_int_equal(lseek(f->delta, 0, SEEK_SET), 0);
    return file_delta_apply(f->delta, f->base, f->out, sha, st, err, errlen);
}

static void assert_same_files(int a, int b)
{
    size_t na, nb;
    unsigned char *pa = read_whole(a, &na), *pb = read_whole(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(pa, pb, na);
    free(pa);
    free(pb);
}

/* A base of 64 random pages (page 10-19 a hole); a "migration stream" of
 * 8-byte headers each followed by a page: 40 of the base's pages in
 * another order, 3 pages of new bytes, then 1000 bytes of device state. */
static void stream_pages_are_copies(void **state)
{
    struct files *f = *state;
    unsigned char page[PG], header[8];
    for (unsigned i = 0; i < 64; i++) {
        if (i >= 10 && i < 20)
            continue;
        fill_random(page, PG, i + 1);
        pwrite_all(f->base, page, PG, (off_t)i * PG);
    }
    off_t at = 0;
    for (unsigned k = 0; k < 43; k++) {
        unsigned i = k < 40 ? (k * 7 + 25) % 44 + 20 : 1000 + k;
        if (i >= 64)
            i = 1000 + k;
        fill_random(header, sizeof(header), 7777 + k);
        fill_random(page, PG, i + 1);
        pwrite_all(f->target, header, sizeof(header), at);
        pwrite_all(f->target, page, PG, at + 8);
        at += 8 + PG;
    }
    unsigned char device[1000];
    fill_random(device, sizeof(device), 99);
    pwrite_all(f->target, device, sizeof(device), at);

    char sha[65], err[256];
    struct file_delta_stats st;
    assert_int_equal(file_delta_encode_pages(f->target, f->base, f->delta, sha, &st, err,
                                             sizeof(err)), 0);
    assert_int_equal(strlen(sha), 64);
    assert_int_equal(st.target_bytes, (uint64_t)at + sizeof(device));
    assert_int_equal(st.copied_bytes, 40ull * PG);
    assert_int_equal(st.literal_bytes, 43ull * 8 + 3ull * PG + sizeof(device));
    assert_true(st.delta_bytes < st.literal_bytes + 2048);

    struct file_delta_stats ast;
    assert_int_equal(apply(f, sha, &ast, err, sizeof(err)), 0);
    assert_int_equal(ast.copied_bytes, st.copied_bytes);
    assert_same_files(f->target, f->out);
}

/* A "disk": the base's 32 pages with pages 3 and 17 changed, 9 rewritten
 * with its own bytes, 20-23 zeroed, a tail past the base. */
static void disk_blocks_at_the_same_offset(void **state)
{
    struct files *f = *state;
    unsigned char page[PG];
    for (unsigned i = 0; i < 32; i++) {
        fill_random(page, PG, 500 + i);
        pwrite_all(f->base, page, PG, (off_t)i * PG);
        if (i == 3 || i == 17)
            fill_random(page, PG, 9000 + i);
        if (i >= 20 && i < 24)
            memset(page, 0, PG);
        pwrite_all(f->target, page, PG, (off_t)i * PG);
    }
    fill_random(page, 100, 4242);
    pwrite_all(f->target, page, 100, 32 * PG);

    char sha[65], err[256];
    struct file_delta_stats st;
    assert_int_equal(file_delta_encode_blocks(f->target, f->base, f->delta, sha, &st, err,
                                              sizeof(err)), 0);
    assert_int_equal(st.literal_bytes, 2ull * PG + 100);
    assert_int_equal(st.zero_bytes, 4ull * PG);
    assert_int_equal(st.copied_bytes, 26ull * PG);
    struct file_delta_stats ast;
    assert_int_equal(apply(f, sha, &ast, err, sizeof(err)), 0);
    assert_same_files(f->target, f->out);
}

/* A sparse target: its holes cost nothing and come back as holes. */
static void holes_stay_holes(void **state)
{
    struct files *f = *state;
    unsigned char page[PG];
    fill_random(page, PG, 1);
    pwrite_all(f->base, page, PG, 0);
    pwrite_all(f->target, page, PG, 0);
    fill_random(page, PG, 2);
    pwrite_all(f->target, page, PG, 1000 * PG);
    char sha[65], err[256];
    struct file_delta_stats st;
    assert_int_equal(file_delta_encode_blocks(f->target, f->base, f->delta, sha, &st, err,
                                              sizeof(err)), 0);
    assert_int_equal(st.zero_bytes, 999ull * PG);
    assert_true(st.delta_bytes < 2 * PG);
    assert_int_equal(apply(f, sha, &st, err, sizeof(err)), 0);
    assert_same_files(f->target, f->out);
    struct stat out;
    assert_int_equal(fstat(f->out, &out), 0);
    assert_true((uint64_t)out.st_blocks * 512 < 100ull * PG);
}

/* A live migration's last pass: the target's disk holds the first pass
 * (the base) and becomes the source's disk in place: changed pages
 * written, zeroed ones punched, the rest untouched. */
static void in_place_changes_only_what_differs(void **state)
{
    struct files *f = *state;
    unsigned char page[PG];
    for (unsigned i = 0; i < 16; i++) {
        fill_random(page, PG, 700 + i);
        pwrite_all(f->base, page, PG, (off_t)i * PG);
        pwrite_all(f->out, page, PG, (off_t)i * PG); /* the target's copy of the base */
        if (i == 5)
            fill_random(page, PG, 7777);
        if (i == 9)
            memset(page, 0, PG);
        pwrite_all(f->target, page, PG, (off_t)i * PG);
    }
    char sha[65], err[256];
    struct file_delta_stats st;
    assert_int_equal(file_delta_encode_blocks(f->target, f->base, f->delta, sha, &st, err,
                                              sizeof(err)), 0);
    assert_int_equal(st.literal_bytes, PG);
    assert_int_equal(lseek(f->delta, 0, SEEK_SET), 0);
    assert_int_equal(file_delta_apply_in_place(f->delta, f->out, sha, &st, err, sizeof(err)), 0);
    assert_same_files(f->target, f->out);
}

/* A pages delta copies from other offsets: in place it would read what
 * it already overwrote, so it is refused. */
static void in_place_refuses_moved_pages(void **state)
{
    struct files *f = *state;
    unsigned char page[PG];
    fill_random(page, PG, 1);
    pwrite_all(f->base, page, PG, 0);
    pwrite_all(f->out, page, PG, 0);
    fill_random(page, PG, 2);
    pwrite_all(f->base, page, PG, PG);
    pwrite_all(f->out, page, PG, PG);
    pwrite_all(f->target, page, PG, 0); /* page 1 of the base at offset 0 */
    fill_random(page, PG, 1);
    pwrite_all(f->target, page, PG, PG);
    char sha[65], err[256];
    struct file_delta_stats st;
    assert_int_equal(file_delta_encode_pages(f->target, f->base, f->delta, sha, &st, err,
                                             sizeof(err)), 0);
    assert_int_equal(lseek(f->delta, 0, SEEK_SET), 0);
    assert_int_equal(file_delta_apply_in_place(f->delta, f->out, sha, &st, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "moves"));
}

/* A delta of a small changed file, for the refusals below. */
static void small_delta(struct files *f, char sha[65])
{
    unsigned char page[PG];
    for (unsigned i = 0; i < 8; i++) {
        fill_random(page, PG, 70 + i);
        pwrite_all(f->base, page, PG, (off_t)i * PG);
        if (i == 5)
            fill_random(page, PG, 1234);
        pwrite_all(f->target, page, PG, (off_t)i * PG);
    }
    char err[256];
    struct file_delta_stats st;
    assert_int_equal(file_delta_encode_blocks(f->target, f->base, f->delta, sha, &st, err,
                                              sizeof(err)), 0);
}

static void a_corrupt_delta_is_refused(void **state)
{
    struct files *f = *state;
    char sha[65], err[256];
    small_delta(f, sha);
    unsigned char b;
    off_t at = 100; /* inside the literal page (after 16 + 17 + 9 bytes of records) */
    assert_int_equal(pread(f->delta, &b, 1, at), 1);
    b ^= 0x5a;
    pwrite_all(f->delta, &b, 1, at);
    struct file_delta_stats st;
    assert_int_equal(apply(f, sha, &st, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "sha256"));
}

static void a_truncated_delta_is_refused(void **state)
{
    struct files *f = *state;
    char sha[65], err[256];
    small_delta(f, sha);
    struct stat st;
    assert_int_equal(fstat(f->delta, &st), 0);
    assert_int_equal(ftruncate(f->delta, st.st_size - 3), 0);
    struct file_delta_stats ds;
    assert_int_equal(apply(f, sha, &ds, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "truncated"));
}

static void a_foreign_checksum_is_refused(void **state)
{
    struct files *f = *state;
    char sha[65], err[256];
    small_delta(f, sha);
    sha[0] = sha[0] == 'a' ? 'b' : 'a';
    struct file_delta_stats st;
    assert_int_equal(apply(f, sha, &st, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not the"));
}

static void a_short_base_is_refused(void **state)
{
    struct files *f = *state;
    char sha[65], err[256];
    small_delta(f, sha);
    assert_int_equal(ftruncate(f->base, 2 * PG), 0);
    struct file_delta_stats st;
    assert_int_equal(apply(f, sha, &st, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "past the end of its base"));
}

static void not_a_delta_is_refused(void **state)
{
    struct files *f = *state;
    pwrite_all(f->delta, "hello, world, not a delta at all", 32, 0);
    char err[256];
    struct file_delta_stats st;
    assert_int_equal(apply(f, "00", &st, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a delta"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(stream_pages_are_copies, setup, teardown),
        cmocka_unit_test_setup_teardown(disk_blocks_at_the_same_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(holes_stay_holes, setup, teardown),
        cmocka_unit_test_setup_teardown(in_place_changes_only_what_differs, setup, teardown),
        cmocka_unit_test_setup_teardown(in_place_refuses_moved_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(a_corrupt_delta_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_truncated_delta_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_foreign_checksum_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_short_base_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(not_a_delta_is_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
