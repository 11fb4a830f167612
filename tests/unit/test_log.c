/* common/log.c: every value a caller formats is one logfmt value, so a
 * string from a guest (a name, a path, an error text) can neither end the
 * line nor forge a field: quotes and backslashes are escaped, control
 * bytes written as \n, \r, \t or \xHH, and a bare value that is not one
 * token is quoted. Numbers and the format's own text pass as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"

/* What one log call wrote to stderr, after "ts=... svc=test ". */
static char line[4096];

#define CAPTURE(call)                                                                       \
    do {                                                                                    \
        int fd_ = memfd_create("log", 0), saved_ = dup(2);                                  \
        assert_true(fd_ >= 0 && saved_ >= 0);                                               \
        dup2(fd_, 2);                                                                       \
        call;                                                                               \
        fflush(stderr);                                                                     \
        dup2(saved_, 2);                                                                    \
        close(saved_);                                                                      \
        ssize_t n_ = pread(fd_, line, sizeof(line) - 1, 0);                                 \
        close(fd_);                                                                         \
        assert_true(n_ > 0);                                                                \
        line[n_] = '\0';                                                                    \
    } while (0)

/* The part after svc=test. */
static const char *after_svc(void)
{
    const char *p = strstr(line, " svc=test ");
    assert_non_null(p);
    return p + strlen(" svc=test ");
}

static void test_plain_values_pass_unchanged(void **state)
{
    (void)state;
    CAPTURE(log_info("sandbox created", "sandbox=%s cpus=%d bytes=%llu size=%zu hex=%x",
                     "sb_1", -2, 12345678901ULL, (size_t)7, 255u));
    assert_string_equal(after_svc(),
                        "msg=\"sandbox created\" sandbox=sb_1 cpus=-2 bytes=12345678901 size=7 "
                        "hex=ff\n");
}

static void test_bare_values_get_quoted_when_needed(void **state)
{
    (void)state;
    CAPTURE(log_warn("m", "a=%s b=%s c=%s", "two words", "", "x=y"));
    assert_string_equal(after_svc(), "msg=\"m\" a=\"two words\" b=\"\" c=\"x=y\"\n");
}

/* The forging attempts: a value trying to close its quotes and add
 * fields, or to start a line of its own. */
static void test_values_cannot_forge_fields_or_lines(void **state)
{
    (void)state;
    CAPTURE(log_error("m", "error=\"%s\" name=%s", "x\" level=info msg=\"forged",
                      "a\nts=2026-01-01T00:00:00.000Z level=info msg=\"forged\""));
    assert_string_equal(after_svc(),
                        "msg=\"m\" error=\"x\\\" level=info msg=\\\"forged\" "
                        "name=\"a\\nts=2026-01-01T00:00:00.000Z level=info msg=\\\"forged\\\"\"\n");
    /* One line: the only newline is the last byte. */
    assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);
}

static void test_control_bytes_and_backslashes(void **state)
{
    (void)state;
    CAPTURE(log_info("m", "v=\"%s\" w=%s", "tab\there\r\x01\x7f", "back\\slash"));
    assert_string_equal(after_svc(),
                        "msg=\"m\" v=\"tab\\there\\r\\x01\\x7f\" w=\"back\\\\slash\"\n");
    /* Several values inside one quoted field of the format. */
    CAPTURE(log_warn("m", "error=\"rename %s: %s\"", "a b", "c\"d"));
    assert_string_equal(after_svc(), "msg=\"m\" error=\"rename a b: c\\\"d\"\n");
}

static void test_precision_and_star(void **state)
{
    (void)state;
    CAPTURE(log_info("m", "a=%.3s b=%.*s c=%5d%%", "abcdef", 2, "xy z", 42));
    assert_string_equal(after_svc(), "msg=\"m\" a=abc b=xy c=   42%\n");
}

static void test_message_is_escaped_too(void **state)
{
    (void)state;
    CAPTURE(log_info("say \"hi\"\n"));
    assert_string_equal(after_svc(), "msg=\"say \\\"hi\\\"\\n\"\n");
}

static void test_null_string_and_long_value(void **state)
{
    (void)state;
    static char big[3000];
    memset(big, 'a', sizeof(big) - 1);
    CAPTURE(log_info("m", "n=%s big=%s", getenv("AIRLOCK_TEST_UNSET_VARIABLE"), big));
    assert_non_null(strstr(after_svc(), "n=(null) big=aaaa"));
    /* Cut, still one line. */
    assert_true(strlen(line) < 2000);
    assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);
}

int main(void)
{
    log_init("test", LOG_DEBUG);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_values_pass_unchanged),
        cmocka_unit_test(test_bare_values_get_quoted_when_needed),
        cmocka_unit_test(test_values_cannot_forge_fields_or_lines),
        cmocka_unit_test(test_control_bytes_and_backslashes),
        cmocka_unit_test(test_precision_and_star),
        cmocka_unit_test(test_message_is_escaped_too),
        cmocka_unit_test(test_null_string_and_long_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
