/* The daemon: owns the event loop, the host channel and the streams, and
 * routes every frame from the host to its open stream or, opening one, to
 * its request's handler (requests.h). */
#include "guestd.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channel.h"
#include "clock.h"
#include "guest_net.h"
#include "guestd_state.h"
#include "guestd_version.h"
#include "log.h"
#include "loop.h"
#include "process_table.h"
#include "reaper.h"
#include "request_handlers.h"
#include "requests.h"
#include "send.h"
#include "stream.h"
#include "trust_store.h"

static void guestd_hello(struct guestd *g, const GuestFrame *f)
{
    if (f->hello->protocol_version != AIRLOCK_GUEST_PROTOCOL_VERSION)
        log_warn("host speaks another protocol version", "host=%u guest=%u",
                 f->hello->protocol_version, AIRLOCK_GUEST_PROTOCOL_VERSION);
    if (g->nstreams)
        log_info("new session: ending the previous one's streams", "streams=%zu", g->nstreams);
    guestd_stream_end_all(g);
    /* A restored guest keeps the network it configured at boot; applying
     * it again at every restore would cost each sandbox thousands of cold
     * translations under TCG. Only a boot that failed to configure it is
     * retried here. */
    if (g->configure_network && !g->network_configured)
        g->network_configured = guest_net_configure() == 0;
    Airlock__Guest__V1__Hello h = AIRLOCK__GUEST__V1__HELLO__INIT;
    h.protocol_version = AIRLOCK_GUEST_PROTOCOL_VERSION;
    h.guestd_version = GUESTD_VERSION;
    GuestFrame out = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    out.stream_id = f->stream_id;
    out.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO;
    out.hello = &h;
    guestd_send(g, &out);
}

/* Frames that continue an open stream; for an unknown stream they are
 * ignored (it may have just ended). Returns false if f is not one. */
static bool guestd_stream_frame(struct guestd *g, const GuestFrame *f)
{
    struct stream *s = guestd_stream_find(g, f->stream_id);
    switch (f->body_case) {
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DATA:
        if (s && s->ops->on_data)
            s->ops->on_data(s, f->data);
        return true;
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_WINDOW:
        if (s && s->ops->on_window)
            s->ops->on_window(s, f->window->bytes);
        return true;
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESIZE:
        /* With a pid and no stream of its own it is a request. */
        if (!s && f->resize->pid)
            return false;
        if (s && s->ops->on_resize)
            s->ops->on_resize(s, f->resize->rows, f->resize->cols);
        return true;
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_CANCEL:
        if (s)
            guestd_stream_end(s);
        return true;
    case AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SIGNAL:
        /* On an exec stream it targets that exec; else it is a request. */
        if (!s)
            return false;
        if (s->ops->on_signal)
            s->ops->on_signal(s, f->signal->signal);
        return true;
    default:
        if (s) {
            log_warn("unexpected frame on an open stream", "stream=%u kind=%s body=%d",
                     f->stream_id, s->ops->kind, (int)f->body_case);
            return true;
        }
        return false;
    }
}

static void guestd_on_frame(void *ctx, const GuestFrame *f)
{
    struct guestd *g = ctx;
    if (f->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HELLO)
        guestd_hello(g, f);
    else if (!guestd_stream_frame(g, f))
        requests_serve(g, f);
}

static void guestd_on_hangup(void *ctx, bool final)
{
    struct guestd *g = ctx;
    guestd_stream_end_all(g);
    trust_store_keep_writable();
    if (final)
        loop_stop(g->loop);
}

static const struct channel_handler guestd_channel_handler = {
    .on_frame = guestd_on_frame,
    .on_hangup = guestd_on_hangup,
};

/* Library mode: SIGKILLed process groups still need reaping; wait a moment
 * so no zombie outlives guestd_run. */
static void guestd_reap_remaining(void)
{
    for (int i = 0; i < 100; i++) {
        pid_t pid;
        while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        if (pid < 0) /* ECHILD: none left */
            return;
        usleep(10 * 1000);
    }
}

int guestd_run(int channel_fd, const struct guestd_options *opts)
{
    int rc = -1;
    struct guestd g = { 0 };
    list_init(&g.streams);
    g.started_ms = clock_monotonic_ms();
    g.last_activity_unix_ms = unix_now_ms();
    g.configure_network = opts->configure_network;
    if (g.configure_network)
        g.network_configured = guest_net_configure() == 0;
    entropy_device_open();
    signal(SIGPIPE, SIG_IGN);
    /* Orphans of the programs we run come back to us, as they do to PID 1. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    if (!(g.loop = loop_new()) || !(g.reaper = reaper_new(g.loop)) ||
        !(g.processes = process_table_new(&g))) {
        log_error("cannot start", "error=\"out of memory\"");
        close(channel_fd);
        goto out;
    }
    g.channel = channel_new(g.loop, channel_fd, opts->reconnecting, &guestd_channel_handler, &g);
    if (!g.channel) {
        log_error("guestd: cannot use the channel fd", "fd=%d errno=%d", channel_fd, errno);
        close(channel_fd);
        goto out;
    }
    log_info("guestd serving", "version=%s reconnecting=%d", GUESTD_VERSION,
             (int)opts->reconnecting);
    rc = 0;
    while (!loop_stopped(g.loop)) {
        if (loop_run_once(g.loop) < 0) {
            log_error("poll failed", "errno=%d error=\"%s\"", errno, strerror(errno));
            rc = -1;
            break;
        }
    }
    guestd_stream_end_all(&g);
out:
    process_table_free(g.processes);
    channel_free(g.channel);
    reaper_free(g.reaper);
    loop_free(g.loop);
    guestd_reap_remaining();
    return rc;
}
