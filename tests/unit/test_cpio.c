/* cpio newc writer: archives GNU cpio lists and extracts, and errors that
 * are reported instead of producing a broken archive. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpio.h"
#include "fsutil.h"

struct fixture {
    char dir[64];
    char archive[128];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/test_cpio.XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->archive, sizeof(f->archive), "%s/a.cpio", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    fs_remove_tree(f->dir, NULL, 0);
    free(f);
    return 0;
}

static void test_archive_lists_and_extracts(void **state)
{
    struct fixture *f = *state;
    char src[160], err[256];
    snprintf(src, sizeof(src), "%s/host-file", f->dir);
    assert_int_equal(fs_write_file_atomic(src, "from the host\n", 14, 0644, err, sizeof(err)), 0);

    struct cpio_writer w;
    assert_int_equal(cpio_writer_open(&w, f->archive, err, sizeof(err)), 0);
    cpio_add_dir(&w, "bin", 0755);
    cpio_add_file(&w, "bin/hello", 0755, "hi!", 3); /* 3 bytes: exercises padding */
    cpio_add_symlink(&w, "bin/sh", "hello");
    cpio_add_dir(&w, "dev", 0755);
    cpio_add_chardev(&w, "dev/console", 0600, 5, 1);
    cpio_add_file_from(&w, "etc-file", 0644, src);
    cpio_add_file(&w, "empty", 0644, "", 0);
    assert_int_equal(cpio_writer_close(&w, err, sizeof(err)), 0);

    struct stat st;
    assert_int_equal(stat(f->archive, &st), 0);
    assert_int_equal(st.st_size % 4, 0);

    char *out = NULL;
    const char *list[] = { "cpio", "-itv", "-F", f->archive, NULL };
    assert_int_equal(run_command(list, NULL, &out, err, sizeof(err)), 0);
    assert_non_null(strstr(out, "drwxr-xr-x"));
    assert_non_null(strstr(out, "-rwxr-xr-x   1 root     root            3"));
    assert_non_null(strstr(out, "bin/sh -> hello"));
    assert_non_null(strstr(out, "crw-------   1 root     root       5,   1"));
    assert_non_null(strstr(out, "dev/console"));
    assert_non_null(strstr(out, "etc-file"));
    free(out);

    const char *extract[] = { "cpio", "-i", "--to-stdout", "-F", f->archive, "bin/hello",
                              "etc-file", NULL };
    assert_int_equal(run_command(extract, NULL, &out, err, sizeof(err)), 0);
    assert_non_null(strstr(out, "hi!from the host\n"));
    free(out);
}

static void test_errors_are_reported(void **state)
{
    struct fixture *f = *state;
    char err[256];
    struct cpio_writer w;
    assert_int_equal(cpio_writer_open(&w, f->archive, err, sizeof(err)), 0);
    cpio_add_file_from(&w, "missing", 0644, "/nonexistent/file");
    cpio_add_dir(&w, "later", 0755); /* ignored after the first error */
    assert_int_equal(cpio_writer_close(&w, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/nonexistent/file"));

    assert_int_equal(cpio_writer_open(&w, f->archive, err, sizeof(err)), 0);
    cpio_add_dir(&w, "/absolute", 0755);
    assert_int_equal(cpio_writer_close(&w, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "bad entry name"));

    assert_int_equal(cpio_writer_open(&w, "/nonexistent/dir/a.cpio", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/nonexistent/dir/a.cpio"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_archive_lists_and_extracts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_are_reported, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
