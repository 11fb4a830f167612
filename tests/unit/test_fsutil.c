/* common/fsutil: the file and process helpers other code builds on. */
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
#include "strbuf.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_fsutil.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return fs_remove_tree(dir, NULL, 0);
}

static void test_mkdir_write_read_remove(void **state)
{
    (void)state;
    char path[128], file[160], err[256];
    snprintf(path, sizeof(path), "%s/a/b/c", dir);
    assert_int_equal(fs_mkdir_p(path, 0755, err, sizeof(err)), 0);
    assert_int_equal(fs_mkdir_p(path, 0755, err, sizeof(err)), 0); /* exists: fine */

    snprintf(file, sizeof(file), "%s/f", path);
    assert_int_equal(fs_write_file_atomic(file, "one", 3, 0600, err, sizeof(err)), 0);
    assert_int_equal(fs_write_file_atomic(file, "two!", 4, 0600, err, sizeof(err)), 0);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(fs_read_file(file, 100, &data, &len, err, sizeof(err)), 0);
    assert_int_equal(len, 4);
    assert_string_equal(data, "two!");
    free(data);
    assert_int_equal(fs_read_file(file, 2, &data, &len, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "larger than"));
    assert_null(data);

    /* A file where a directory should go. */
    char below_file[200];
    snprintf(below_file, sizeof(below_file), "%s/x", file);
    assert_int_equal(fs_mkdir_p(below_file, 0755, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/f"));

    snprintf(path, sizeof(path), "%s/a", dir);
    char link[170];
    snprintf(link, sizeof(link), "%s/a/etc-link", dir);
    assert_int_equal(symlink("/etc", link), 0);
    assert_int_equal(fs_remove_tree(path, err, sizeof(err)), 0);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(access("/etc/hostname", F_OK), 0); /* not followed */
    assert_int_equal(fs_remove_tree(path, err, sizeof(err)), 0); /* missing: fine */
}

static void test_sparse_copy(void **state)
{
    (void)state;
    char src[128], dst[128], err[256];
    snprintf(src, sizeof(src), "%s/sparse", dir);
    snprintf(dst, sizeof(dst), "%s/copy", dir);
    int fd = open(src, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "head", 4, 0), 4);
    assert_int_equal(pwrite(fd, "tail", 4, 64 << 20), 4);
    close(fd);
    assert_int_equal(fs_copy_file(src, dst, 0640, err, sizeof(err)), 0);
    struct stat st;
    assert_int_equal(stat(dst, &st), 0);
    assert_int_equal(st.st_size, (64 << 20) + 4);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_true(st.st_blocks * 512 < (1 << 20)); /* the 64 MiB hole stayed a hole */
    char buf[4];
    fd = open(dst, O_RDONLY);
    assert_int_equal(pread(fd, buf, 4, 64 << 20), 4);
    assert_memory_equal(buf, "tail", 4);
    assert_int_equal(pread(fd, buf, 4, 0), 4);
    assert_memory_equal(buf, "head", 4);
    close(fd);
    assert_true(fs_disk_usage(dir) >= (unsigned long long)st.st_blocks * 512);
    assert_int_equal(fs_copy_file("/nonexistent", dst, 0640, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/nonexistent"));
}

static void test_run_command(void **state)
{
    (void)state;
    char *out = NULL, err[512];
    const char *echo[] = { "sh", "-c", "echo out; echo err >&2", NULL };
    assert_int_equal(run_command(echo, NULL, &out, err, sizeof(err)), 0);
    assert_string_equal(out, "out\nerr\n");
    free(out);

    const char *pwd[] = { "pwd", NULL };
    assert_int_equal(run_command(pwd, "/usr", &out, err, sizeof(err)), 0);
    assert_string_equal(out, "/usr\n");
    free(out);

    const char *fail[] = { "sh", "-c", "echo something broke; exit 3", NULL };
    assert_int_equal(run_command(fail, NULL, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "sh -c echo something broke; exit 3: exited with status 3"));
    assert_non_null(strstr(err, "something broke"));

    const char *killed[] = { "sh", "-c", "kill -9 $$", NULL };
    assert_int_equal(run_command(killed, NULL, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "signal 9"));

    const char *missing[] = { "/nonexistent/tool", NULL };
    assert_int_equal(run_command(missing, NULL, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "status 127"));
}

static void test_helpers(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(fs_human_size(512, buf, sizeof(buf)), "512 bytes");
    assert_string_equal(fs_human_size(9332326, buf, sizeof(buf)), "8.9 MiB");
    assert_string_equal(fs_human_size(285212672, buf, sizeof(buf)), "272 MiB");
    char small[8];
    assert_int_equal(fs_path(small, sizeof(small), "%s/%s", "abc", "defgh"), -1);
    assert_int_equal(fs_path(small, sizeof(small), "%s/%s", "ab", "cd"), 0);
    assert_string_equal(small, "ab/cd");

    struct strbuf sb = { 0 };
    assert_string_equal(strbuf_str(&sb), "");
    for (int i = 0; i < 1000; i++)
        strbuf_appendf(&sb, "%d,", i);
    assert_false(strbuf_failed(&sb));
    assert_true(strncmp(strbuf_str(&sb), "0,1,2,", 6) == 0);
    strbuf_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mkdir_write_read_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sparse_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_helpers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
