/* common/volume_spec: volume and snapshot names, sizes, "vol@snap"
 * references, mount paths, a sandbox's mounts as a whole, the CLI's
 * --volume and a fork's clone names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "volume_spec.h"

static void names(void **state)
{
    (void)state;
    const char *good[] = { "a", "repo", "0", "a-b_c", "x123456789012345678901234567890123456789012345678901234567890ab" };
    const char *bad[] = { "", "-a", "_a", "Repo", "a.b", "a b", "a@b", "a/b", "é",
                          "x1234567890123456789012345678901234567890123456789012345678901abc" };
    for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
        assert_true(volume_name_valid(good[i]));
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_false(volume_name_valid(bad[i]));
    struct airlock_error e;
    assert_int_equal(volume_name_check("name", "Bad", &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_INVALID);
    assert_non_null(strstr(e.message, "name: \"Bad\" is not a name"));
    assert_int_equal(volume_name_check("name", "", &e), -1);
    assert_string_equal(e.message, "name: required");
}

static void sizes(void **state)
{
    (void)state;
    struct airlock_error e;
    assert_int_equal(volume_size_check("size_mb", 1, &e), 0);
    assert_int_equal(volume_size_check("size_mb", 1048576, &e), 0);
    assert_int_equal(volume_size_check("size_mb", 0, &e), -1);
    assert_string_equal(e.message, "size_mb: 0 is not in 1..1048576 (MiB)");
    assert_int_equal(volume_size_check("size_mb", 1048577, &e), -1);
}

static void refs(void **state)
{
    (void)state;
    struct volume_ref r;
    struct airlock_error e;
    assert_int_equal(volume_ref_parse("f", "repo", &r, &e), 0);
    assert_string_equal(r.volume, "repo");
    assert_string_equal(r.snapshot, "");
    assert_int_equal(volume_ref_parse("f", "repo@s1", &r, &e), 0);
    assert_string_equal(r.volume, "repo");
    assert_string_equal(r.snapshot, "s1");
    const char *bad[] = { "", "@s1", "repo@", "repo@s1@s2", "Repo@s1", "repo@S1", "re po" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_int_equal(volume_ref_parse("from_snapshot", bad[i], &r, &e), -1);
        assert_int_equal(e.class, AIRLOCK_ERR_INVALID);
        assert_non_null(strstr(e.message, "from_snapshot: "));
    }
}

static void paths(void **state)
{
    (void)state;
    struct airlock_error e;
    const char *good[] = { "/work", "/work/", "/home/user/repo", "/procfs", "/devices", "/a/.b" };
    for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
        assert_int_equal(volume_path_check("p", good[i], &e), 0);
    const char *bad[] = { "", "work", "/", "//", "/proc", "/proc/x", "/sys", "/sys/fs", "/dev",
                          "/dev/shm", "/a/../b", "/a/..", "/..", "/a/./b", "/a//b", "/." };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_int_equal(volume_path_check("volumes[0].path", bad[i], &e), -1);
        assert_non_null(strstr(e.message, "volumes[0].path: "));
    }
    assert_int_equal(volume_path_check("p", "/proc/1", &e), -1);
    assert_non_null(strstr(e.message, "system path"));
    char long_path[VOLUME_PATH_MAX + 2];
    memset(long_path, 'a', sizeof(long_path) - 1);
    long_path[0] = '/';
    long_path[sizeof(long_path) - 1] = '\0';
    assert_int_equal(volume_path_check("p", long_path, &e), -1);
}

static void mounts(void **state)
{
    (void)state;
    struct volume_ref r[VOLUME_MOUNTS_MAX];
    struct airlock_error e;
    struct volume_mount_spec ok[] = { { "repo", "/work", false },
                                      { "data@s1", "/data", true },
                                      { "cache", "/cache", true } };
    assert_int_equal(volume_mounts_check(ok, 3, r, &e), 0);
    assert_string_equal(r[1].volume, "data");
    assert_string_equal(r[1].snapshot, "s1");
    assert_int_equal(volume_mounts_check(ok, 0, r, &e), 0);

    struct volume_mount_spec five[] = { { "a", "/a", false }, { "b", "/b", false },
                                        { "c", "/c", false }, { "d", "/d", false },
                                        { "e", "/e", false } };
    assert_int_equal(volume_mounts_check(five, 5, r, &e), -1);
    assert_string_equal(e.message, "volumes: 5 given, at most 4");

    struct volume_mount_spec rw_snap[] = { { "repo@s1", "/work", false } };
    assert_int_equal(volume_mounts_check(rw_snap, 1, r, &e), -1);
    assert_non_null(strstr(e.message, "volumes[0].read_only: repo@s1 is a snapshot"));

    struct volume_mount_spec twice[] = { { "repo", "/a", false }, { "repo@s1", "/b", true } };
    assert_int_equal(volume_mounts_check(twice, 2, r, &e), -1);
    assert_string_equal(e.message, "volumes[1].name: volume repo is already volumes[0]");

    struct volume_mount_spec same_path[] = { { "a", "/w", false }, { "b", "/w/", false } };
    assert_int_equal(volume_mounts_check(same_path, 2, r, &e), -1);
    assert_non_null(strstr(e.message, "volumes[1].path: "));

    struct volume_mount_spec bad_path[] = { { "a", "/w", false }, { "b", "/sys", false } };
    assert_int_equal(volume_mounts_check(bad_path, 2, r, &e), -1);
    assert_non_null(strstr(e.message, "volumes[1].path: \"/sys\" is a system path"));

    struct volume_mount_spec bad_name[] = { { "A", "/w", false } };
    assert_int_equal(volume_mounts_check(bad_name, 1, r, &e), -1);
    assert_non_null(strstr(e.message, "volumes[0].name: "));
}

static void cli_form(void **state)
{
    (void)state;
    char buf[300];
    struct volume_mount_spec m;
    struct airlock_error e;
    assert_int_equal(volume_mount_parse("repo:/work", buf, sizeof(buf), &m, &e), 0);
    assert_string_equal(m.name, "repo");
    assert_string_equal(m.path, "/work");
    assert_false(m.read_only);
    assert_int_equal(volume_mount_parse("repo@s1:/data/x:ro", buf, sizeof(buf), &m, &e), 0);
    assert_string_equal(m.name, "repo@s1");
    assert_string_equal(m.path, "/data/x");
    assert_true(m.read_only);
    const char *bad[] = { "repo", ":/work", "repo:work", "repo:/work:rw", "repo:" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(volume_mount_parse(bad[i], buf, sizeof(buf), &m, &e), -1);
}

static void fork_names(void **state)
{
    (void)state;
    char out[VOLUME_NAME_MAX + 1];
    volume_fork_name("repo", "sb_0123456789abcdef0123", out, sizeof(out));
    assert_string_equal(out, "repo-sb_0123456789abcdef0123");
    assert_true(volume_name_valid(out));
    char long_name[VOLUME_NAME_MAX + 1];
    memset(long_name, 'v', VOLUME_NAME_MAX);
    long_name[VOLUME_NAME_MAX] = '\0';
    volume_fork_name(long_name, "sb_0123456789abcdef0123", out, sizeof(out));
    assert_int_equal(strlen(out), VOLUME_NAME_MAX);
    assert_non_null(strstr(out, "-sb_0123456789abcdef0123"));
    assert_true(volume_name_valid(out));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),  cmocka_unit_test(sizes),    cmocka_unit_test(refs),
        cmocka_unit_test(paths),  cmocka_unit_test(mounts),   cmocka_unit_test(cli_form),
        cmocka_unit_test(fork_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
