/* guestd exec over a socketpair: output, exit status, environment, cwd,
 * users, stdin, timeouts, errors before the program runs, cancel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include "test_guestd_client.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* kill(pid, 0) stops succeeding once the process is gone and reaped. */
static void assert_process_gone(pid_t pid)
{
    int64_t deadline = gd_now_ms() + 3000;
    while (kill(pid, 0) == 0 && gd_now_ms() < deadline)
        usleep(10000);
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static void test_echo_stdout(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("echo", "hello") }, &r);
    assert_true(r.pid > 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.signal, 0);
    assert_string_equal(r.out, "hello\n");
    assert_string_equal(r.errout, "");
    gd_exec_result_free(&r);
}

static void test_stderr_separate(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("sh", "-c", "echo out; echo err >&2") }, &r);
    assert_string_equal(r.out, "out\n");
    assert_string_equal(r.errout, "err\n");
    gd_exec_result_free(&r);
}

static void test_exit_code(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("sh", "-c", "exit 7") }, &r);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 7);
    assert_int_equal(r.signal, 0);
    assert_false(r.timed_out);
    gd_exec_result_free(&r);
}

static void test_killed_by_signal(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("sh", "-c", "kill -TERM $$") }, &r);
    assert_true(r.exited);
    assert_int_equal(r.signal, SIGTERM);
    gd_exec_result_free(&r);
}

static void test_env_defaults_and_overrides(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1,
           &(struct gd_exec_opts){ .argv = ARGV("sh", "-c", "echo \"$FOO|$LANG|$HOME|$USER|$PATH|${TERM-unset}\""),
                                   .env = ARGV("FOO=bar=baz", "LANG=en_US.UTF-8") },
           &r);
    assert_string_equal(r.out, "bar=baz|en_US.UTF-8|/root|root|"
                               "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin|unset\n");
    gd_exec_result_free(&r);
}

static void test_env_entry_without_equals(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("true"), .env = ARGV("NOEQUALS") }, &r);
    assert_int_equal(r.err, EINVAL);
    assert_int_equal(r.pid, 0);
    assert_non_null(strstr(r.msg, "NOEQUALS"));
    gd_exec_result_free(&r);
}

static void test_empty_argv(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = NULL }, &r);
    assert_int_equal(r.err, EINVAL);
    assert_string_equal(r.msg, "exec: argv is empty");
    gd_exec_result_free(&r);
}

static void test_cwd(void **state)
{
    struct gd *d = *state;
    struct gd_exec_result r;
    gd_run(d, 1, &(struct gd_exec_opts){ .argv = ARGV("pwd"), .cwd = d->tmpdir }, &r);
    char want[128];
    snprintf(want, sizeof(want), "%s\n", d->tmpdir);
    assert_string_equal(r.out, want);
    gd_exec_result_free(&r);
    /* Empty cwd: the user's home. */
    gd_run(d, 2, &(struct gd_exec_opts){ .argv = ARGV("pwd") }, &r);
    assert_string_equal(r.out, "/root\n");
    gd_exec_result_free(&r);
}

static void test_missing_cwd(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("pwd"), .cwd = "/no/such/dir" }, &r);
    assert_false(r.exited);
    assert_int_equal(r.err, ENOENT);
    assert_non_null(strstr(r.msg, "/no/such/dir"));
    assert_non_null(strstr(r.msg, "No such file or directory"));
    gd_exec_result_free(&r);
}

static void test_missing_binary(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("nope-no-such-program") }, &r);
    assert_false(r.exited);
    assert_int_equal(r.pid, 0);
    assert_int_equal(r.err, ENOENT);
    assert_string_equal(r.msg, "exec \"nope-no-such-program\": No such file or directory (not found in PATH)");
    gd_exec_result_free(&r);
}

static void test_not_executable(void **state)
{
    struct gd *d = *state;
    char path[128];
    snprintf(path, sizeof(path), "%s/script", d->tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\necho hi\n", f);
    fclose(f);
    chmod(path, 0644);
    struct gd_exec_result r;
    gd_run(d, 1, &(struct gd_exec_opts){ .argv = ARGV(path) }, &r);
    assert_int_equal(r.err, EACCES);
    assert_non_null(strstr(r.msg, "Permission denied"));
    gd_exec_result_free(&r);
}

static void test_user_nobody(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("sh", "-c", "echo $(id -u):$(id -g):$USER:$(pwd)"),
                                              .user = "nobody" }, &r);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "65534:65534:nobody:/\n");
    gd_exec_result_free(&r);
    gd_run(*state, 2, &(struct gd_exec_opts){ .argv = ARGV("id", "-u"), .user = "4321" }, &r);
    assert_string_equal(r.out, "4321\n");
    gd_exec_result_free(&r);
}

static void test_unknown_user(void **state)
{
    struct gd_exec_result r;
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("true"), .user = "no-such-user" }, &r);
    assert_int_equal(r.err, EINVAL);
    assert_string_equal(r.msg, "unknown user \"no-such-user\"");
    gd_exec_result_free(&r);
}

static void test_stdin_stream(void **state)
{
    struct gd *d = *state;
    gd_send_exec(d, 1, &(struct gd_exec_opts){ .argv = ARGV("cat"), .stdin_open = true });
    gd_send_data(d, 1, "abc", 3, false);
    gd_send_data(d, 1, "def\n", 4, false);
    gd_send_data(d, 1, NULL, 0, true);
    gd_expect_exit(d, 1, 0, "abcdef\n");
}

/* More stdin than one window: the sender must wait for WindowUpdates. */
static void test_stdin_large_flow_controlled(void **state)
{
    struct gd *d = *state;
    const size_t total = 3 * AIRLOCK_STREAM_WINDOW + 123;
    gd_send_exec(d, 1, &(struct gd_exec_opts){ .argv = ARGV("wc", "-c"), .stdin_open = true });
    static uint8_t chunk[AIRLOCK_CHUNK_MAX];
    memset(chunk, 'x', sizeof(chunk));
    uint64_t window = AIRLOCK_STREAM_WINDOW;
    size_t sent = 0;
    GuestFrame *started = gd_next(d, 1);
    assert_int_equal(started->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED);
    frame_free(started);
    while (sent < total) {
        size_t n = total - sent < sizeof(chunk) ? total - sent : sizeof(chunk);
        if (n > window)
            n = (size_t)window;
        if (n == 0) {
            GuestFrame *f = gd_next(d, 1);
            assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW);
            window += f->window->bytes;
            frame_free(f);
            continue;
        }
        gd_send_data(d, 1, chunk, n, false);
        sent += n;
        window -= n;
    }
    gd_send_data(d, 1, NULL, 0, true);
    char out[64] = "";
    for (;;) {
        GuestFrame *f = gd_next(d, 1);
        if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT)
            snprintf(out, sizeof(out), "%.*s", (int)f->output->data.len, f->output->data.data);
        bool end = f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT;
        frame_free(f);
        if (end)
            break;
    }
    char want[64];
    snprintf(want, sizeof(want), "%zu\n", total);
    assert_string_equal(out, want);
}

/* A host that ignores its stdin window gets an error, not a bigger queue. */
static void test_stdin_beyond_window_refused(void **state)
{
    struct gd *d = *state;
    gd_send_exec(d, 1, &(struct gd_exec_opts){ .argv = ARGV("sleep", "100"), .stdin_open = true });
    static uint8_t chunk[AIRLOCK_CHUNK_MAX];
    for (int i = 0; i < 8; i++) /* 512 KiB; sleep reads none of it */
        gd_send_data(d, 1, chunk, sizeof(chunk), false);
    struct gd_exec_result r;
    gd_collect(d, 1, &r);
    assert_true(r.pid > 0);
    assert_false(r.exited);
    assert_int_equal(r.err, EPROTO);
    assert_process_gone(r.pid);
    gd_exec_result_free(&r);
}

static void test_timeout_kills_process_group(void **state)
{
    struct gd_exec_result r;
    int64_t t0 = gd_now_ms();
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("sh", "-c", "sleep 100 & echo $!; wait"),
                                              .timeout_ms = 300 }, &r);
    assert_true(r.exited);
    assert_true(r.timed_out);
    assert_int_equal(r.signal, SIGKILL);
    assert_true(gd_now_ms() - t0 < 3000);
    pid_t grandchild = (pid_t)atoi(r.out);
    assert_true(grandchild > 0);
    assert_process_gone(grandchild);
    gd_exec_result_free(&r);
}

/* A descendant holding stdout open must not delay ExecExit for long. */
static void test_exit_with_descendant_holding_pipe(void **state)
{
    struct gd_exec_result r;
    int64_t t0 = gd_now_ms();
    gd_run(*state, 1, &(struct gd_exec_opts){ .argv = ARGV("sh", "-c", "sleep 30 & echo $!") }, &r);
    int64_t took = gd_now_ms() - t0;
    pid_t sleeper = (pid_t)atoi(r.out);
    if (sleeper > 0)
        kill(sleeper, SIGKILL);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    assert_true(sleeper > 0);
    assert_true(took < 2000);
    gd_exec_result_free(&r);
}

static void test_signal_on_exec_stream(void **state)
{
    struct gd *d = *state;
    gd_send_exec(d, 1, &(struct gd_exec_opts){ .argv = ARGV("sleep", "100") });
    GuestFrame *f = gd_next(d, 1);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED);
    frame_free(f);
    Airlock__Guest__V1__SignalRequest s = AIRLOCK__GUEST__V1__SIGNAL_REQUEST__INIT;
    s.signal = SIGINT;
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SIGNAL, &s);
    struct gd_exec_result r;
    gd_collect(d, 1, &r);
    assert_true(r.exited);
    assert_int_equal(r.signal, SIGINT);
    gd_exec_result_free(&r);
}

static void test_cancel_kills_and_silences(void **state)
{
    struct gd *d = *state;
    gd_send_exec(d, 1, &(struct gd_exec_opts){ .argv = ARGV("sleep", "100") });
    GuestFrame *f = gd_next(d, 1);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED);
    pid_t pid = f->exec_started->pid;
    frame_free(f);
    gd_send_cancel(d, 1);
    assert_process_gone(pid);
    gd_expect_health(d, 2); /* the daemon is fine */
    assert_null(gd_try_next(d, 1, 300));
}

static void test_concurrent_execs(void **state)
{
    struct gd *d = *state;
    enum { N = 20 };
    char args[N][16];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(args[i], sizeof(args[i]), "%u", i);
        gd_send_exec(d, 100 + i, &(struct gd_exec_opts){
            .argv = ARGV("sh", "-c", "sleep 0.2; echo $0", args[i]) });
    }
    for (uint32_t i = 0; i < N; i++) {
        char want[16];
        snprintf(want, sizeof(want), "%u\n", i);
        gd_expect_exit(d, 100 + i, 0, want);
    }
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, gd_setup, gd_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_echo_stdout),
        T(test_stderr_separate),
        T(test_exit_code),
        T(test_killed_by_signal),
        T(test_env_defaults_and_overrides),
        T(test_env_entry_without_equals),
        T(test_empty_argv),
        T(test_cwd),
        T(test_missing_cwd),
        T(test_missing_binary),
        T(test_not_executable),
        T(test_user_nobody),
        T(test_unknown_user),
        T(test_stdin_stream),
        T(test_stdin_large_flow_controlled),
        T(test_stdin_beyond_window_refused),
        T(test_timeout_kills_process_group),
        T(test_exit_with_descendant_holding_pipe),
        T(test_signal_on_exec_stream),
        T(test_cancel_kills_and_silences),
        T(test_concurrent_execs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
