/* The image cache's bound (image_cache.h) on a temporary directory of
 * entries shaped like the real ones: which entries pruning keeps, that it
 * leaves held and foreign ones alone, and how a use is recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "image_cache.h"

#define BASE_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define BASE_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define BASE_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define NIMAGES 5

struct cache {
    char dir[64];
    char names[NIMAGES + 1][65]; /* names[i]: image i, last used i*100 s ago */
};

static void write_file(const struct cache *c, const char *rel, const char *text)
{
    char path[PATH_MAX], err[512];
    snprintf(path, sizeof(path), "%s/%s", c->dir, rel);
    assert_int_equal(fs_write_file_atomic(path, text, strlen(text), 0644, err, sizeof(err)), 0);
}

static void make_dir(const struct cache *c, const char *rel)
{
    char path[PATH_MAX], err[512];
    snprintf(path, sizeof(path), "%s/%s", c->dir, rel);
    assert_int_equal(fs_mkdir_p(path, 0755, err, sizeof(err)), 0);
}

static void set_last_use(const struct cache *c, const char *name, time_t ago)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s/manifest.json", c->dir, name);
    struct timespec t[2] = { { .tv_sec = time(NULL) - ago }, { .tv_sec = time(NULL) - ago } };
    assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static time_t last_use(const struct cache *c, const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s/manifest.json", c->dir, name);
    assert_int_equal(stat(path, &st), 0);
    return st.st_mtime;
}

/* An image entry as image.c leaves it (vmlinuz is a hard link in reality). */
static void make_image(const struct cache *c, const char *name, const char *base, time_t ago)
{
    char rel[128], manifest[256];
    make_dir(c, name);
    snprintf(rel, sizeof(rel), "%s/rootfs.ext4", name);
    write_file(c, rel, "not really ext4, but it takes a block on disk\n");
    snprintf(rel, sizeof(rel), "%s/initrd.img", name);
    write_file(c, rel, "initrd\n");
    snprintf(manifest, sizeof(manifest), "{\"format\": 1, \"inputs\": {\"base\": \"%s\"}}\n",
             base);
    snprintf(rel, sizeof(rel), "%s/manifest.json", name);
    write_file(c, rel, manifest);
    set_last_use(c, name, ago);
}

static void make_base(const struct cache *c, const char *hash)
{
    char rel[128];
    snprintf(rel, sizeof(rel), "base-%s/rootfs/etc", hash);
    make_dir(c, rel);
    snprintf(rel, sizeof(rel), "base-%s/rootfs/etc/hostname", hash);
    write_file(c, rel, "sandbox\n");
}

static bool exists(const struct cache *c, const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", c->dir, rel);
    return access(path, F_OK) == 0;
}

static bool base_exists(const struct cache *c, const char *hash)
{
    char rel[80];
    snprintf(rel, sizeof(rel), "base-%s", hash);
    return exists(c, rel);
}

/* Images 1..5 (1 most recently used); 1-3 on base A, 4-5 on base B; base C
 * unused; and things that are not entries. */
static int setup(void **state)
{
    struct cache *c = calloc(1, sizeof(*c));
    if (!c)
        return -1;
    snprintf(c->dir, sizeof(c->dir), "/tmp/airlock-imgcache-test.XXXXXX");
    if (!mkdtemp(c->dir))
        return -1;
    for (int i = 1; i <= NIMAGES; i++) {
        snprintf(c->names[i], sizeof(c->names[i]), "%064x", 0xa0 + i);
        make_image(c, c->names[i], i <= 3 ? BASE_A : BASE_B, (time_t)i * 100);
    }
    make_base(c, BASE_A);
    make_base(c, BASE_B);
    make_base(c, BASE_C);
    make_dir(c, "kernel-6.1.0-57-cloud-amd64_6.1.192-3");
    write_file(c, "kernel-6.1.0-57-cloud-amd64_6.1.192-3/vmlinuz", "kernel\n");
    make_dir(c, "apt");
    write_file(c, ".lock", "");
    write_file(c, "accel-probe-" BASE_C, "tcg\n");
    write_file(c, "notes.txt", "an operator's file\n");
    /* Named like an image but not shaped like one. */
    write_file(c, "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd", "a file\n");
    make_dir(c, "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
    make_dir(c, "base-not-a-hash");
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct cache *c = *state;
    fs_remove_tree(c->dir, NULL, 0);
    free(c);
    return 0;
}

static void assert_non_entries_kept(const struct cache *c)
{
    assert_true(exists(c, "kernel-6.1.0-57-cloud-amd64_6.1.192-3/vmlinuz"));
    assert_true(exists(c, "apt"));
    assert_true(exists(c, ".lock"));
    assert_true(exists(c, "accel-probe-" BASE_C));
    assert_true(exists(c, "notes.txt"));
    assert_true(exists(c, "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"));
    assert_true(exists(c, "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"));
    assert_true(exists(c, "base-not-a-hash"));
}

static void test_keeps_most_recently_used(void **state)
{
    struct cache *c = *state;
    struct image_cache_pruned p;
    image_cache_prune(c->dir, 2, c->names[1], &p);
    assert_true(exists(c, c->names[1]));
    assert_true(exists(c, c->names[2]));
    for (int i = 3; i <= NIMAGES; i++)
        assert_false(exists(c, c->names[i]));
    assert_int_equal(p.images, 3);
    assert_int_equal(p.busy, 0);
    assert_true(p.bytes > 0);
    /* Base B's images are gone, C never had one; A's remain. */
    assert_true(base_exists(c, BASE_A));
    assert_false(base_exists(c, BASE_B));
    assert_false(base_exists(c, BASE_C));
    assert_int_equal(p.bases, 2);
    assert_non_entries_kept(c);
    /* Nothing half-deleted is left under a temporary name. */
    char rel[128];
    snprintf(rel, sizeof(rel), "%s.tmp.pruned", c->names[3]);
    assert_false(exists(c, rel));
}

static void test_current_kept_even_if_oldest(void **state)
{
    struct cache *c = *state;
    struct image_cache_pruned p;
    image_cache_prune(c->dir, 2, c->names[NIMAGES], &p);
    assert_true(exists(c, c->names[1]));
    assert_true(exists(c, c->names[2]));
    assert_false(exists(c, c->names[3]));
    assert_false(exists(c, c->names[4]));
    assert_true(exists(c, c->names[NIMAGES]));
    assert_int_equal(p.images, 2);
    assert_true(base_exists(c, BASE_B)); /* the current image's */
}

static void test_busy_entry_skipped(void **state)
{
    struct cache *c = *state;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", c->dir, c->names[4]);
    int reader = open(path, O_RDONLY | O_DIRECTORY);
    assert_true(reader >= 0);
    assert_int_equal(flock(reader, LOCK_SH), 0);

    struct image_cache_pruned p;
    image_cache_prune(c->dir, 1, c->names[1], &p);
    assert_true(exists(c, c->names[1]));
    assert_true(exists(c, c->names[4]));
    char rel[128];
    snprintf(rel, sizeof(rel), "%s/rootfs.ext4", c->names[4]);
    assert_true(exists(c, rel));
    assert_false(exists(c, c->names[2]));
    assert_false(exists(c, c->names[3]));
    assert_false(exists(c, c->names[5]));
    assert_int_equal(p.images, 3);
    assert_int_equal(p.busy, 1);
    assert_true(base_exists(c, BASE_B)); /* the busy image's */

    /* Once the reader is done, the next prune deletes it. */
    close(reader);
    image_cache_prune(c->dir, 1, c->names[1], &p);
    assert_false(exists(c, c->names[4]));
    assert_int_equal(p.images, 1);
    assert_false(base_exists(c, BASE_B));
}

static void test_keep_zero_keeps_all(void **state)
{
    struct cache *c = *state;
    struct image_cache_pruned p;
    image_cache_prune(c->dir, 0, c->names[1], &p);
    for (int i = 1; i <= NIMAGES; i++)
        assert_true(exists(c, c->names[i]));
    assert_true(base_exists(c, BASE_A));
    assert_true(base_exists(c, BASE_B));
    assert_true(base_exists(c, BASE_C));
    assert_int_equal(p.images + p.bases, 0);
    assert_non_entries_kept(c);
}

static void test_bases_kept_when_a_manifest_does_not_say(void **state)
{
    struct cache *c = *state;
    char rel[128];
    snprintf(rel, sizeof(rel), "%s/manifest.json", c->names[2]);
    write_file(c, rel, "{\"format\": 1}\n");
    set_last_use(c, c->names[2], 200);
    struct image_cache_pruned p;
    image_cache_prune(c->dir, 2, c->names[1], &p);
    assert_int_equal(p.images, 3);
    assert_int_equal(p.bases, 0);
    assert_true(base_exists(c, BASE_B));
    assert_true(base_exists(c, BASE_C));
}

static void test_hold_records_use_and_blocks_pruning(void **state)
{
    struct cache *c = *state;
    char path[PATH_MAX], err[512];
    snprintf(path, sizeof(path), "%s/%s", c->dir, c->names[NIMAGES]);
    time_t before = time(NULL);
    int hold = image_cache_hold(path, err, sizeof(err));
    assert_true(hold >= 0);
    assert_true(last_use(c, c->names[NIMAGES]) >= before);

    int other = open(path, O_RDONLY | O_DIRECTORY);
    assert_true(other >= 0);
    assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
    assert_int_equal(errno, EWOULDBLOCK);
    image_cache_release(hold);
    assert_int_equal(flock(other, LOCK_EX | LOCK_NB), 0);
    close(other);

    /* Its use made it the most recently used: keep 1 keeps it, not image 1. */
    image_cache_prune(c->dir, 1, NULL, NULL);
    assert_true(exists(c, c->names[NIMAGES]));
    assert_false(exists(c, c->names[1]));
}

static void test_hold_of_missing_entry_fails(void **state)
{
    struct cache *c = *state;
    char path[PATH_MAX], err[512] = "";
    snprintf(path, sizeof(path), "%s/%064x", c->dir, 0xfff);
    assert_int_equal(image_cache_hold(path, err, sizeof(err)), -1);
    assert_non_null(strstr(err, path));
}

static void test_parse_keep(void **state)
{
    (void)state;
    unsigned keep = 99;
    char err[256];
    assert_int_equal(image_cache_parse_keep("8", &keep, err, sizeof(err)), 0);
    assert_int_equal(keep, 8);
    assert_int_equal(image_cache_parse_keep("0", &keep, err, sizeof(err)), 0);
    assert_int_equal(keep, 0);
    static const char *const bad[] = { "", "abc", "-1", "+3", "8x", " 8", "99999999999999999999",
                                       "2000000" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        keep = 77;
        assert_int_equal(image_cache_parse_keep(bad[i], &keep, err, sizeof(err)), -1);
        assert_int_equal(keep, 77);
        assert_non_null(strstr(err, "--image-cache-keep"));
        char quoted[64];
        snprintf(quoted, sizeof(quoted), "\"%s\"", bad[i]);
        assert_non_null(strstr(err, quoted));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_keeps_most_recently_used, setup, teardown),
        cmocka_unit_test_setup_teardown(test_current_kept_even_if_oldest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_entry_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_zero_keeps_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bases_kept_when_a_manifest_does_not_say, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hold_records_use_and_blocks_pruning, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hold_of_missing_entry_fails, setup, teardown),
        cmocka_unit_test(test_parse_keep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
