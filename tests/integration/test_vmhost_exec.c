/* Exec through vmhost's gRPC API into a real QEMU microVM: output streams,
 * exit codes, env/cwd/user/stdin, timeouts, concurrency, PTY sessions,
 * background processes, and the errors bad input must produce. One VM is
 * shared by the tests of this program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "itest_group.h"

/* argv (with options o, may be NULL) in the group's sandbox; the call must
 * succeed. */
static void exec_ok(const char *const argv[], const struct itest_exec_options *o,
                    struct itest_exec_result *r)
{
    itest_exec(&itest_vh, itest_sandbox_id, argv, o, r);
    assert_int_equal(r->status, GRPC_STATUS_OK);
}

/* sh -c script in the group's sandbox; the call must succeed. */
static void sh_ok(const char *script, struct itest_exec_result *r)
{
    itest_sh(&itest_vh, itest_sandbox_id, script, r);
    assert_int_equal(r->status, GRPC_STATUS_OK);
}

/* Reads an exec event stream to its end, which must be OK: its output
 * into out (NUL-terminated; what does not fit is dropped) and the exit
 * code (-1: no exit event). */
static int read_to_exit(struct rpc_stream *s, char *out, size_t outlen)
{
    size_t out_len = 0;
    int exit_code = -1;
    out[0] = '\0';
    Airlock__Vmhost__V1__ExecEvent *ev;
    while (rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor,
                           (ProtobufCMessage **)&ev) == 1) {
        if (ev->event_case == AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT &&
            out_len + ev->output->data.len < outlen) {
            memcpy(out + out_len, ev->output->data.data, ev->output->data.len);
            out_len += ev->output->data.len;
            out[out_len] = '\0';
        } else if (ev->event_case == AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT) {
            exit_code = ev->exit->exit_code;
        }
        protobuf_c_message_free_unpacked(&ev->base, NULL);
    }
    assert_int_equal(rpc_stream_finish(s, NULL), GRPC_STATUS_OK);
    return exit_code;
}

static void test_echo(void **state)
{
    (void)state;
    struct itest_exec_result r;
    const char *argv[] = { "echo", "hello", "world", NULL };
    exec_ok(argv, NULL, &r);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal((char *)r.out, "hello world\n");
    assert_int_equal(r.err_len, 0);
    assert_non_null(r.exec_id);
    assert_true(r.pid > 1);
    itest_exec_result_free(&r);
}

static void test_exit_codes_and_signals(void **state)
{
    (void)state;
    struct itest_exec_result r;
    sh_ok("exit 3", &r);
    assert_int_equal(r.exit_code, 3);
    assert_int_equal(r.signal, 0);
    itest_exec_result_free(&r);

    sh_ok("kill -9 $$", &r);
    assert_int_equal(r.signal, 9);
    itest_exec_result_free(&r);
}

static void test_stderr_separated(void **state)
{
    (void)state;
    struct itest_exec_result r;
    sh_ok("echo out; echo err >&2; echo out2", &r);
    assert_string_equal((char *)r.out, "out\nout2\n");
    assert_string_equal((char *)r.err, "err\n");
    itest_exec_result_free(&r);
}

static void test_env_cwd_user(void **state)
{
    (void)state;
    struct itest_exec_result r;
    const char *env[] = { "AIRLOCK_TEST=hello env", "PATH=/usr/bin:/bin", NULL };
    struct itest_exec_options o = { .env = env, .cwd = "/tmp" };
    const char *argv[] = { "sh", "-c", "echo \"$AIRLOCK_TEST\"; pwd; echo $PATH", NULL };
    exec_ok(argv, &o, &r);
    assert_string_equal((char *)r.out, "hello env\n/tmp\n/usr/bin:/bin\n");
    itest_exec_result_free(&r);

    struct itest_exec_options u = { .user = "nobody" };
    const char *id_argv[] = { "id", "-u", NULL };
    exec_ok(id_argv, &u, &r);
    assert_string_equal((char *)r.out, "65534\n");
    itest_exec_result_free(&r);
}

static void test_stdin(void **state)
{
    (void)state;
    struct itest_exec_result r;
    const char input[] = "line one\nline two\n";
    struct itest_exec_options o = { .stdin_data = input, .stdin_len = strlen(input) };
    const char *argv[] = { "wc", "-l", NULL };
    exec_ok(argv, &o, &r);
    assert_string_equal((char *)r.out, "2\n");
    itest_exec_result_free(&r);

    /* More stdin than one flow-control window, echoed back whole. */
    size_t big = 3u << 20;
    char *data = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)('a' + i % 26);
    struct itest_exec_options ob = { .stdin_data = data, .stdin_len = big };
    const char *cat_argv[] = { "cat", NULL };
    exec_ok(cat_argv, &ob, &r);
    assert_int_equal(r.out_len, big);
    assert_memory_equal(r.out, data, big);
    itest_exec_result_free(&r);
    free(data);
}

static void test_timeout_kills_process_group(void **state)
{
    (void)state;
    struct itest_exec_result r;
    struct itest_exec_options o = { .timeout_ms = 700 };
    const char *argv[] = { "sh", "-c", "sleep 1000 & sleep 1001; echo never", NULL };
    exec_ok(argv, &o, &r);
    assert_true(r.timed_out);
    assert_int_equal(r.signal, 9);
    assert_null(strstr((char *)r.out, "never"));
    itest_exec_result_free(&r);

    /* The backgrounded grandchild was in the group and is gone too. */
    itest_sh(&itest_vh, itest_sandbox_id, "pgrep -f 'sleep 100[01]' | wc -l", &r);
    assert_string_equal((char *)r.out, "0\n");
    itest_exec_result_free(&r);
}

struct concurrent_exec {
    int index;
    struct itest_exec_result r;
};

static void *concurrent_exec_main(void *arg)
{
    struct concurrent_exec *c = arg;
    char script[128];
    snprintf(script, sizeof(script), "sleep 0.2; echo exec-%d; echo err-%d >&2", c->index,
             c->index);
    itest_sh(&itest_vh, itest_sandbox_id, script, &c->r);
    return NULL;
}

static void test_twenty_concurrent_execs(void **state)
{
    (void)state;
    enum { N = 20 };
    struct concurrent_exec c[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        c[i].index = i;
        pthread_create(&t[i], NULL, concurrent_exec_main, &c[i]);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < N; i++) {
        char want[32], want_err[32];
        snprintf(want, sizeof(want), "exec-%d\n", i);
        snprintf(want_err, sizeof(want_err), "err-%d\n", i);
        assert_int_equal(c[i].r.status, GRPC_STATUS_OK);
        assert_string_equal((char *)c[i].r.out, want);
        assert_string_equal((char *)c[i].r.err, want_err);
        assert_int_equal(c[i].r.exit_code, 0);
        itest_exec_result_free(&c[i].r);
    }
}

static void test_pty_reports_terminal_and_size(void **state)
{
    (void)state;
    struct itest_exec_result r;
    struct itest_exec_options o = { .pty = true, .rows = 40, .cols = 100 };
    const char *argv[] = { "sh", "-c", "tty; stty size; echo term=$TERM", NULL };
    exec_ok(argv, &o, &r);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr((char *)r.out, "/dev/pts/"));
    assert_non_null(strstr((char *)r.out, "40 100"));
    assert_non_null(strstr((char *)r.out, "term=xterm"));
    itest_exec_result_free(&r);
}

/* An interactive shell on a PTY driven through ExecInput: typed commands,
 * a resize, and exit. */
static void test_pty_interactive_session(void **state)
{
    (void)state;
    Airlock__Vmhost__V1__ExecRequest req = AIRLOCK__VMHOST__V1__EXEC_REQUEST__INIT;
    ProtobufCBinaryData argv[1] = { { 2, (uint8_t *)"sh" } };
    req.sandbox_id = itest_sandbox_id;
    req.n_argv = 1;
    req.argv = argv;
    req.pty = true;
    req.rows = 24;
    req.cols = 80;
    req.stdin_open = true;
    req.timeout_ms = 60000;
    struct rpc_stream *s =
        rpc_stream_open(itest_vh.ch, ITEST_METHOD("Exec"), ITEST_CALL_TIMEOUT_MS);
    assert_int_equal(rpc_stream_send(s, &req.base), 0);
    rpc_stream_close_send(s);

    Airlock__Vmhost__V1__ExecEvent *ev;
    assert_int_equal(rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor,
                                     (ProtobufCMessage **)&ev), 1);
    assert_int_equal(ev->event_case, AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_STARTED);
    char *exec_id = strdup(ev->started->exec_id);
    protobuf_c_message_free_unpacked(&ev->base, NULL);

    Airlock__Vmhost__V1__ExecInputRequest in = AIRLOCK__VMHOST__V1__EXEC_INPUT_REQUEST__INIT;
    in.sandbox_id = itest_sandbox_id;
    in.exec_id = exec_id;
    in.rows = 50;
    in.cols = 132;
    const char *typed = "stty size; echo sum=$((20+22)); exit 7\n";
    in.stdin.data = (uint8_t *)typed;
    in.stdin.len = strlen(typed);
    assert_int_equal(itest_call(&itest_vh, ITEST_METHOD("ExecInput"), &in.base,
                                &airlock__vmhost__v1__exec_input_response__descriptor, NULL),
                     GRPC_STATUS_OK);

    char out[65536];
    int exit_code = read_to_exit(s, out, sizeof(out));
    assert_non_null(strstr(out, "50 132"));
    assert_non_null(strstr(out, "sum=42"));
    assert_int_equal(exit_code, 7);

    /* The exec is over: input to it is refused clearly. */
    char *details = NULL;
    assert_int_equal(itest_call(&itest_vh, ITEST_METHOD("ExecInput"), &in.base,
                                &airlock__vmhost__v1__exec_input_response__descriptor, &details),
                     GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(details, exec_id));
    free(details);
    free(exec_id);
}

static void test_background_process(void **state)
{
    (void)state;
    Airlock__Vmhost__V1__ExecRequest req = AIRLOCK__VMHOST__V1__EXEC_REQUEST__INIT;
    const char *script = "echo started; read line; echo got:$line; sleep 0.3; echo done";
    ProtobufCBinaryData argv[3] = { { 2, (uint8_t *)"sh" }, { 2, (uint8_t *)"-c" },
                                    { strlen(script), (uint8_t *)script } };
    req.sandbox_id = itest_sandbox_id;
    req.n_argv = 3;
    req.argv = argv;
    req.stdin_open = true;
    Airlock__Guest__V1__ProcessInfo *info = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(itest_vh.ch, ITEST_METHOD("StartProcess"), &req.base,
                                    &airlock__guest__v1__process_info__descriptor,
                                    (ProtobufCMessage **)&info, &details, ITEST_CALL_TIMEOUT_MS);
    assert_int_equal(st, GRPC_STATUS_OK);
    int32_t pid = info->pid;
    assert_true(pid > 1);
    assert_true(info->running);
    protobuf_c_message_free_unpacked(&info->base, NULL);

    Airlock__Vmhost__V1__ListProcessesRequest lr = AIRLOCK__VMHOST__V1__LIST_PROCESSES_REQUEST__INIT;
    lr.sandbox_id = itest_sandbox_id;
    Airlock__Vmhost__V1__ListProcessesResponse *list = NULL;
    st = rpc_unary(itest_vh.ch, ITEST_METHOD("ListProcesses"), &lr.base,
                   &airlock__vmhost__v1__list_processes_response__descriptor,
                   (ProtobufCMessage **)&list, NULL, ITEST_CALL_TIMEOUT_MS);
    assert_int_equal(st, GRPC_STATUS_OK);
    bool listed = false;
    for (size_t i = 0; i < list->n_processes; i++)
        listed |= list->processes[i]->pid == pid && list->processes[i]->running;
    assert_true(listed);
    protobuf_c_message_free_unpacked(&list->base, NULL);

    Airlock__Vmhost__V1__ProcessStdinRequest in = AIRLOCK__VMHOST__V1__PROCESS_STDIN_REQUEST__INIT;
    in.sandbox_id = itest_sandbox_id;
    in.pid = pid;
    in.data.data = (uint8_t *)"ping\n";
    in.data.len = 5;
    assert_int_equal(itest_call(&itest_vh, ITEST_METHOD("WriteProcessStdin"), &in.base,
                                &airlock__vmhost__v1__empty__descriptor, NULL),
                     GRPC_STATUS_OK);

    /* Re-attach: the ring replays "started", then follows to the exit. */
    Airlock__Vmhost__V1__AttachProcessRequest ar = AIRLOCK__VMHOST__V1__ATTACH_PROCESS_REQUEST__INIT;
    ar.sandbox_id = itest_sandbox_id;
    ar.pid = pid;
    ar.follow = true;
    struct rpc_stream *s =
        rpc_stream_open(itest_vh.ch, ITEST_METHOD("AttachProcess"), ITEST_CALL_TIMEOUT_MS);
    rpc_stream_send(s, &ar.base);
    rpc_stream_close_send(s);
    char out[4096];
    int exit_code = read_to_exit(s, out, sizeof(out));
    assert_string_equal(out, "started\ngot:ping\ndone\n");
    assert_int_equal(exit_code, 0);

    /* A long-running one is stopped by SignalProcess. */
    ProtobufCBinaryData sleep_argv[2] = { { 5, (uint8_t *)"sleep" }, { 4, (uint8_t *)"1000" } };
    req.n_argv = 2;
    req.argv = sleep_argv;
    req.stdin_open = false;
    st = rpc_unary(itest_vh.ch, ITEST_METHOD("StartProcess"), &req.base,
                   &airlock__guest__v1__process_info__descriptor, (ProtobufCMessage **)&info, NULL,
                   ITEST_CALL_TIMEOUT_MS);
    assert_int_equal(st, GRPC_STATUS_OK);
    Airlock__Vmhost__V1__SignalProcessRequest sr = AIRLOCK__VMHOST__V1__SIGNAL_PROCESS_REQUEST__INIT;
    sr.sandbox_id = itest_sandbox_id;
    sr.pid = info->pid;
    sr.signal = 15;
    protobuf_c_message_free_unpacked(&info->base, NULL);
    assert_int_equal(itest_call(&itest_vh, ITEST_METHOD("SignalProcess"), &sr.base,
                                &airlock__vmhost__v1__empty__descriptor, NULL),
                     GRPC_STATUS_OK);
    struct itest_exec_result r;
    itest_sh(&itest_vh, itest_sandbox_id, "sleep 0.3; pgrep -x sleep | wc -l", &r);
    assert_string_equal((char *)r.out, "0\n");
    itest_exec_result_free(&r);
    free(details);
}

static void test_bad_input(void **state)
{
    (void)state;
    struct itest_exec_result r;
    const char *argv[] = { "true", NULL };

    itest_exec(&itest_vh, "sb_does_not_exist", argv, NULL, &r);
    assert_int_equal(r.status, GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(r.details, "sb_does_not_exist"));
    itest_exec_result_free(&r);

    const char *missing[] = { "no-such-program-xyz", "arg", NULL };
    itest_exec(&itest_vh, itest_sandbox_id, missing, NULL, &r);
    assert_int_equal(r.status, GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(r.details, "no-such-program-xyz"));
    assert_non_null(strstr(r.details, "not found"));
    itest_exec_result_free(&r);

    const char *empty_argv[] = { NULL };
    itest_exec(&itest_vh, itest_sandbox_id, empty_argv, NULL, &r);
    assert_int_equal(r.status, GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(r.details, "argv"));
    itest_exec_result_free(&r);

    const char *bad_env[] = { "=value", NULL };
    struct itest_exec_options o = { .env = bad_env };
    itest_exec(&itest_vh, itest_sandbox_id, argv, &o, &r);
    assert_int_equal(r.status, GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(r.details, "env"));
    itest_exec_result_free(&r);

    struct itest_exec_options cwd = { .cwd = "/no/such/dir" };
    itest_exec(&itest_vh, itest_sandbox_id, argv, &cwd, &r);
    assert_int_equal(r.status, GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(r.details, "/no/such/dir"));
    itest_exec_result_free(&r);

    struct itest_exec_options user = { .user = "no-such-user" };
    itest_exec(&itest_vh, itest_sandbox_id, argv, &user, &r);
    assert_int_equal(r.status, GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(r.details, "no-such-user"));
    itest_exec_result_free(&r);

    /* The sandbox still works after all of that. */
    itest_sh(&itest_vh, itest_sandbox_id, "echo still-fine", &r);
    assert_string_equal((char *)r.out, "still-fine\n");
    itest_exec_result_free(&r);
}

static void test_create_rejects_bad_parameters(void **state)
{
    (void)state;
    struct {
        const char *id, *tmpl;
        uint32_t vcpus, memory_mb;
        grpc_status_code want;
        const char *field;
    } cases[] = {
        { "Bad Id!", "", 0, 0, GRPC_STATUS_INVALID_ARGUMENT, "id" },
        { "", "no-such-template", 0, 0, GRPC_STATUS_NOT_FOUND, "no-such-template" },
        { "", "", 99, 0, GRPC_STATUS_INVALID_ARGUMENT, "vcpus" },
        { "", "", 0, 16, GRPC_STATUS_INVALID_ARGUMENT, "memory_mb" },
        { itest_sandbox_id, "", 0, 0, GRPC_STATUS_ALREADY_EXISTS, itest_sandbox_id },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        Airlock__Vmhost__V1__CreateSandboxRequest req =
            AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
        req.id = (char *)cases[i].id;
        req.template_ = (char *)cases[i].tmpl;
        req.vcpus = cases[i].vcpus;
        req.memory_mb = cases[i].memory_mb;
        ProtobufCMessage *resp = NULL;
        char *details = NULL;
        grpc_status_code st = rpc_unary(itest_vh.ch, ITEST_METHOD("CreateSandbox"), &req.base,
                                        &airlock__vmhost__v1__sandbox__descriptor, &resp, &details,
                                        ITEST_CALL_TIMEOUT_MS);
        assert_int_equal(st, cases[i].want);
        assert_null(resp);
        assert_non_null(details);
        assert_non_null(strstr(details, cases[i].field));
        free(details);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo),
        cmocka_unit_test(test_exit_codes_and_signals),
        cmocka_unit_test(test_stderr_separated),
        cmocka_unit_test(test_env_cwd_user),
        cmocka_unit_test(test_stdin),
        cmocka_unit_test(test_timeout_kills_process_group),
        cmocka_unit_test(test_twenty_concurrent_execs),
        cmocka_unit_test(test_pty_reports_terminal_and_size),
        cmocka_unit_test(test_pty_interactive_session),
        cmocka_unit_test(test_background_process),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_create_rejects_bad_parameters),
    };
    return cmocka_run_group_tests(tests, itest_group_setup_with_sandbox,
                                  itest_group_teardown_with_sandbox);
}
