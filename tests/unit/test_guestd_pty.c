/* guestd exec on a pseudo-terminal: controlling tty, window size, resize,
 * TERM, and EOF from the host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_guestd_client.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_tty_is_pts(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("tty"), .pty = true }, &r);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    assert_memory_equal(r.out, "/dev/pts/", 9);
    assert_string_equal(r.errout, ""); /* all output is on fd 1 */
    gd_exec_result_free(&r);
}

static void test_window_size_and_term(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("sh", "-c", "stty size; echo $TERM; echo err >&2"),
                                              .pty = true, .rows = 33, .cols = 101 }, &r);
    assert_string_equal(r.out, "33 101\r\nxterm-256color\r\nerr\r\n");
    gd_exec_result_free(&r);
}

static void test_resize(void **state)
{
    struct gd *d = *state;
    gd_send_exec(d, 1, &(struct gd_exec_opts){ .argv = ARGV("sh", "-c", "stty size; read x; stty size"),
                                               .pty = true, .rows = 24, .cols = 80 });
    /* Wait for the first size before resizing, so the order is certain. */
    char out[256] = "";
    size_t len = 0;
    while (!strstr(out, "24 80")) {
        GuestFrame *f = gd_next(d, 1);
        if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT) {
            len += (size_t)snprintf(out + len, sizeof(out) - len, "%.*s",
                                    (int)f->output->data.len, f->output->data.data);
            gd_send_window(d, 1, (uint32_t)f->output->data.len);
        }
        frame_free(f);
    }
    Airlock__Guest__V1__Resize rs = AIRLOCK__GUEST__V1__RESIZE__INIT;
    rs.rows = 50;
    rs.cols = 132;
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESIZE, &rs);
    gd_send_data(d, 1, "go\n", 3, false);
    struct gd_exec_result r;
    gd_collect(d, 1, &r);
    assert_true(r.exited);
    assert_non_null(strstr(r.out, "50 132\r\n"));
    gd_exec_result_free(&r);
}

static void test_eof_on_pty(void **state)
{
    struct gd *d = *state;
    gd_send_exec(d, 1, &(struct gd_exec_opts){ .argv = ARGV("cat"), .pty = true });
    gd_send_data(d, 1, "hi\n", 3, false);
    gd_send_data(d, 1, NULL, 0, true);
    /* The terminal echoes the input, then cat prints it. */
    gd_expect_exit(d, 1, 0, "hi\r\nhi\r\n");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, gd_setup, gd_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_tty_is_pts),
        T(test_window_size_and_term),
        T(test_resize),
        T(test_eof_on_pty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
