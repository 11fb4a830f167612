/* common/internal_token: reading the shared internal token file. */
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
#include "internal_token.h"

#define TOKEN "k3Xv9QpL2mZr7TcW8yBn4HsJ6dFg1aEu0oRiPlMqNb"

static char dir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_internal_token.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/internal-token", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unsetenv(INTERNAL_TOKEN_ENV);
    return fs_remove_tree(dir, NULL, 0);
}

static void write_token_file(const char *content, mode_t mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(fs_write_all(fd, content, strlen(content)), 0);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

/* Loading must fail with a message that contains want and never the
 * file's content. */
static void assert_refused(const char *content, const char *want)
{
    char err[512] = "";
    char *token = internal_token_load(path, err, sizeof(err));
    assert_null(token);
    if (!strstr(err, want))
        fail_msg("error \"%s\" does not say \"%s\"", err, want);
    assert_non_null(strstr(err, path));
    if (content && *content)
        assert_null(strstr(err, content));
}

static void test_trailing_newline_dropped(void **state)
{
    (void)state;
    const char *forms[] = {TOKEN, TOKEN "\n", TOKEN "\r\n"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(*forms); i++) {
        write_token_file(forms[i], 0600);
        char err[512];
        char *token = internal_token_load(path, err, sizeof(err));
        assert_non_null(token);
        assert_string_equal(token, TOKEN);
        free(token);
    }
    write_token_file(TOKEN, 0400);
    char err[512];
    char *token = internal_token_load(path, err, sizeof(err));
    assert_non_null(token);
    free(token);
}

static void test_group_or_other_access_refused(void **state)
{
    (void)state;
    write_token_file(TOKEN "\n", 0640);
    assert_refused(TOKEN, "mode 0640");
    write_token_file(TOKEN "\n", 0604);
    assert_refused(TOKEN, "mode 0604");
}

static void test_empty_short_and_bad_tokens_refused(void **state)
{
    (void)state;
    write_token_file("", 0600);
    assert_refused(NULL, "is empty");
    write_token_file("\n", 0600);
    assert_refused(NULL, "is empty");
    write_token_file("0123456789abcdef0123456789abcde\n", 0600); /* 31 characters */
    assert_refused("0123456789abcdef0123456789abcde", "has 31 characters, at least 32");
    write_token_file(TOKEN " " TOKEN "\n", 0600);
    assert_refused(TOKEN, "not printable ASCII");
    write_token_file(TOKEN "\n\n", 0600); /* one newline is dropped, not two */
    assert_refused(TOKEN, "not printable ASCII");
    char big[INTERNAL_TOKEN_MAX_LEN + 8];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    write_token_file(big, 0600);
    assert_refused(NULL, "longer than");
}

static void test_missing_file_and_directory_refused(void **state)
{
    (void)state;
    unlink(path);
    assert_refused(NULL, "No such file");
    assert_int_equal(mkdir(path, 0700), 0);
    assert_refused(NULL, "not a regular file");
    rmdir(path);
}

static void test_configure_from_option_env_or_none(void **state)
{
    (void)state;
    char err[512];
    char *token = (char *)"stale";
    unsetenv(INTERNAL_TOKEN_ENV);
    assert_int_equal(internal_token_configure(NULL, &token, err, sizeof(err)), 0);
    assert_null(token);

    write_token_file(TOKEN "\n", 0600);
    setenv(INTERNAL_TOKEN_ENV, path, 1);
    assert_int_equal(internal_token_configure(NULL, &token, err, sizeof(err)), 0);
    assert_string_equal(token, TOKEN);
    free(token);

    /* The option wins over the environment. */
    char other[160];
    snprintf(other, sizeof(other), "%s/missing", dir);
    assert_int_equal(internal_token_configure(other, &token, err, sizeof(err)), -1);
    assert_null(token);
    assert_non_null(strstr(err, other));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_trailing_newline_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_or_other_access_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_short_and_bad_tokens_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file_and_directory_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_configure_from_option_env_or_none, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
