/* Requests (requests.h): the handlers (request_handlers.h) in one table, so
 * guestd.c, which routes the frames here, calls none of them itself. */
#include "requests.h"

#include <errno.h>
#include <stdbool.h>

#include "guestd_state.h"
#include "log.h"
#include "request_handlers.h"
#include "send.h"

/* Each open stream holds a few fds and up to a window of buffers. */
#define GUESTD_MAX_STREAMS 1024

#define BODY(x) AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_##x
/* Every request body of protos/guest.proto, once: its handler, and
 * whether it is the sandbox's activity (what the idle controller counts;
 * the host's own housekeeping is not). */
static const struct request_kind {
    Airlock__Guest__V1__GuestFrame__BodyCase body;
    guestd_request_fn serve;
    bool activity;
} requests[] = {
    { BODY(EXEC), exec_request, true },
    { BODY(SIGNAL), process_signal_request, true },
    { BODY(PROCESS_LIST_REQUEST), process_list_request, true },
    { BODY(ATTACH), attach_request, true },
    { BODY(PROCESS_STDIN), process_stdin_request, true },
    { BODY(RESIZE), process_resize_request, true },
    { BODY(FILE_READ), file_read_request, true },
    { BODY(FILE_WRITE), file_write_request, true },
    { BODY(STAT), stat_request, true },
    { BODY(LIST), dir_list_request, true },
    { BODY(MKDIR), mkdir_request, true },
    { BODY(REMOVE), remove_request, true },
    { BODY(RENAME), rename_request, true },
    { BODY(CHMOD), chmod_request, true },
    { BODY(LIST_PORTS), list_ports_request, false },
    { BODY(METRICS_REQUEST), metrics_request, false },
    { BODY(WATCH), watch_request, true },
    { BODY(HEALTH_REQUEST), health_request, false },
    { BODY(SET_CLOCK), set_clock_request, false },
    { BODY(ADD_ENTROPY), add_entropy_request, false },
    { BODY(SET_HOSTNAME), set_hostname_request, false },
    { BODY(SESSION_INIT), session_init_request, false },
    { BODY(VOLUME), volume_request, false },
};
#undef BODY

void requests_serve(struct guestd *g, const GuestFrame *f)
{
    uint32_t id = f->stream_id;
    if (id == 0) {
        log_warn("request on stream 0 ignored", "body=%d", (int)f->body_case);
        return;
    }
    if (g->nstreams >= GUESTD_MAX_STREAMS) {
        guestd_send_result(g, id, EAGAIN, "too many open streams (%d)", GUESTD_MAX_STREAMS);
        return;
    }
    for (size_t i = 0; i < sizeof(requests) / sizeof(*requests); i++) {
        if (requests[i].body != f->body_case)
            continue;
        if (requests[i].activity)
            guestd_touch(g);
        requests[i].serve(g, id, f);
        return;
    }
    /* A body from a newer host, or one only the guest sends. */
    guestd_send_result(g, id, EINVAL, "unsupported request (frame body %d)", (int)f->body_case);
}
