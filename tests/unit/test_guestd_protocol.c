/* guestd's protocol behaviour: flow control, hostile input, sessions,
 * unsupported requests, health, clock, entropy, hostname and session init. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "test_guestd_client.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void write_raw(struct gd *d, const void *buf, size_t len)
{
    assert_int_equal(write(d->fd, buf, len), (ssize_t)len);
    /* Wait until guestd has read it, so the next frame arrives apart. */
    int64_t deadline = gd_now_ms() + 5000;
    int queued = 1;
    while (ioctl(d->fd, SIOCOUTQ, &queued) == 0 && queued > 0 && gd_now_ms() < deadline)
        usleep(1000);
    assert_int_equal(queued, 0);
    usleep(20000);
}

static void send_hello(struct gd *d)
{
    Airlock__Guest__V1__Hello h = AIRLOCK__GUEST__V1__HELLO__INIT;
    h.protocol_version = AIRLOCK_GUEST_PROTOCOL_VERSION;
    gd_send_body(d, 0, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO, &h);
    GuestFrame *f = gd_next(d, 0);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO);
    assert_int_equal(f->hello->protocol_version, AIRLOCK_GUEST_PROTOCOL_VERSION);
    assert_string_equal(f->hello->guestd_version, GUESTD_VERSION);
    frame_free(f);
}

static void test_hello(void **state)
{
    send_hello(*state);
    gd_expect_health(*state, 1);
}

/* Without WindowUpdates guestd stops at one window; the writer blocks. */
static void test_flow_control(void **state)
{
    struct gd *d = *state;
    const size_t total = 8u << 20;
    gd_send_exec(d, 1, &(struct gd_exec_opts){ .argv = ARGV("head", "-c", "8M", "/dev/zero") });
    GuestFrame *f = gd_next(d, 1);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED);
    pid_t pid = f->exec_started->pid;
    frame_free(f);
    size_t got = 0;
    while ((f = gd_try_next(d, 1, 500))) {
        assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT);
        assert_true(f->output->data.len <= AIRLOCK_CHUNK_MAX);
        got += f->output->data.len;
        frame_free(f);
    }
    assert_int_equal(got, AIRLOCK_STREAM_WINDOW);
    assert_int_equal(kill(pid, 0), 0); /* blocked on its full pipe, not done */

    gd_send_window(d, 1, (uint32_t)got); /* from here on, credit as we read */
    for (;;) {
        f = gd_next(d, 1);
        if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT) {
            assert_int_equal(f->exec_exit->exit_code, 0);
            frame_free(f);
            break;
        }
        assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT);
        got += f->output->data.len;
        gd_send_window(d, 1, (uint32_t)f->output->data.len);
        frame_free(f);
    }
    assert_int_equal(got, total);
}

static void test_garbage_then_health(void **state)
{
    struct gd *d = *state;
    /* A sane length with a payload that is no GuestFrame. */
    static const uint8_t bad[] = { 0, 0, 0, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    write_raw(d, bad, sizeof(bad));
    gd_expect_health(d, 1);
    /* A length prefix far above AIRLOCK_FRAME_MAX. */
    static const uint8_t huge[] = { 0x7f, 0xff, 0xff, 0xff, 'j', 'u', 'n', 'k' };
    write_raw(d, huge, sizeof(huge));
    send_hello(d); /* the host starts over */
    gd_expect_health(d, 2);
}

static void test_unsupported_and_unknown_streams(void **state)
{
    struct gd *d = *state;
    char msg[256];
    /* A body only the guest sends. */
    Airlock__Guest__V1__ExecStarted es = AIRLOCK__GUEST__V1__EXEC_STARTED__INIT;
    gd_send_body(d, 5, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED, &es);
    assert_int_equal(gd_result(d, 5, msg, sizeof(msg)), EINVAL);
    assert_non_null(strstr(msg, "unsupported request"));
    /* No body at all (e.g. one this guestd does not know). */
    GuestFrame empty = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    empty.stream_id = 6;
    gd_send(d, &empty);
    assert_int_equal(gd_result(d, 6, msg, sizeof(msg)), EINVAL);
    /* Follow-up frames for streams that do not exist are ignored. */
    gd_send_data(d, 77, "x", 1, true);
    gd_send_window(d, 78, 1000);
    gd_send_cancel(d, 79);
    gd_expect_health(d, 7);
    assert_null(gd_try_next(d, 77, 100));
    assert_null(gd_try_next(d, 78, 0));
    assert_null(gd_try_next(d, 79, 0));
}

/* A new session kills the old session's foreground execs only. */
static void test_new_session(void **state)
{
    struct gd *d = *state;
    gd_send_exec(d, 1, &(struct gd_exec_opts){ .argv = ARGV("sleep", "100") });
    gd_send_exec(d, 2, &(struct gd_exec_opts){ .argv = ARGV("sleep", "100"), .background = true });
    GuestFrame *f = gd_next(d, 1);
    pid_t fg = f->exec_started->pid;
    frame_free(f);
    f = gd_next(d, 2);
    pid_t bg = f->exec_started->pid;
    frame_free(f);
    assert_int_equal(gd_result(d, 2, NULL, 0), 0);

    send_hello(d);
    int64_t deadline = gd_now_ms() + 3000;
    while (kill(fg, 0) == 0 && gd_now_ms() < deadline)
        usleep(10000);
    assert_int_equal(kill(fg, 0), -1);
    assert_int_equal(kill(bg, 0), 0);
    assert_null(gd_try_next(d, 1, 200)); /* the old stream stays silent */
}

static void test_health_tracks_activity(void **state)
{
    struct gd *d = *state;
    Airlock__Guest__V1__HealthRequest hr = AIRLOCK__GUEST__V1__HEALTH_REQUEST__INIT;
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH_REQUEST, &hr);
    GuestFrame *f = gd_next(d, 1);
    int64_t before = f->health->last_activity_unix_ms;
    assert_true(f->health->now_unix_ms >= before);
    frame_free(f);
    usleep(20000);
    /* The host's own housekeeping is not the sandbox's activity. */
    gd_send_body(d, 4, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH_REQUEST, &hr);
    f = gd_next(d, 4);
    assert_int_equal(f->health->last_activity_unix_ms, before);
    frame_free(f);
    struct gd_exec_result r;
    gd_run(d, 2, &(struct gd_exec_opts){ .argv = ARGV("true") }, &r);
    gd_exec_result_free(&r);
    gd_send_body(d, 3, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH_REQUEST, &hr);
    f = gd_next(d, 3);
    assert_true(f->health->last_activity_unix_ms >= before + 20);
    assert_true(f->health->uptime_ms >= 20);
    frame_free(f);
}

static void test_set_clock(void **state)
{
    struct gd *d = *state;
    Airlock__Guest__V1__SetClock c = AIRLOCK__GUEST__V1__SET_CLOCK__INIT;
    c.unix_ns = -5;
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SET_CLOCK, &c);
    assert_int_equal(gd_result(d, 1, NULL, 0), EINVAL);
    /* Setting it to now changes nothing on the test machine. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    c.unix_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    gd_send_body(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SET_CLOCK, &c);
    assert_int_equal(gd_result(d, 2, NULL, 0), 0);
}

static void test_add_entropy(void **state)
{
    struct gd *d = *state;
    Airlock__Guest__V1__AddEntropy e = AIRLOCK__GUEST__V1__ADD_ENTROPY__INIT;
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_ADD_ENTROPY, &e);
    assert_int_equal(gd_result(d, 1, NULL, 0), EINVAL);
    uint8_t seed[32];
    for (size_t i = 0; i < sizeof(seed); i++)
        seed[i] = (uint8_t)(i * 37 + 11);
    e.data = (ProtobufCBinaryData){ sizeof(seed), seed };
    gd_send_body(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_ADD_ENTROPY, &e);
    assert_int_equal(gd_result(d, 2, NULL, 0), 0);
}

static void test_set_hostname(void **state)
{
    struct gd *d = *state;
    Airlock__Guest__V1__SetHostname h = AIRLOCK__GUEST__V1__SET_HOSTNAME__INIT;
    h.hostname = "";
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SET_HOSTNAME, &h);
    assert_int_equal(gd_result(d, 1, NULL, 0), EINVAL);
    h.hostname = "bad name;rm";
    gd_send_body(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SET_HOSTNAME, &h);
    char msg[256];
    assert_int_equal(gd_result(d, 2, msg, sizeof(msg)), EINVAL);
    assert_non_null(strstr(msg, "bad name;rm"));
    /* Setting it to what it is changes nothing on the test machine. */
    char current[65] = "";
    assert_int_equal(gethostname(current, sizeof(current) - 1), 0);
    h.hostname = current;
    gd_send_body(d, 3, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SET_HOSTNAME, &h);
    assert_int_equal(gd_result(d, 3, NULL, 0), 0);
}

/* All steps in one request, answered by Health. The hostname is set to the
 * current one and the clock to now, so the test machine is unchanged. */
static void test_session_init(void **state)
{
    struct gd *d = *state;
    char current[65] = "";
    assert_int_equal(gethostname(current, sizeof(current) - 1), 0);
    uint8_t seed[32];
    for (size_t i = 0; i < sizeof(seed); i++)
        seed[i] = (uint8_t)(i * 53 + 7);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    Airlock__Guest__V1__SessionInit si = AIRLOCK__GUEST__V1__SESSION_INIT__INIT;
    si.unix_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    si.entropy = (ProtobufCBinaryData){ sizeof(seed), seed };
    si.hostname = current;
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SESSION_INIT, &si);
    GuestFrame *f = gd_next(d, 1);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH);
    assert_true(f->health->ready);
    frame_free(f);
}

/* A failed step answers Result naming it; a valid hostname after a bad one
 * shows the steps run in order and stop at the first failure. */
static void test_session_init_bad_input(void **state)
{
    struct gd *d = *state;
    char msg[256];
    uint8_t seed[16] = { 1 };
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    Airlock__Guest__V1__SessionInit si = AIRLOCK__GUEST__V1__SESSION_INIT__INIT;
    si.unix_ns = -1;
    si.entropy = (ProtobufCBinaryData){ sizeof(seed), seed };
    si.hostname = "bad name;rm";
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SESSION_INIT, &si);
    assert_int_equal(gd_result(d, 1, msg, sizeof(msg)), EINVAL);
    assert_non_null(strstr(msg, "set clock"));

    si.unix_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    si.entropy = (ProtobufCBinaryData){ 0, NULL };
    gd_send_body(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SESSION_INIT, &si);
    assert_int_equal(gd_result(d, 2, msg, sizeof(msg)), EINVAL);
    assert_non_null(strstr(msg, "add entropy"));

    si.entropy = (ProtobufCBinaryData){ sizeof(seed), seed };
    gd_send_body(d, 3, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SESSION_INIT, &si);
    assert_int_equal(gd_result(d, 3, msg, sizeof(msg)), EINVAL);
    assert_non_null(strstr(msg, "set hostname"));
    assert_non_null(strstr(msg, "bad name;rm"));
}

/* ListPortsRequest: a TCP listener this test opens on loopback shows up,
 * with the address it is bound to; a port nothing listens on does not. */
static void test_list_ports(void **state)
{
    struct gd *d = *state;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(addr);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(listen(fd, 1), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    unsigned port = ntohs(addr.sin_port);
    Airlock__Guest__V1__ListPortsRequest r = AIRLOCK__GUEST__V1__LIST_PORTS_REQUEST__INIT;
    gd_send_body(d, 1, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST_PORTS, &r);
    GuestFrame *f = gd_next(d, 1);
    assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LISTENING_PORTS);
    bool found = false;
    for (size_t i = 0; i < f->listening_ports->n_ports; i++) {
        const Airlock__Guest__V1__ListeningPort *p = f->listening_ports->ports[i];
        if (p->port == port) {
            found = true;
            assert_string_equal(p->address, "127.0.0.1");
        }
        if (i > 0) /* sorted by port */
            assert_true(f->listening_ports->ports[i - 1]->port <= p->port);
    }
    assert_true(found);
    frame_free(f);
    close(fd);
    gd_send_body(d, 2, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST_PORTS, &r);
    f = gd_next(d, 2);
    for (size_t i = 0; i < f->listening_ports->n_ports; i++)
        assert_int_not_equal(f->listening_ports->ports[i]->port, port);
    frame_free(f);
}

/* MetricsRequest: this machine's CPUs, memory and root filesystem, in
 * range; the second sample's CPU share is since the first. */
static void test_metrics(void **state)
{
    struct gd *d = *state;
    Airlock__Guest__V1__MetricsRequest r = AIRLOCK__GUEST__V1__METRICS_REQUEST__INIT;
    for (uint32_t id = 1; id <= 2; id++) {
        gd_send_body(d, id, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_METRICS_REQUEST, &r);
        GuestFrame *f = gd_next(d, id);
        assert_int_equal(f->body_case, AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_METRICS);
        const Airlock__Guest__V1__Metrics *m = f->metrics;
        assert_int_equal(m->cpu_count, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
        assert_true(m->cpu_used_pct >= 0 && m->cpu_used_pct <= 100);
        assert_true(m->mem_used > 0 && m->mem_used < m->mem_total);
        assert_true(m->mem_cache < m->mem_total);
        assert_true(m->disk_used > 0 && m->disk_used <= m->disk_total);
        assert_true(m->unix_ms > 0);
        frame_free(f);
    }
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, gd_setup, gd_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_hello),
        T(test_flow_control),
        T(test_garbage_then_health),
        T(test_unsupported_and_unknown_streams),
        T(test_new_session),
        T(test_health_tracks_activity),
        T(test_set_clock),
        T(test_add_entropy),
        T(test_set_hostname),
        T(test_session_init),
        T(test_session_init_bad_input),
        T(test_list_ports),
        T(test_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
