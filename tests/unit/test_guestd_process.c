/* guestd background processes: start, list, attach (replay and follow),
 * stdin, signals, the output ring's bound, errors for unknown pids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_guestd_client.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Starts a background process; returns its pid. */
static int start_bg(struct gd *d, uint32_t id, const char *const *argv, bool stdin_open)
{
    gd_send_exec(d, id, &(struct gd_exec_opts){ .argv = argv, .background = true,
                                                 .stdin_open = stdin_open });
    GuestFrame *f = gd_next(d, id);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED);
    int pid = f->exec_started->pid;
    frame_free(f);
    assert_int_equal(gd_result(d, id, NULL, 0), 0);
    assert_true(pid > 0);
    return pid;
}

/* The ProcessList entry for pid (caller frees *frame), or NULL. */
static Airlock__Guest__V1__ProcessInfo *list_find(struct gd *d, uint32_t id, int pid, GuestFrame **frame)
{
    Airlock__Guest__V1__ProcessListRequest r = AIRLOCK__GUEST__V1__PROCESS_LIST_REQUEST__INIT;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_LIST_REQUEST, &r);
    *frame = gd_next(d, id);
    assert_int_equal((*frame)->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_LIST);
    for (size_t i = 0; i < (*frame)->process_list->n_processes; i++)
        if ((*frame)->process_list->processes[i]->pid == pid)
            return (*frame)->process_list->processes[i];
    return NULL;
}

/* Polls the list until pid has exited; returns its info's signal. */
static int wait_exited(struct gd *d, uint32_t first_id, int pid, int *exit_code)
{
    for (uint32_t id = first_id; id < first_id + 300; id++) {
        GuestFrame *f;
        Airlock__Guest__V1__ProcessInfo *pi = list_find(d, id, pid, &f);
        assert_non_null(pi);
        bool running = pi->running;
        int sig = pi->signal;
        if (exit_code)
            *exit_code = pi->exit_code;
        frame_free(f);
        if (!running)
            return sig;
        usleep(10000);
    }
    fail_msg("process %d did not exit", pid);
    return -1;
}

static void send_signal(struct gd *d, uint32_t id, int pid, int sig)
{
    Airlock__Guest__V1__SignalRequest s = AIRLOCK__GUEST__V1__SIGNAL_REQUEST__INIT;
    s.pid = pid;
    s.signal = sig;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SIGNAL, &s);
}

static void send_attach(struct gd *d, uint32_t id, int pid, bool follow)
{
    Airlock__Guest__V1__AttachRequest a = AIRLOCK__GUEST__V1__ATTACH_REQUEST__INIT;
    a.pid = pid;
    a.follow = follow;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_ATTACH, &a);
}

static int send_stdin(struct gd *d, uint32_t id, int pid, const void *data, size_t len, bool eof,
                      char *msg, size_t msglen)
{
    Airlock__Guest__V1__ProcessStdin s = AIRLOCK__GUEST__V1__PROCESS_STDIN__INIT;
    s.pid = pid;
    s.data.data = (uint8_t *)data;
    s.data.len = len;
    s.eof = eof;
    gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_STDIN, &s);
    return gd_result(d, id, msg, msglen);
}

static void test_start_list_signal(void **state)
{
    struct gd *d = *state;
    int pid = start_bg(d, 1, ARGV("sleep", "100"), false);
    GuestFrame *f;
    Airlock__Guest__V1__ProcessInfo *pi = list_find(d, 2, pid, &f);
    assert_non_null(pi);
    assert_true(pi->running);
    assert_int_equal(pi->n_argv, 2);
    assert_memory_equal(pi->argv[1].data, "100", 3);
    assert_true(pi->started_unix_ms > 0);
    frame_free(f);

    send_signal(d, 3, pid, SIGTERM);
    assert_int_equal(gd_result(d, 3, NULL, 0), 0);
    assert_int_equal(wait_exited(d, 10, pid, NULL), SIGTERM);
    /* Exited: signalling it again is ESRCH. */
    send_signal(d, 4, pid, SIGTERM);
    assert_int_equal(gd_result(d, 4, NULL, 0), ESRCH);
}

static void test_attach_replay(void **state)
{
    struct gd *d = *state;
    int pid = start_bg(d, 1, ARGV("sh", "-c", "echo out; echo err >&2; exec sleep 100"), false);
    struct gd_exec_result r = { 0 };
    for (uint32_t id = 10; id < 300; id++) { /* until both lines are in the ring */
        send_attach(d, id, pid, false);
        gd_collect(d, id, &r);
        assert_int_equal(r.err, 0);
        assert_false(r.exited);
        if (r.out_len + r.err_len == 8)
            break;
        gd_exec_result_free(&r);
        usleep(10000);
    }
    /* The ring keeps which stream each byte came from. */
    assert_string_equal(r.out, "out\n");
    assert_string_equal(r.errout, "err\n");
    gd_exec_result_free(&r);
    send_signal(d, 2, pid, SIGKILL);
    assert_int_equal(gd_result(d, 2, NULL, 0), 0);
}

static void test_attach_follow_with_stdin(void **state)
{
    struct gd *d = *state;
    int pid = start_bg(d, 1, ARGV("sh", "-c", "echo ready; read x; echo got $x; exit 3"), true);
    send_attach(d, 2, pid, true);
    /* Replay or live: "ready" comes first. */
    GuestFrame *f = gd_next(d, 2);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT);
    assert_int_equal(f->output->data.len, 6);
    assert_memory_equal(f->output->data.data, "ready\n", 6);
    frame_free(f);
    assert_int_equal(send_stdin(d, 3, pid, "zz\n", 3, true, NULL, 0), 0);
    gd_expect_exit(d, 2, 3, "got zz\n");
    /* Attaching to the exited process replays and ends at once. */
    send_attach(d, 4, pid, true);
    gd_expect_exit(d, 4, 3, "ready\ngot zz\n");
    /* Its stdin is gone now. */
    assert_int_equal(send_stdin(d, 5, pid, "x", 1, false, NULL, 0), EPIPE);
}

static void test_ring_keeps_last_mib(void **state)
{
    struct gd *d = *state;
    int pid = start_bg(d, 1, ARGV("sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a; echo END"), false);
    int code = -1;
    wait_exited(d, 10, pid, &code);
    assert_int_equal(code, 0);
    struct gd_exec_result r;
    send_attach(d, 2, pid, false);
    gd_collect(d, 2, &r);
    assert_int_equal(r.err, 0);
    assert_int_equal(r.out_len, 1 << 20);
    assert_string_equal(r.out + r.out_len - 5, "aEND\n");
    gd_exec_result_free(&r);
}

static void test_stdin_queue_bounded(void **state)
{
    struct gd *d = *state;
    /* sleep never reads stdin: the pipe fills, then the queue. */
    int pid = start_bg(d, 1, ARGV("sleep", "100"), true);
    static uint8_t chunk[600 << 10];
    char msg[256];
    assert_int_equal(send_stdin(d, 2, pid, chunk, sizeof(chunk), false, msg, sizeof(msg)), 0);
    assert_int_equal(send_stdin(d, 3, pid, chunk, sizeof(chunk), false, msg, sizeof(msg)), EAGAIN);
    assert_non_null(strstr(msg, "stdin queue full"));
    send_signal(d, 4, pid, SIGKILL);
    assert_int_equal(gd_result(d, 4, NULL, 0), 0);
}

static void test_unknown_pid(void **state)
{
    struct gd *d = *state;
    char msg[256];
    send_attach(d, 1, 999999, true);
    assert_int_equal(gd_result(d, 1, msg, sizeof(msg)), ESRCH);
    assert_string_equal(msg, "no process 999999");
    send_signal(d, 2, 999999, SIGTERM);
    assert_int_equal(gd_result(d, 2, msg, sizeof(msg)), ESRCH);
    assert_int_equal(send_stdin(d, 3, 999999, "x", 1, false, msg, sizeof(msg)), ESRCH);
    send_signal(d, 4, 1, 1000);
    assert_int_equal(gd_result(d, 4, msg, sizeof(msg)), EINVAL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, gd_setup, gd_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_start_list_signal),
        T(test_attach_replay),
        T(test_attach_follow_with_stdin),
        T(test_ring_keeps_last_mib),
        T(test_stdin_queue_bounded),
        T(test_unknown_pid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
