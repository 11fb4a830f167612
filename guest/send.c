/* Building and sending the guest's frames (send.h). */
#include "send.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include "channel.h"
#include "guestd_state.h"

int64_t unix_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void guestd_send(struct guestd *g, const GuestFrame *f)
{
    channel_send(g->channel, f);
}

void guestd_send_result(struct guestd *g, uint32_t stream_id, int err, const char *fmt, ...)
{
    char msg[1024] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
    }
    Airlock__Guest__V1__Result r = AIRLOCK__GUEST__V1__RESULT__INIT;
    r.errno_value = err;
    r.message = msg;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream_id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT;
    f.result = &r;
    guestd_send(g, &f);
}

void guestd_send_window(struct guestd *g, uint32_t stream_id, size_t bytes)
{
    Airlock__Guest__V1__WindowUpdate w = AIRLOCK__GUEST__V1__WINDOW_UPDATE__INIT;
    w.bytes = (uint32_t)bytes;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream_id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW;
    f.window = &w;
    guestd_send(g, &f);
}

void guestd_send_output(struct guestd *g, uint32_t stream_id, int fd, const void *data,
                        size_t len)
{
    Airlock__Guest__V1__Output o = AIRLOCK__GUEST__V1__OUTPUT__INIT;
    o.fd = (uint32_t)fd;
    o.data.data = (uint8_t *)data;
    o.data.len = len;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream_id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT;
    f.output = &o;
    guestd_send(g, &f);
}

void guestd_send_data(struct guestd *g, uint32_t stream_id, const void *data, size_t len,
                      bool eof)
{
    Airlock__Guest__V1__Data d = AIRLOCK__GUEST__V1__DATA__INIT;
    d.data.data = (uint8_t *)data;
    d.data.len = len;
    d.eof = eof;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream_id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DATA;
    f.data = &d;
    guestd_send(g, &f);
}

int32_t guestd_exit_code(int wait_status, int32_t *signal)
{
    *signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
    return *signal ? 128 + *signal : WEXITSTATUS(wait_status);
}

void guestd_send_exec_started(struct guestd *g, uint32_t stream_id, pid_t pid)
{
    Airlock__Guest__V1__ExecStarted st = AIRLOCK__GUEST__V1__EXEC_STARTED__INIT;
    st.pid = pid;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream_id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED;
    f.exec_started = &st;
    guestd_send(g, &f);
}

void guestd_send_exec_exit(struct guestd *g, uint32_t stream_id, int wait_status,
                           bool timed_out)
{
    Airlock__Guest__V1__ExecExit x = AIRLOCK__GUEST__V1__EXEC_EXIT__INIT;
    x.exit_code = guestd_exit_code(wait_status, &x.signal);
    x.timed_out = timed_out;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream_id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT;
    f.exec_exit = &x;
    guestd_send(g, &f);
}

void guestd_touch(struct guestd *g)
{
    g->last_activity_unix_ms = unix_now_ms();
}
