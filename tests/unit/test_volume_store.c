/* vmhost's volume store (vmhost/volume_store.c) on a scratch directory
 * standing in for the node's store (no btrfs: reflinks fall back to
 * copies, which keeps every rule but the O(metadata) the VM test's btrfs
 * store has). Bad ids never become paths; a volume is made sparse and
 * formatted (ext4's magic at its place); made twice is EXISTS; snapshots
 * and clones are files of their own; a second holder is refused naming the
 * first, as is a delete while held; grows only grow; what cannot fit in
 * the store is CAPACITY; deletes take the snapshots along; no temporary
 * file stays behind; a volume moving between nodes is installed (or an
 * older copy replaced) and dropped (its snapshots kept). */
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

#include "fsutil.h"
#include "store.h"
#include "volume_store.h"

struct fixture {
    struct store store;
    struct volume_store *vs;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    snprintf(f->store.root, sizeof(f->store.root), "/tmp/volume-store-test-XXXXXX");
    if (!mkdtemp(f->store.root))
        return -1;
    char err[256];
    if (volume_store_open(&f->store, &f->vs, err, sizeof(err)) < 0)
        fail_msg("%s", err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    volume_store_free(f->vs);
    char err[256];
    fs_remove_tree(f->store.root, err, sizeof(err));
    free(f);
    return 0;
}

static void expect(int rc, const struct airlock_error *e, enum airlock_err class, const char *named)
{
    assert_int_equal(rc, -1);
    if (e->class != class || !strstr(e->message, named))
        fail_msg("want class %d naming \"%s\", got class %d: %s", class, named, e->class,
                 e->message);
}

static bool exists(const struct fixture *f, const char *rel)
{
    char path[PATH_MAX];
    assert_int_equal(fs_path(path, sizeof(path), "%s/volumes/%s", f->store.root, rel), 0);
    return access(path, F_OK) == 0;
}

static void test_make_and_get(void **state)
{
    struct fixture *f = *state;
    struct airlock_error e = { 0 };
    expect(volume_make(f->vs, "../x", 16, &e), &e, AIRLOCK_ERR_INVALID, "volume_id");
    expect(volume_make(f->vs, "Upper", 16, &e), &e, AIRLOCK_ERR_INVALID, "volume_id");
    expect(volume_make(f->vs, "v1", 0, &e), &e, AIRLOCK_ERR_INVALID, "size_mb");
    expect(volume_make(f->vs, "huge", VOLUME_MAX_SIZE_MB, &e), &e, AIRLOCK_ERR_CAPACITY, "huge");
    assert_false(exists(f, "huge"));
    assert_int_equal(volume_make(f->vs, "v1", 16, &e), 0);
    expect(volume_make(f->vs, "v1", 16, &e), &e, AIRLOCK_ERR_EXISTS, "v1");
    assert_false(exists(f, "v1/disk.img.tmp"));

    struct volume_info vi;
    assert_int_equal(volume_get(f->vs, "v1", &vi, &e), 0);
    assert_int_equal(vi.size_bytes, 16u << 20);
    assert_true(vi.used_bytes > 0 && vi.used_bytes < vi.size_bytes); /* sparse */
    assert_string_equal(vi.holder, "");
    assert_int_equal(vi.n_snapshots, 0);
    volume_info_free(&vi);
    /* ext4's superblock magic 0xEF53 at 1024 + 56. */
    char image[PATH_MAX];
    assert_int_equal(volume_image(f->vs, "v1", NULL, image, sizeof(image), &e), 0);
    int fd = open(image, O_RDONLY);
    unsigned char magic[2];
    assert_int_equal(pread(fd, magic, 2, 1024 + 56), 2);
    close(fd);
    assert_int_equal(magic[0], 0x53);
    assert_int_equal(magic[1], 0xef);
    expect(volume_get(f->vs, "nosuch", &vi, &e), &e, AIRLOCK_ERR_NOT_FOUND, "nosuch");
}

static void test_snapshot_clone_delete(void **state)
{
    struct fixture *f = *state;
    struct airlock_error e = { 0 };
    assert_int_equal(volume_make(f->vs, "v1", 8, &e), 0);
    expect(volume_snapshot(f->vs, "v1", "../s", &e), &e, AIRLOCK_ERR_INVALID, "snapshot_id");
    assert_int_equal(volume_snapshot(f->vs, "v1", "s1", &e), 0);
    expect(volume_snapshot(f->vs, "v1", "s1", &e), &e, AIRLOCK_ERR_EXISTS, "s1");
    expect(volume_clone(f->vs, "v1", "s9", "v2", &e), &e, AIRLOCK_ERR_NOT_FOUND, "s9");
    assert_false(exists(f, "v2"));
    assert_int_equal(volume_clone(f->vs, "v1", "s1", "v2", &e), 0);
    expect(volume_clone(f->vs, "v1", "s1", "v2", &e), &e, AIRLOCK_ERR_EXISTS, "v2");
    struct volume_info vi;
    assert_int_equal(volume_get(f->vs, "v1", &vi, &e), 0);
    assert_int_equal(vi.n_snapshots, 1);
    assert_string_equal(vi.snapshots[0], "s1");
    volume_info_free(&vi);

    char dst[PATH_MAX];
    assert_int_equal(fs_path(dst, sizeof(dst), "%s/private.img", f->store.root), 0);
    assert_int_equal(volume_private_copy(f->vs, "v1", "s1", dst, &e), 0);
    assert_int_equal(access(dst, F_OK), 0);

    assert_int_equal(volume_snapshot_delete(f->vs, "v1", "s1", &e), 0);
    expect(volume_snapshot_delete(f->vs, "v1", "s1", &e), &e, AIRLOCK_ERR_NOT_FOUND, "s1");
    assert_int_equal(volume_snapshot(f->vs, "v1", "s2", &e), 0);
    assert_int_equal(volume_delete(f->vs, "v1", &e), 0); /* s2 along */
    assert_false(exists(f, "v1"));
    assert_true(exists(f, "v2/disk.img")); /* a clone is its own */
    expect(volume_delete(f->vs, "v1", &e), &e, AIRLOCK_ERR_NOT_FOUND, "v1");
}

static void test_holds_and_grow(void **state)
{
    struct fixture *f = *state;
    struct airlock_error e = { 0 };
    expect(volume_hold(f->vs, "v1", "sb1", &e), &e, AIRLOCK_ERR_NOT_FOUND, "v1");
    assert_int_equal(volume_make(f->vs, "v1", 8, &e), 0);
    assert_int_equal(volume_hold(f->vs, "v1", "sb1", &e), 0);
    assert_int_equal(volume_hold(f->vs, "v1", "sb1", &e), 0); /* again: fine */
    expect(volume_hold(f->vs, "v1", "sb2", &e), &e, AIRLOCK_ERR_STATE, "sb1");
    expect(volume_delete(f->vs, "v1", &e), &e, AIRLOCK_ERR_STATE, "sb1");
    char holder[VOLUME_ID_SIZE];
    volume_holder(f->vs, "v1", holder);
    assert_string_equal(holder, "sb1");
    volume_release(f->vs, "v1", "sb2"); /* not its holder: nothing */
    volume_holder(f->vs, "v1", holder);
    assert_string_equal(holder, "sb1");

    uint64_t size = 0;
    expect(volume_grow(f->vs, "v1", 8, &size, &e), &e, AIRLOCK_ERR_INVALID, "only grows");
    expect(volume_grow(f->vs, "v1", VOLUME_MAX_SIZE_MB, &size, &e), &e, AIRLOCK_ERR_CAPACITY, "v1");
    assert_int_equal(volume_grow(f->vs, "v1", 32, &size, &e), 0);
    assert_int_equal(size, 32u << 20);

    volume_release(f->vs, "v1", "sb1");
    volume_holder(f->vs, "v1", holder);
    assert_string_equal(holder, "");
    assert_int_equal(volume_delete(f->vs, "v1", &e), 0);
}

/* A file of len bytes of c at path. */
static void write_file(const char *path, char c, size_t len)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (size_t i = 0; i < len; i++)
        fputc(c, fp);
    assert_int_equal(fclose(fp), 0);
}

/* The first byte of volume id's image. */
static int first_byte(struct fixture *f, const char *id)
{
    char path[PATH_MAX];
    struct airlock_error e = { 0 };
    assert_int_equal(volume_image(f->vs, id, NULL, path, sizeof(path), &e), 0);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    int c = fgetc(fp);
    fclose(fp);
    return c;
}

/* docs/volumes.md "Across nodes": a volume that came with a sandbox is
 * installed (made, or an older copy replaced; never under a holder); one
 * that left drops its image and keeps its snapshots, which still clone;
 * the volume's delete then takes the snapshots. */
static void test_install_and_drop(void **state)
{
    struct fixture *f = *state;
    struct airlock_error e = { 0 };
    char src[PATH_MAX];
    assert_int_equal(fs_path(src, sizeof(src), "%s/incoming.img", f->store.root), 0);
    write_file(src, 'a', 4096);
    expect(volume_install(f->vs, "../x", src, &e), &e, AIRLOCK_ERR_INVALID, "volume_id");
    assert_int_equal(volume_install(f->vs, "moved", src, &e), 0);
    assert_int_equal(first_byte(f, "moved"), 'a');
    write_file(src, 'b', 4096);
    assert_int_equal(volume_install(f->vs, "moved", src, &e), 0); /* newer: replaced */
    assert_int_equal(first_byte(f, "moved"), 'b');
    assert_int_equal(volume_hold(f->vs, "moved", "sb1", &e), 0);
    expect(volume_install(f->vs, "moved", src, &e), &e, AIRLOCK_ERR_STATE, "sb1");
    expect(volume_drop_image(f->vs, "moved", &e), &e, AIRLOCK_ERR_STATE, "sb1");
    volume_release(f->vs, "moved", "sb1");

    assert_int_equal(volume_snapshot(f->vs, "moved", "s1", &e), 0);
    assert_int_equal(volume_drop_image(f->vs, "moved", &e), 0);
    assert_false(exists(f, "moved/disk.img"));
    assert_true(exists(f, "moved/snapshots/s1.img"));
    struct volume_info vi;
    expect(volume_get(f->vs, "moved", &vi, &e), &e, AIRLOCK_ERR_NOT_FOUND, "moved");
    assert_int_equal(volume_clone(f->vs, "moved", "s1", "moved-clone", &e), 0);
    assert_int_equal(first_byte(f, "moved-clone"), 'b');
    assert_int_equal(volume_drop_image(f->vs, "moved", &e), 0); /* again: nothing to do */
    assert_int_equal(volume_delete(f->vs, "moved", &e), 0);
    assert_false(exists(f, "moved"));
    expect(volume_delete(f->vs, "moved", &e), &e, AIRLOCK_ERR_NOT_FOUND, "moved");

    /* Without snapshots nothing of it stays. */
    assert_int_equal(volume_drop_image(f->vs, "moved-clone", &e), 0);
    assert_false(exists(f, "moved-clone"));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_make_and_get),
        T(test_snapshot_clone_delete),
        T(test_holds_and_grow),
        T(test_install_and_drop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
